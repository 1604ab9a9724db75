// gate_rows.h's functions on the avx2 lane type, compiled with the avx2 flags of
// isa_library (../kernel_family.bzl). Reached only through GateRowsVariants().
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/kernels/rnn/gate_rows_simd.h"
#include "native/kernels/simd/lanes_avx2.h"

namespace onnx_light {
namespace rnn {

void SigmoidRowAvx2(float* x, int64_t n) { SigmoidRowSimd<simd::Lanes8>(x, n); }
void TanhRowAvx2(float* x, int64_t n) { TanhRowSimd<simd::Lanes8>(x, n); }
void StepProductAvx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                     int64_t ldc) {
  StepProductSimd<simd::Lanes8>(m, n, k, a, lda, packed, c, ldc);
}
void LstmRowAvx2(const LstmRowArgs& r) { LstmRowSimd<simd::Lanes8>(r); }
void GruLinearRowAvx2(const GruRowArgs& r) { GruLinearRowSimd<simd::Lanes8>(r); }
void GruResetRowAvx2(const GruRowArgs& r) { GruResetRowSimd<simd::Lanes8>(r); }
void GruHiddenRowAvx2(const GruRowArgs& r) { GruHiddenRowSimd<simd::Lanes8>(r); }

}  // namespace rnn
}  // namespace onnx_light

#endif  // __x86_64__
