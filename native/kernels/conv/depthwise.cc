#include "native/kernels/conv/depthwise.h"

#include <algorithm>

namespace onnx_light {
namespace conv {
namespace {

// Tap rows handled by the row kernel; larger kernels (rare) take the per-column path.
constexpr int kMaxTapRows = 64;

DepthwiseRowFn BestRowKernel() {
  static const DepthwiseRowFn fn = DepthwiseRowAvx512() != nullptr ? DepthwiseRowAvx512() : DepthwiseRowPortable;
  return fn;
}

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace

void DepthwiseRowPortable(const DepthwiseRow& row, int64_t n, float* out) {
  for (int64_t t = 0; t < n; ++t) {
    float acc = 0.0f;
    for (int r = 0; r < row.count; ++r) {
      const float* in = row.rows[r] + t * row.stride;
      for (int64_t kw = 0; kw < row.kernel_w; ++kw) acc += row.weights[r][kw] * in[kw * row.dilation];
    }
    out[t] = acc;
  }
}

void DepthwisePlane(const Geometry3d& g, const float* x, const float* w, float bias, float* y) {
  const int64_t s = g.stride[2], d = g.dilation[2], p = g.pad[2], kw_count = g.kernel[2];
  // Columns where every kw tap is inside the row: ow * s - p >= 0 and ow * s - p + (kw - 1) * d < W.
  const int64_t lo = std::min(g.out[2], std::max<int64_t>(0, CeilDiv(p, s)));
  const int64_t hi = std::max(lo, std::min(g.out[2], CeilDiv(g.in[2] + p - (kw_count - 1) * d, s)));
  const float* rows[kMaxTapRows];
  const float* weights[kMaxTapRows];
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      int count = 0;
      bool fits = true;
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = od * g.stride[0] + kd * g.dilation[0] - g.pad[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t ih = oh * g.stride[1] + kh * g.dilation[1] - g.pad[1];
          if (ih < 0 || ih >= g.in[1]) continue;
          if (count == kMaxTapRows) {
            fits = false;
            continue;
          }
          rows[count] = x + (id * g.in[1] + ih) * g.in[2];
          weights[count] = w + (kd * g.kernel[1] + kh) * kw_count;
          ++count;
        }
      }
      float* out = y + (od * g.out[1] + oh) * g.out[2];
      // Border (and, for oversized kernels, every) column: taps checked one by one.
      const auto column = [&](int64_t ow) {
        float acc = 0.0f;
        for (int r = 0; r < count; ++r) {
          for (int64_t kw = 0; kw < kw_count; ++kw) {
            const int64_t iw = ow * s - p + kw * d;
            if (iw >= 0 && iw < g.in[2]) acc += weights[r][kw] * rows[r][iw];
          }
        }
        out[ow] = acc + bias;
      };
      if (!fits) {
        // More tap rows than the row kernel takes: recompute them directly.
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          float acc = 0.0f;
          for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
            const int64_t id = od * g.stride[0] + kd * g.dilation[0] - g.pad[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
              const int64_t ih = oh * g.stride[1] + kh * g.dilation[1] - g.pad[1];
              if (ih < 0 || ih >= g.in[1]) continue;
              for (int64_t kw = 0; kw < kw_count; ++kw) {
                const int64_t iw = ow * s - p + kw * d;
                if (iw >= 0 && iw < g.in[2]) {
                  acc += w[(kd * g.kernel[1] + kh) * kw_count + kw] * x[(id * g.in[1] + ih) * g.in[2] + iw];
                }
              }
            }
          }
          out[ow] = acc + bias;
        }
        continue;
      }
      for (int64_t ow = 0; ow < lo; ++ow) column(ow);
      if (hi > lo) {
        const float* shifted[kMaxTapRows];
        for (int r = 0; r < count; ++r) shifted[r] = rows[r] + lo * s - p;
        BestRowKernel()(DepthwiseRow{shifted, weights, count, kw_count, d, s}, hi - lo, out + lo);
        if (bias != 0.0f) {
          for (int64_t ow = lo; ow < hi; ++ow) out[ow] += bias;
        }
      }
      for (int64_t ow = hi; ow < g.out[2]; ++ow) column(ow);
    }
  }
}

}  // namespace conv
}  // namespace onnx_light
