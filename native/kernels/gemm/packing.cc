#include "native/kernels/gemm/packing.h"

#include <algorithm>
#include <cstring>

#include "native/kernels/common/isa_variants.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace gemm {
namespace {

// Transposing copies are done in square blocks so that both sides stay in cache lines.
constexpr int64_t kTransposeBlock = 8;

#if defined(__x86_64__)
#define OL_AVX512 __attribute__((target("avx512f")))

OL_AVX512 __mmask16 FirstLanes(int64_t count) {
  if (count <= 0) return 0;
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1u);
}

// In-register transpose of 16 rows of 16 floats: 32-bit then 64-bit interleaves within
// 128-bit lanes, then two rounds of 128-bit lane shuffles.
OL_AVX512 void Transpose16x16(__m512 r[16]) {
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

// TransposeInto in 16 x 16 register blocks; masked loads and stores at the edges touch
// nothing outside the rows x cols source and the rows-wide destination rows.
OL_AVX512 void TransposeAvx512(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride) {
  for (int64_t i0 = 0; i0 < rows; i0 += 16) {
    const int64_t block_rows = std::min<int64_t>(16, rows - i0);
    const __mmask16 row_mask = FirstLanes(block_rows);
    for (int64_t k0 = 0; k0 < cols; k0 += 16) {
      const int64_t block_cols = std::min<int64_t>(16, cols - k0);
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
constexpr int64_t kPackRows = 16;

OL_AVX512 void PackBRowsAvx512(const float* b, int64_t ldb, int64_t kc, int64_t nc, int nr, float* dst) {
  for (int64_t kb = 0; kb < kc; kb += kPackRows) {
    const int64_t k_end = std::min(kc, kb + kPackRows);
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
#endif

// dst[k * stride + i] = src[i * ld + k] for i < rows, k < cols; avx512: the caller checked
// IsaEnabled(Isa::kAvx512).
void TransposeInto(bool avx512, const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride) {
#if defined(__x86_64__)
  if (avx512) return TransposeAvx512(src, ld, rows, cols, dst, stride);
#endif
  for (int64_t k0 = 0; k0 < cols; k0 += kTransposeBlock) {
    const int64_t k1 = std::min(cols, k0 + kTransposeBlock);
    for (int64_t i = 0; i < rows; ++i) {
      const float* s = src + i * ld;
      for (int64_t k = k0; k < k1; ++k) dst[k * stride + i] = s[k];
    }
  }
}

template <bool kAvx512>
void PackAPanelWith(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                    float* dst) {
  if (trans_a) {
    for (int64_t k = 0; k < kc; ++k) {
      float* d = dst + k * mr;
      std::memcpy(d, a + (k0 + k) * lda + i0, sizeof(float) * rows);
      std::fill(d + rows, d + mr, 0.0f);
    }
    return;
  }
  TransposeInto(kAvx512, a + i0 * lda + k0, lda, rows, kc, dst, mr);
  if (rows < mr) {
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * mr + rows, dst + (k + 1) * mr, 0.0f);
  }
}

template <bool kAvx512>
void PackBDenseWith(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                    float* dst) {
  const int64_t full = nc / nr * nr;
  const int cols = static_cast<int>(nc - full);  // of the last, partial panel
  if (trans_b) {
    for (int64_t j0 = 0; j0 < full; j0 += nr) {
      TransposeInto(kAvx512, b + (n0 + j0) * ldb + k0, ldb, nr, kc, dst + (j0 / nr) * kc * nr, nr);
    }
    if (cols > 0) {
      float* panel = dst + (full / nr) * kc * nr;
      for (int64_t k = 0; k < kc; ++k) std::fill(panel + k * nr + cols, panel + (k + 1) * nr, 0.0f);
      TransposeInto(kAvx512, b + (n0 + full) * ldb + k0, ldb, cols, kc, panel, nr);
    }
    return;
  }
#if defined(__x86_64__)
  if (kAvx512 && nr % 16 == 0) return PackBRowsAvx512(b + k0 * ldb + n0, ldb, kc, nc, nr, dst);
#endif
  // Row by row, so that B is read sequentially.
  for (int64_t k = 0; k < kc; ++k) {
    const float* src = b + (k0 + k) * ldb + n0;
    for (int64_t j0 = 0; j0 < full; j0 += nr) {
      std::memcpy(dst + ((j0 / nr) * kc + k) * nr, src + j0, sizeof(float) * nr);
    }
    if (cols > 0) {
      float* row = dst + ((full / nr) * kc + k) * nr;
      std::memcpy(row, src + full, sizeof(float) * cols);
      std::fill(row + cols, row + nr, 0.0f);
    }
  }
}

}  // namespace

const std::vector<IsaVariant<Packing>>& PackingVariants() {
  static const auto* variants = new std::vector<IsaVariant<Packing>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, Packing{PackAPanelWith<true>, PackBDenseWith<true>}},
#endif
        {"portable", Isa::kPortable, Packing{PackAPanelWith<false>, PackBDenseWith<false>}},
  };
  return *variants;
}

namespace {
const Packing& BestPacking() {
  static const Packing packing = BestVariant(PackingVariants()).impl;
  return packing;
}
}  // namespace

void PackAPanel(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                float* dst) {
  BestPacking().pack_a(trans_a, a, lda, i0, rows, k0, kc, mr, dst);
}

void PackBDense(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                float* dst) {
  BestPacking().pack_b(trans_b, b, ldb, k0, kc, n0, nc, nr, dst);
}

}  // namespace gemm
}  // namespace onnx_light
