// gate_rows.h's functions on the avx512 lane type, compiled with the avx512 flags of
// isa_library (../kernel_family.bzl). Reached only through GateRowsVariants().
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include "native/kernels/rnn/gate_rows_simd.h"
#include "native/kernels/simd/lanes_avx512.h"

namespace onnx_light {
namespace rnn {

void SigmoidRowAvx512(float* x, int64_t n) { SigmoidRowSimd<simd::Lanes16>(x, n); }
void TanhRowAvx512(float* x, int64_t n) { TanhRowSimd<simd::Lanes16>(x, n); }
void StepProductAvx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                       int64_t ldc) {
  StepProductSimd<simd::Lanes16>(m, n, k, a, lda, packed, c, ldc);
}
void LstmRowAvx512(const LstmRowArgs& r) { LstmRowSimd<simd::Lanes16>(r); }
void GruLinearRowAvx512(const GruRowArgs& r) { GruLinearRowSimd<simd::Lanes16>(r); }
void GruResetRowAvx512(const GruRowArgs& r) { GruResetRowSimd<simd::Lanes16>(r); }
void GruHiddenRowAvx512(const GruRowArgs& r) { GruHiddenRowSimd<simd::Lanes16>(r); }

}  // namespace rnn
}  // namespace onnx_light

#endif  // __x86_64__
