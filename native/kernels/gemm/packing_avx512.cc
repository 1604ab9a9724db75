// The AVX-512 paths of the GEMM packing (PackingVariants' "avx512"), compiled with AVX-512
// flags by isa_library; reached only after IsaEnabled(Isa::kAvx512).
#include "native/kernels/gemm/packing_avx512.h"

#if defined(__x86_64__)
#if !defined(__AVX512F__)
#error "packing_avx512.cc needs AVX-512 flags (isa_library isa = \"avx512\")"
#endif
#include <immintrin.h>

namespace onnx_light {
namespace gemm {
namespace {

__mmask16 FirstLanes(int64_t count) {
  if (count <= 0) return 0;
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1u);
}

// In-register transpose of 16 rows of 16 floats: 32-bit then 64-bit interleaves within
// 128-bit lanes, then two rounds of 128-bit lane shuffles.
void Transpose16x16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int j = 0; j < 8; ++j) {
    t[2 * j] = _mm512_unpacklo_ps(r[2 * j], r[2 * j + 1]);
    t[2 * j + 1] = _mm512_unpackhi_ps(r[2 * j], r[2 * j + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // four rows per group: u[4g + c] holds columns c, c+4, c+8, c+12
    const __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 even01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88),
                 odd01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 even23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 odd23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(even01, even23, 0x88);
    r[c + 8] = _mm512_shuffle_f32x4(even01, even23, 0xDD);
    r[c + 4] = _mm512_shuffle_f32x4(odd01, odd23, 0x88);
    r[c + 12] = _mm512_shuffle_f32x4(odd01, odd23, 0xDD);
  }
}

// Rows of B per block of PackBRowsAvx512.
constexpr int64_t kPackRows = 16;

}  // namespace

// TransposeInto in 16 x 16 register blocks; masked loads and stores at the edges touch
// nothing outside the rows x cols source and the rows-wide destination rows.
void TransposeAvx512(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride) {
  for (int64_t i0 = 0; i0 < rows; i0 += 16) {
    const int64_t block_rows = rows - i0 < 16 ? rows - i0 : 16;
    const __mmask16 row_mask = FirstLanes(block_rows);
    for (int64_t k0 = 0; k0 < cols; k0 += 16) {
      const int64_t block_cols = cols - k0 < 16 ? cols - k0 : 16;
      const __mmask16 col_mask = FirstLanes(block_cols);
      __m512 r[16];
      for (int i = 0; i < 16; ++i) {
        r[i] = i < block_rows ? _mm512_maskz_loadu_ps(col_mask, src + (i0 + i) * ld + k0) : _mm512_setzero_ps();
      }
      Transpose16x16(r);
      for (int c = 0; c < block_cols; ++c) _mm512_mask_storeu_ps(dst + (k0 + c) * stride + i0, row_mask, r[c]);
    }
  }
}

// PackBDense without transpose for nr a multiple of 16: blocks of kPackRows rows of B are
// spread over the panels, so that each panel receives a contiguous run (not one row per
// panel, a page apart) while the block's rows stay in L1; the partial panel is zero-padded
// by the masked loads.
void PackBRowsAvx512(const float* b, int64_t ldb, int64_t kc, int64_t nc, int nr, float* dst) {
  for (int64_t kb = 0; kb < kc; kb += kPackRows) {
    const int64_t k_end = kb + kPackRows < kc ? kb + kPackRows : kc;
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
      float* panel = dst + (j0 / nr) * kc * nr;
      for (int64_t k = kb; k < k_end; ++k) {
        const float* src = b + k * ldb + j0;
        for (int j = 0; j < nr; j += 16) {
          _mm512_storeu_ps(panel + k * nr + j, _mm512_maskz_loadu_ps(FirstLanes(nc - j0 - j), src + j));
        }
      }
    }
  }
}

}  // namespace gemm
}  // namespace onnx_light
#endif  // defined(__x86_64__)
