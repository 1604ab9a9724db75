// The AVX-512 tile of the implicit-GEMM convolution: 12 positions x 32 output channels in
// 24 accumulators; per k, 2 weight loads and 12 broadcasts (each position's input pixel)
// feed 24 FMAs, the same balance as the GEMM engine's 12 x 32 microkernel.
#include "native/kernels/conv/implicit_gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define OL_AVX512 __attribute__((target("avx512f")))

namespace onnx_light {
namespace conv {
namespace {

OL_AVX512 void Tile(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                    const float* bias, int valid, float* y, int64_t ldy) {
  constexpr int kRows = kImplicitRows;
  const float* row[kRows];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) row[i] = rows[i];
  __m512 acc[kRows][2];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < k_count; ++k) {
    const int64_t offset = offsets[k];
    const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
    _mm_prefetch(reinterpret_cast<const char*>(w + 8 * kImplicitCols), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const __m512 a = _mm512_set1_ps(row[i][offset]);
      acc[i][0] = _mm512_fmadd_ps(a, w0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(a, w1, acc[i][1]);
    }
    w += kImplicitCols;
  }
  // Position i of 16 channels goes to 16 output planes: one scatter per vector.
  const __m512 b0 = bias != nullptr ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  const __m512 b1 = bias != nullptr ? _mm512_loadu_ps(bias + 16) : _mm512_setzero_ps();
  const __m512i planes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(static_cast<int32_t>(ldy)));
  float* y1 = y + 16 * ldy;
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
    if (i >= valid) break;
    _mm512_i32scatter_ps(y + i, planes, _mm512_add_ps(acc[i][0], b0), 4);
    _mm512_i32scatter_ps(y1 + i, planes, _mm512_add_ps(acc[i][1], b1), 4);
  }
}

}  // namespace

ImplicitTileFn ImplicitTileAvx512() { return __builtin_cpu_supports("avx512f") ? Tile : nullptr; }

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
ImplicitTileFn ImplicitTileAvx512() { return nullptr; }
}  // namespace conv
}  // namespace onnx_light
#endif
