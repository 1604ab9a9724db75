#include "native/kernels/conv/im2col.h"

#include <algorithm>
#include <cstring>

namespace onnx_light {
namespace conv {
namespace {

// Writes consecutive columns of one packed row (row kk of every panel), splitting runs at
// panel boundaries.
class PanelRowWriter {
 public:
  PanelRowWriter(float* dst, int64_t kk, int64_t kc, int nr) : dst_(dst), kk_(kk), kc_(kc), nr_(nr) {}
  // Columns [j, j + count) take src[0], src[stride], ...
  void Copy(int64_t j, int64_t count, const float* src, int64_t stride) const {
    while (count > 0) {
      const int64_t lane = j % nr_, len = std::min<int64_t>(count, nr_ - lane);
      float* d = Row(j) + lane;
      if (stride == 1) {
        std::memcpy(d, src, sizeof(float) * len);
      } else {
        for (int64_t t = 0; t < len; ++t) d[t] = src[t * stride];
      }
      src += len * stride;
      j += len;
      count -= len;
    }
  }
  void Zero(int64_t j, int64_t count) const {
    while (count > 0) {
      const int64_t lane = j % nr_, len = std::min<int64_t>(count, nr_ - lane);
      std::fill(Row(j) + lane, Row(j) + lane + len, 0.0f);
      j += len;
      count -= len;
    }
  }

 private:
  float* Row(int64_t j) const { return dst_ + ((j / nr_) * kc_ + kk_) * nr_; }
  float* dst_;
  int64_t kk_, kc_;
  int nr_;
};

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

}  // namespace

void Im2colSource::Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const {
  const Geometry3d& g = g_;
  const int64_t padded = (nc + nr - 1) / nr * nr;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const PanelRowWriter row(dst, kk, kc, nr);
    const int64_t k = k0 + kk;
    const int64_t channel = k / g.kernel_size, r = k % g.kernel_size;
    const int64_t kd = r / (g.kernel[1] * g.kernel[2]), kh = (r / g.kernel[2]) % g.kernel[1], kw = r % g.kernel[2];
    const int64_t zd = kd * g.dilation[0] - g.pad[0], zh = kh * g.dilation[1] - g.pad[1];
    const int64_t zw = kw * g.dilation[2] - g.pad[2];
    const float* plane = x_ + channel * g.in_size;
    // Output position of the first column, then runs along the innermost output axis.
    int64_t p = first_column_ + n0;
    int64_t ow = p % g.out[2], oh = (p / g.out[2]) % g.out[1], od = p / (g.out[2] * g.out[1]);
    for (int64_t j = 0; j < nc;) {
      const int64_t run = std::min(nc - j, g.out[2] - ow);
      const int64_t id = od * g.stride[0] + zd, ih = oh * g.stride[1] + zh;
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        row.Zero(j, run);
      } else {
        // Valid ow: 0 <= ow * s + zw < W.
        const int64_t s = g.stride[2];
        const int64_t lo = std::clamp(CeilDiv(-zw, s), ow, ow + run);
        const int64_t hi = std::clamp(CeilDiv(g.in[2] - zw, s), lo, ow + run);
        row.Zero(j, lo - ow);
        row.Copy(j + lo - ow, hi - lo, plane + (id * g.in[1] + ih) * g.in[2] + lo * s + zw, s);
        row.Zero(j + hi - ow, ow + run - hi);
      }
      j += run;
      ow = 0;
      if (++oh == g.out[1]) {
        oh = 0;
        ++od;
      }
    }
    row.Zero(nc, padded - nc);
  }
}

}  // namespace conv
}  // namespace onnx_light
