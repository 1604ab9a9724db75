// Row primitives of the attention softmax.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace attention {

// x[i] = exp(x[i] - shift) for i < n; returns the sum of the new values. The summation
// order depends only on n, so equal rows give bit-identical results on every call.
float ExpShiftedSum(float* x, int64_t n, float shift);
double ExpShiftedSum(double* x, int64_t n, double shift);

// Largest of x[0, n), n >= 1 (max is exact, so the lane split cannot change it).
float RowMax(const float* x, int64_t n);
double RowMax(const double* x, int64_t n);

template <typename C>
void ScaleRow(C* x, int64_t n, C factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

}  // namespace attention
}  // namespace onnx_light
