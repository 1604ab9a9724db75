#include "native/kernels/attention/panel_matmul.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace attention {
namespace {

// Portable kernel: the compiler vectorises the inner column loop (SSE2, NEON).
template <typename T>
void PanelMatMulPortable(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b_packed, T* c,
                         int64_t ldc) {
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
  for (int64_t p = 0; p < panels; ++p) {
    const T* panel = b_packed + p * k * kPanelWidth;
    for (int64_t i = 0; i < m; i += kRowBlock) {
      T acc[kRowBlock][kPanelWidth] = {};
      for (int64_t r = 0; r < k; ++r) {
        const T* b_row = panel + r * kPanelWidth;
        for (int64_t bi = 0; bi < kRowBlock; ++bi) {
          const T av = a[(i + bi) * lda + r];
          for (int64_t j = 0; j < kPanelWidth; ++j) acc[bi][j] += av * b_row[j];
        }
      }
      for (int64_t bi = 0; bi < kRowBlock; ++bi) {
        T* c_row = c + (i + bi) * ldc + p * kPanelWidth;
        for (int64_t j = 0; j < kPanelWidth; ++j) c_row[j] = acc[bi][j];
      }
    }
  }
}

#if defined(__x86_64__)
// 4 rows x 16 columns of accumulators in 8 ymm registers; one FMA per product.
__attribute__((target("avx2,fma"))) void PanelMatMulAvx2(int64_t m, int64_t n, int64_t k, const float* a,
                                                         int64_t lda, const float* b_packed, float* c,
                                                         int64_t ldc) {
  static_assert(kPanelWidth == 16 && kRowBlock == 4, "the AVX2 kernel is written for 4x16 blocks");
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
  for (int64_t p = 0; p < panels; ++p) {
    const float* panel = b_packed + p * k * kPanelWidth;
    for (int64_t i = 0; i < m; i += kRowBlock) {
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

bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

}  // namespace

void PanelMatMul(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed, float* c,
                 int64_t ldc) {
#if defined(__x86_64__)
  if (HasAvx2Fma()) return PanelMatMulAvx2(m, n, k, a, lda, b_packed, c, ldc);
#endif
  PanelMatMulPortable(m, n, k, a, lda, b_packed, c, ldc);
}

void PanelMatMul(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b_packed, double* c,
                 int64_t ldc) {
  PanelMatMulPortable(m, n, k, a, lda, b_packed, c, ldc);
}

}  // namespace attention
}  // namespace onnx_light
