// The AVX-512 tiles of the implicit-GEMM convolution, 24 accumulators: 6 positions x 64
// output channels (per k, 4 weight loads and 6 broadcasts feed 24 FMAs) or 12 x 32 (2
// loads, 12 broadcasts: the GEMM engine's microkernel balance) when the channels per
// group are not a multiple of 64.
#include "native/kernels/conv/implicit_gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define OL_AVX512 __attribute__((target("avx512f")))

namespace onnx_light {
namespace conv {
namespace {

// kRows positions x 16 * kVecs output channels.
template <int kRows, int kVecs>
OL_AVX512 void Tile(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                    const float* bias, int valid, float* y, int64_t ldy) {
  constexpr int kCols = 16 * kVecs;
  const float* row[kRows];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) row[i] = rows[i];
  __m512 acc[kRows][kVecs];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < k_count; ++k) {
    const int64_t offset = offsets[k];
    __m512 wv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) wv[v] = _mm512_loadu_ps(w + 16 * v);
    _mm_prefetch(reinterpret_cast<const char*>(w + 8 * kCols), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const __m512 a = _mm512_set1_ps(row[i][offset]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm512_fmadd_ps(a, wv[v], acc[i][v]);
    }
    w += kCols;
  }
  // Position i of 16 channels goes to 16 output planes: one scatter per vector.
  const __m512i planes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(static_cast<int32_t>(ldy)));
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const __m512 b = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
    float* yv = y + 16 * v * ldy;
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      if (i < valid) _mm512_i32scatter_ps(yv + i, planes, _mm512_add_ps(acc[i][v], b), 4);
    }
  }
}

}  // namespace

ImplicitTile ImplicitTileAvx512(int64_t out_per_group) {
  if (!__builtin_cpu_supports("avx512f") || out_per_group % 32 != 0) return {};
  // 6 x 64 needs half the row pointers and broadcasts of 12 x 32 per FMA.
  if (out_per_group % 64 == 0) return {6, 64, Tile<6, 4>};
  return {12, 32, Tile<12, 2>};
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
ImplicitTile ImplicitTileAvx512(int64_t) { return {}; }
}  // namespace conv
}  // namespace onnx_light
#endif
