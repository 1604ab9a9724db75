// rows.h's primitives on the avx2 lane type, compiled with the avx2 flags of isa_library
// (../kernel_family.bzl). Reached only through FloatRowsVariants().
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/kernels/simd/lanes_avx2.h"
#include "native/kernels/simd/rows_simd.h"

namespace onnx_light {
namespace simd {

float ExpShiftedSumAvx2(const float* x, float* y, int64_t n, float shift) {
  return ExpShiftedSumSimd<Lanes8>(x, y, n, shift);
}
void ScaleRowAvx2(float* x, int64_t n, float factor) { ScaleRowSimd<Lanes8>(x, n, factor); }
float RowMaxAvx2(const float* x, int64_t n) { return RowMaxSimd<Lanes8>(x, n); }
void SoftmaxRowAvx2(const float* x, float* y, int64_t n) { SoftmaxRowSimd<Lanes8>(x, y, n); }
void LogSoftmaxRowAvx2(const float* x, float* y, int64_t n) { LogSoftmaxRowSimd<Lanes8>(x, y, n); }
void MaxIntoAvx2(const float* x, float* m, int64_t n) { MaxIntoSimd<Lanes8>(x, m, n); }
void ExpShiftedAccumulateAvx2(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  ExpShiftedAccumulateSimd<Lanes8>(x, shift, y, sum, n);
}
float RowSumAvx2(const float* x, int64_t n) { return RowSumSimd<Lanes8>(x, n); }
float RowSquaredDeviationSumAvx2(const float* x, int64_t n, float mean) {
  return RowSquaredDeviationSumSimd<Lanes8>(x, n, mean);
}
void NormalizeRowAvx2(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                      const float* beta) {
  NormalizeRowSimd<Lanes8>(x, y, n, mean, inv, gamma, beta);
}

}  // namespace simd
}  // namespace onnx_light

#endif  // __x86_64__
