// gate_rows.h's functions on the neon lane type. Reached only through GateRowsVariants().
#include <cstdint>

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/rnn/gate_rows_simd.h"
#include "native/kernels/simd/lanes_neon.h"

namespace onnx_light {
namespace rnn {

void SigmoidRowNeon(float* x, int64_t n) { SigmoidRowSimd<simd::Lanes4>(x, n); }
void TanhRowNeon(float* x, int64_t n) { TanhRowSimd<simd::Lanes4>(x, n); }
void StepProductNeon(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                     int64_t ldc) {
  StepProductSimd<simd::Lanes4>(m, n, k, a, lda, packed, c, ldc);
}
void LstmRowNeon(const LstmRowArgs& r) { LstmRowSimd<simd::Lanes4>(r); }
void GruLinearRowNeon(const GruRowArgs& r) { GruLinearRowSimd<simd::Lanes4>(r); }
void GruResetRowNeon(const GruRowArgs& r) { GruResetRowSimd<simd::Lanes4>(r); }
void GruHiddenRowNeon(const GruRowArgs& r) { GruHiddenRowSimd<simd::Lanes4>(r); }

}  // namespace rnn
}  // namespace onnx_light

#endif  // __aarch64__
