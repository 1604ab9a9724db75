// Row primitives over float rows, vectorised with math.h's exp on each ISA and chosen at
// run time (rows.cc): the softmax steps shared by the attention and softmax families, and
// the statistics and affine pass of the row normalizations. Each result depends only on
// its inputs and n (never on where a row or a lane sits in memory or in a block), so
// splitting rows or lanes across participants cannot change a bit.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace simd {

// Largest of x[0, n), n >= 1 (max is exact, so the lane split cannot change it). A NaN
// in x may or may not be returned: callers' next step (exp of x - max) turns it into
// NaN either way.
float RowMax(const float* x, int64_t n);
double RowMax(const double* x, int64_t n);

// y[i] = exp(x[i] - shift) for i < n (y may be x); returns the sum of the new values.
// The summation order depends only on n, so equal rows give bit-identical results.
float ExpShiftedSum(const float* x, float* y, int64_t n, float shift);
double ExpShiftedSum(const double* x, double* y, int64_t n, double shift);
template <typename C>
C ExpShiftedSum(C* x, int64_t n, C shift) {
  return ExpShiftedSum(x, x, n, shift);
}

// x[i] *= factor for i < n (one rounding each: the same values at every width).
void ScaleRow(float* x, int64_t n, float factor);
void ScaleRow(double* x, int64_t n, double factor);

// A whole contiguous row, n >= 1, in one call: y = softmax(x) = exp(x - max) / sum, or
// y = log_softmax(x) = x - (max + log(sum)), from RowMax and ExpShiftedSum (y may be x
// for SoftmaxRow only: LogSoftmaxRow reads x after using y as scratch).
void SoftmaxRow(const float* x, float* y, int64_t n);
void LogSoftmaxRow(const float* x, float* y, int64_t n);

// Lane-wise over n adjacent lanes (one step along the axis of a tile of strided rows):
// m[j] = max(m[j], x[j]) (NaN as RowMax), and y[j] = exp(x[j] - shift[j]), sum[j] += y[j]
// with shift[j] >= x[j] (the lane's maximum, as MaxInto leaves it; NaN aside).
void MaxInto(const float* x, float* m, int64_t n);
void ExpShiftedAccumulate(const float* x, const float* shift, float* y, float* sum, int64_t n);

// Sum of x[0, n) and sum of (x[i] - mean)^2, in an order that depends only on n.
float RowSum(const float* x, int64_t n);
float RowSquaredDeviationSum(const float* x, int64_t n, float mean);

// y[i] = (x[i] - mean) * inv * gamma[i] + beta[i] (beta may be null: no shift).
void NormalizeRow(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma, const float* beta);

}  // namespace simd
}  // namespace onnx_light
