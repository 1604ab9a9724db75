// rows.h's primitives on the neon lane type. Reached only through FloatRowsVariants().
#include <cstdint>
#include <cstring>

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/simd/lanes_neon.h"
#include "native/kernels/simd/rows_simd.h"

namespace onnx_light {
namespace simd {

float ExpShiftedSumNeon(const float* x, float* y, int64_t n, float shift) {
  return ExpShiftedSumSimd<Lanes4>(x, y, n, shift);
}
void ScaleRowNeon(float* x, int64_t n, float factor) { ScaleRowSimd<Lanes4>(x, n, factor); }
float RowMaxNeon(const float* x, int64_t n) { return RowMaxSimd<Lanes4>(x, n); }
void SoftmaxRowNeon(const float* x, float* y, int64_t n) { SoftmaxRowSimd<Lanes4>(x, y, n); }
void LogSoftmaxRowNeon(const float* x, float* y, int64_t n) { LogSoftmaxRowSimd<Lanes4>(x, y, n); }
void MaxIntoNeon(const float* x, float* m, int64_t n) { MaxIntoSimd<Lanes4>(x, m, n); }
void ExpShiftedAccumulateNeon(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  ExpShiftedAccumulateSimd<Lanes4>(x, shift, y, sum, n);
}
float RowSumNeon(const float* x, int64_t n) { return RowSumSimd<Lanes4>(x, n); }
float RowSquaredDeviationSumNeon(const float* x, int64_t n, float mean) {
  return RowSquaredDeviationSumSimd<Lanes4>(x, n, mean);
}
void NormalizeRowNeon(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                      const float* beta) {
  NormalizeRowSimd<Lanes4>(x, y, n, mean, inv, gamma, beta);
}

}  // namespace simd
}  // namespace onnx_light
#endif  // __aarch64__
