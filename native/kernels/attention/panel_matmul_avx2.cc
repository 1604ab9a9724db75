// PanelMatMul's AVX2 + FMA kernel, compiled by isa_library(isa = "avx2"); reached only through
// PanelMatMulVariants() (panel_matmul.cc).
#include <cstdint>

#include "native/kernels/attention/panel_matmul.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

namespace onnx_light {
namespace attention {
namespace {

// 4 rows x 16 columns of accumulators in 8 ymm registers; one FMA per product.
}  // namespace

void PanelMatMulAvx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                     int64_t packed_rows, float* c, int64_t ldc) {
  static_assert(kPanelWidth == 16 && kRowBlock % 4 == 0, "the AVX2 kernel is written for 4x16 blocks");
  const int64_t panels = (n + kPanelWidth - 1) / kPanelWidth;  // not RoundUp: see isa_variants.h
  for (int64_t p = 0; p < panels; ++p) {
    const float* panel = b_packed + p * packed_rows * kPanelWidth;
    for (int64_t i = 0; i < m; i += 4) {
      const float* a0 = a + i * lda;
      const float* a1 = a0 + lda;
      const float* a2 = a1 + lda;
      const float* a3 = a2 + lda;
      __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
      __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
      __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
      __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
      const float* b_row = panel;
      for (int64_t r = 0; r < k; ++r, b_row += kPanelWidth) {
        const __m256 b0 = _mm256_loadu_ps(b_row);
        const __m256 b1 = _mm256_loadu_ps(b_row + 8);
        __m256 av = _mm256_broadcast_ss(a0 + r);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1 + r);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2 + r);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a3 + r);
        c30 = _mm256_fmadd_ps(av, b0, c30);
        c31 = _mm256_fmadd_ps(av, b1, c31);
      }
      float* c_row = c + i * ldc + p * kPanelWidth;
      _mm256_storeu_ps(c_row, c00);
      _mm256_storeu_ps(c_row + 8, c01);
      c_row += ldc;
      _mm256_storeu_ps(c_row, c10);
      _mm256_storeu_ps(c_row + 8, c11);
      c_row += ldc;
      _mm256_storeu_ps(c_row, c20);
      _mm256_storeu_ps(c_row + 8, c21);
      c_row += ldc;
      _mm256_storeu_ps(c_row, c30);
      _mm256_storeu_ps(c_row + 8, c31);
    }
  }
}

}  // namespace attention
}  // namespace onnx_light

#endif  // __x86_64__
