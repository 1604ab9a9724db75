#include "native/kernels/conv/im2col.h"

#include <algorithm>
#include <cstring>

namespace onnx_light {
namespace conv {
namespace {

// Columns gathered per pass: a row of B is built contiguously in a stack buffer of this
// many floats (a whole number of panels; every microkernel's NR is far below it), then
// copied panel by panel into place, so that neither pass divides per element or per
// short run.
constexpr int64_t kRowBuffer = 1024;

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

// d[t] = src[t * stride] for t < n (stride 1 and 2 get loops the compiler vectorizes).
void CopyStrided(const float* src, int64_t stride, int64_t n, float* d) {
  if (stride == 1) {
    std::memcpy(d, src, sizeof(float) * n);
  } else if (stride == 2) {
    for (int64_t t = 0; t < n; ++t) d[t] = src[2 * t];
  } else {
    for (int64_t t = 0; t < n; ++t) d[t] = src[t * stride];
  }
}

}  // namespace

void Im2colSource::Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const {
  const Geometry3d& g = g_;
  const int64_t chunk = kRowBuffer / nr * nr;
  alignas(64) float buffer[kRowBuffer];
  for (int64_t c0 = 0; c0 < nc; c0 += chunk) {
    const int64_t columns = std::min(chunk, nc - c0), panels = CeilDiv(columns, nr);
    // Output position of the chunk's first column.
    const int64_t p0 = first_column_ + n0 + c0;
    const int64_t ow0 = p0 % g.out[2], oh0 = (p0 / g.out[2]) % g.out[1], od0 = p0 / (g.out[2] * g.out[1]);
    for (int64_t kk = 0; kk < kc; ++kk) {
      const int64_t k = k0 + kk;
      const int64_t channel = k / g.kernel_size, r = k % g.kernel_size;
      const int64_t kd = r / (g.kernel[1] * g.kernel[2]), kh = (r / g.kernel[2]) % g.kernel[1], kw = r % g.kernel[2];
      const int64_t zd = kd * g.dilation[0] - g.pad[0], zh = kh * g.dilation[1] - g.pad[1];
      const int64_t zw = kw * g.dilation[2] - g.pad[2];
      const int64_t s = g.stride[2];
      // Valid ow of a full output row: 0 <= ow * s + zw < W.
      const int64_t valid_lo = std::max<int64_t>(0, CeilDiv(-zw, s));
      const int64_t valid_hi = std::max(valid_lo, CeilDiv(g.in[2] - zw, s));
      const float* plane = x_ + channel * g.in_size;
      // Gather the row: runs along the innermost output axis.
      int64_t ow = ow0, oh = oh0, od = od0;
      for (int64_t j = 0; j < columns;) {
        const int64_t run = std::min(columns - j, g.out[2] - ow);
        float* out = buffer + j;
        const int64_t id = od * g.stride[0] + zd, ih = oh * g.stride[1] + zh;
        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
          std::fill(out, out + run, 0.0f);
        } else {
          const int64_t lo = std::clamp(valid_lo, ow, ow + run), hi = std::clamp(valid_hi, lo, ow + run);
          std::fill(out, out + (lo - ow), 0.0f);
          CopyStrided(plane + (id * g.in[1] + ih) * g.in[2] + lo * s + zw, s, hi - lo, out + (lo - ow));
          std::fill(out + (hi - ow), out + run, 0.0f);
        }
        j += run;
        ow = 0;
        if (++oh == g.out[1]) {
          oh = 0;
          ++od;
        }
      }
      std::fill(buffer + columns, buffer + panels * nr, 0.0f);
      // Row kk of each panel.
      float* panel = dst + (c0 / nr * kc + kk) * nr;
      for (int64_t q = 0; q < panels; ++q) std::memcpy(panel + q * kc * nr, buffer + q * nr, sizeof(float) * nr);
    }
  }
}

}  // namespace conv
}  // namespace onnx_light
