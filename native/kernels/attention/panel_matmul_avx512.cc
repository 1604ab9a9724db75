// PanelMatMul's AVX-512 kernel, compiled by isa_library(isa = "avx512"); reached only through
// PanelMatMulVariants() (panel_matmul.cc).
#include <cstdint>

#include "native/kernels/attention/panel_matmul.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace attention {
namespace {

// 8 rows x Panels panels: 8 * Panels zmm accumulators, A broadcast from memory. Every
// element is one FMA chain over r = 0..k-1, as in the AVX2 and portable kernels.
template <int Panels>
inline void Rows8Avx512(int64_t k, const float* a, int64_t lda, const float* panel, int64_t packed_rows, float* c,
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

}  // namespace

void PanelMatMulAvx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                       int64_t packed_rows, float* c, int64_t ldc) {
  static_assert(kPanelWidth == 16 && kRowBlock % 8 == 0, "the AVX-512 kernel is written for 8x16 blocks");
  const int64_t panels = (n + kPanelWidth - 1) / kPanelWidth;  // not RoundUp: see isa_variants.h
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

}  // namespace attention
}  // namespace onnx_light

#endif  // __x86_64__
