#include "native/kernels/attention/panel_matmul.h"

#include "native/kernels/common/isa_variants.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace attention {
namespace {

// Portable kernel: the compiler vectorises the inner column loop (SSE2, NEON).
constexpr int64_t kPortableRows = 4;

template <typename T>
void PanelMatMulPortable(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b_packed, int64_t packed_rows,
                         T* c, int64_t ldc) {
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
  for (int64_t p = 0; p < panels; ++p) {
    const T* panel = b_packed + p * packed_rows * kPanelWidth;
    for (int64_t i = 0; i < m; i += kPortableRows) {
      T acc[kPortableRows][kPanelWidth] = {};
      for (int64_t r = 0; r < k; ++r) {
        const T* b_row = panel + r * kPanelWidth;
        for (int64_t bi = 0; bi < kPortableRows; ++bi) {
          const T av = a[(i + bi) * lda + r];
          for (int64_t j = 0; j < kPanelWidth; ++j) acc[bi][j] += av * b_row[j];
        }
      }
      for (int64_t bi = 0; bi < kPortableRows; ++bi) {
        T* c_row = c + (i + bi) * ldc + p * kPanelWidth;
        for (int64_t j = 0; j < kPanelWidth; ++j) c_row[j] = acc[bi][j];
      }
    }
  }
}

#if defined(__x86_64__)
// 4 rows x 16 columns of accumulators in 8 ymm registers; one FMA per product.
__attribute__((target("avx2,fma"))) void PanelMatMulAvx2(int64_t m, int64_t n, int64_t k, const float* a,
                                                         int64_t lda, const float* b_packed,
                                                         int64_t packed_rows, float* c, int64_t ldc) {
  static_assert(kPanelWidth == 16 && kRowBlock % 4 == 0, "the AVX2 kernel is written for 4x16 blocks");
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
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

// 8 rows x Panels panels: 8 * Panels zmm accumulators, A broadcast from memory. Every
// element is one FMA chain over r = 0..k-1, as in the AVX2 and portable kernels.
template <int Panels>
__attribute__((target("avx512f"))) inline void Rows8Avx512(int64_t k, const float* a, int64_t lda,
                                                           const float* panel, int64_t packed_rows, float* c,
                                                           int64_t ldc) {
  __m512 acc[8][Panels];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
#pragma GCC unroll 2
    for (int q = 0; q < Panels; ++q) acc[i][q] = _mm512_setzero_ps();
  }
  const int64_t panel_stride = packed_rows * kPanelWidth;
  for (int64_t r = 0; r < k; ++r) {
    __m512 bv[Panels];
#pragma GCC unroll 2
    for (int q = 0; q < Panels; ++q) bv[q] = _mm512_loadu_ps(panel + q * panel_stride + r * kPanelWidth);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * lda + r]);
#pragma GCC unroll 2
      for (int q = 0; q < Panels; ++q) acc[i][q] = _mm512_fmadd_ps(av, bv[q], acc[i][q]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
#pragma GCC unroll 2
    for (int q = 0; q < Panels; ++q) _mm512_storeu_ps(c + i * ldc + q * kPanelWidth, acc[i][q]);
  }
}

__attribute__((target("avx512f"))) void PanelMatMulAvx512(int64_t m, int64_t n, int64_t k, const float* a,
                                                          int64_t lda, const float* b_packed,
                                                          int64_t packed_rows, float* c, int64_t ldc) {
  static_assert(kPanelWidth == 16 && kRowBlock % 8 == 0, "the AVX-512 kernel is written for 8x16 blocks");
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
  for (int64_t p = 0; p < panels; p += 2) {
    const float* panel = b_packed + p * packed_rows * kPanelWidth;
    for (int64_t i = 0; i < m; i += 8) {
      if (p + 1 < panels) {
        Rows8Avx512<2>(k, a + i * lda, lda, panel, packed_rows, c + i * ldc + p * kPanelWidth, ldc);
      } else {
        Rows8Avx512<1>(k, a + i * lda, lda, panel, packed_rows, c + i * ldc + p * kPanelWidth, ldc);
      }
    }
  }
}

bool HasAvx512() {
  static const bool has = IsaEnabled(Isa::kAvx512);
  return has;
}

bool HasAvx2Fma() {
  static const bool has = IsaEnabled(Isa::kAvx2);
  return has;
}
#endif

}  // namespace

void PanelMatMul(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                 int64_t packed_rows, float* c, int64_t ldc) {
#if defined(__x86_64__)
  if (HasAvx512()) return PanelMatMulAvx512(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
  if (HasAvx2Fma()) return PanelMatMulAvx2(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
#endif
  PanelMatMulPortable(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
}

void PanelMatMul(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b_packed,
                 int64_t packed_rows, double* c, int64_t ldc) {
  PanelMatMulPortable(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
}

}  // namespace attention
}  // namespace onnx_light
