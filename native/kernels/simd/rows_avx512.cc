// rows.h's primitives on the avx512 lane type, compiled with the avx512 flags of isa_library
// (../kernel_family.bzl). Reached only through FloatRowsVariants().
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include "native/kernels/simd/lanes_avx512.h"
#include "native/kernels/simd/rows_simd.h"

namespace onnx_light {
namespace simd {

float ExpShiftedSumAvx512(const float* x, float* y, int64_t n, float shift) {
  return ExpShiftedSumSimd<Lanes16>(x, y, n, shift);
}
void ScaleRowAvx512(float* x, int64_t n, float factor) { ScaleRowSimd<Lanes16>(x, n, factor); }
float RowMaxAvx512(const float* x, int64_t n) { return RowMaxSimd<Lanes16>(x, n); }
void SoftmaxRowAvx512(const float* x, float* y, int64_t n) { SoftmaxRowSimd<Lanes16>(x, y, n); }
void LogSoftmaxRowAvx512(const float* x, float* y, int64_t n) { LogSoftmaxRowSimd<Lanes16>(x, y, n); }
void MaxIntoAvx512(const float* x, float* m, int64_t n) { MaxIntoSimd<Lanes16>(x, m, n); }
void ExpShiftedAccumulateAvx512(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  ExpShiftedAccumulateSimd<Lanes16>(x, shift, y, sum, n);
}
float RowSumAvx512(const float* x, int64_t n) { return RowSumSimd<Lanes16>(x, n); }
float RowSquaredDeviationSumAvx512(const float* x, int64_t n, float mean) {
  return RowSquaredDeviationSumSimd<Lanes16>(x, n, mean);
}
void NormalizeRowAvx512(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                        const float* beta) {
  NormalizeRowSimd<Lanes16>(x, y, n, mean, inv, gamma, beta);
}

}  // namespace simd
}  // namespace onnx_light

#endif  // __x86_64__
