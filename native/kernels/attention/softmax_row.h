// Row primitives of the attention softmax.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace attention {

// x[i] = exp(x[i] - shift) for i < n; returns the sum of the new values. The summation
// order depends only on n, so equal rows give bit-identical results on every call.
float ExpShiftedSum(float* x, int64_t n, float shift);
double ExpShiftedSum(double* x, int64_t n, double shift);

template <typename C>
C RowMax(const C* x, int64_t n) {
  C m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

template <typename C>
void ScaleRow(C* x, int64_t n, C factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

}  // namespace attention
}  // namespace onnx_light
