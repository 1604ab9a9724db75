// Depthwise (one input channel per output channel) convolution of one output plane:
// every output row is the sum over kernel taps in one fixed order, the interior columns
// (all taps inside the input) through a SIMD row kernel chosen at run time, the border
// columns through the same taps one by one.
#pragma once

#include "native/kernels/conv/geometry3d.h"

namespace onnx_light {
namespace conv {

// y (out plane) = bias + conv(x (one input plane), w (one kernel)).
void DepthwisePlane(const Geometry3d& g, const float* x, const float* w, float bias, float* y);

// The interior row kernel: for t < n,
//   out[t] = sum over taps r < count, kw < kernel_w of w[r][kw] * rows[r][t * stride + kw * dilation]
// (taps in order r, then kw). Exposed for the per-ISA implementations.
struct DepthwiseRow {
  const float* const* rows;   // input row pointers, already offset to the first output column
  const float* const* weights;  // kernel_w weights per tap row
  int count;
  int64_t kernel_w, dilation, stride;
};
using DepthwiseRowFn = void (*)(const DepthwiseRow& row, int64_t n, float* out);
void DepthwiseRowPortable(const DepthwiseRow& row, int64_t n, float* out);
DepthwiseRowFn DepthwiseRowAvx512();  // null when the CPU lacks AVX-512 or on other ISAs

}  // namespace conv
}  // namespace onnx_light
