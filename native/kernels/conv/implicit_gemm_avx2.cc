// The AVX2 tiles of the implicit-GEMM convolution, 12 accumulators of 8 lanes each:
// 3 positions x 32 output channels, and 6 positions x 16 channels for channel counts that
// 32 would pad more (16, 48, 80, 112 exactly; 40, 72 with 8 zero columns). 6 x 16: per
// k step 2 weight loads + 6 broadcasts = 8 loads for 12 FMAs, 0.67 loads per FMA (the
// AVX2 GEMM microkernel's 6x16 balance); the 2 weight vectors stay live, each broadcast
// feeds 2 FMAs (12 + 2 + 1 = 15 registers). A padded channel block costs its zero columns'
// FMAs (40 channels: 48 columns, 17% more FMAs) but no im2col copy.
// 3 x 32: with the 4 weight vectors of a k step and one broadcast live, that is
// 12 + 4 + 1 = 17 values for 16 ymm registers, so the loop goes weight vector by weight
// vector: the 3 broadcasts of k stay in registers, each weight vector is loaded once and
// feeds its 3 FMAs (12 + 3 + 1 = 16 registers).
// Per k step (3 x 32): 12 FMAs, 4 weight loads + 3 broadcast loads = 7 loads, 0.58 loads per FMA
// (the 6x16 shape of the AVX2 GEMM microkernels: 2 + 6 = 8 loads, 0.67); 12 independent
// accumulation chains cover 2 FMA ports x 5-6 cycles of latency.
// Per output: K FMAs (K = input channels x kernel size, e.g. 576 for 3x3 over 64
// channels), against im2col + GEMM's K FMAs plus the im2col copy of K floats per position.
// Summation order, the rule of every implicit tile (the AVX-512 ones too): per output,
// acc = fma(x, w, acc) in k order from 0, then + bias; so this tile and the AVX-512 tiles
// give the same bits, and tasks (whole tiles) never split a sum across participants.
// Compiled with AVX2 flags by isa_library; implicit_gemm.cc lists them in
// ImplicitTileVariants() and reaches it only after IsaEnabled(Isa::kAvx2).
#include "native/kernels/conv/implicit_gemm_avx2.h"

#if defined(__x86_64__)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "implicit_gemm_avx2.cc needs AVX2 + FMA flags (isa_library isa = \"avx2\")"
#endif
#include <immintrin.h>

namespace onnx_light {
namespace conv {

namespace {

// The k steps the 3 x 32 tile's main loop takes per iteration: one weight-pointer increment, counter
// and branch per kKUnroll steps (the per-k offsets are still read one by one). Each
// accumulator still takes its FMAs one k after the other: the bits of one step a time.
constexpr int64_t kKUnroll = 4;

// One k step of Tile<kRows, kVecs>.
template <int kRows, int kVecs>
__attribute__((always_inline)) inline void TileStep(int64_t offset, const float* const (&row)[kRows], const float* w,
                                                    __m256 (&acc)[kRows][kVecs]) {
  _mm_prefetch(reinterpret_cast<const char*>(w + 8 * 8 * kVecs), _MM_HINT_T0);
  if constexpr (kRows <= kVecs) {
    // 3 x 32: the 3 broadcasts stay live, each weight vector feeds its 3 FMAs
    // (12 + 3 + 1 = 16 registers).
    __m256 a[kRows];
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) a[i] = _mm256_broadcast_ss(row[i] + offset);
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      const __m256 wv = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 6
      for (int i = 0; i < kRows; ++i) acc[i][v] = _mm256_fmadd_ps(a[i], wv, acc[i][v]);
    }
  } else {
    // 6 x 16: the 2 weight vectors stay live, each broadcast feeds its 2 FMAs
    // (12 + 2 + 1 = 15 registers).
    __m256 wv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) wv[v] = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) {
      const __m256 a = _mm256_broadcast_ss(row[i] + offset);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm256_fmadd_ps(a, wv[v], acc[i][v]);
    }
  }
}

// kRows positions x 8 * kVecs output channels, 3 x 4 or 6 x 2 vectors: 12 accumulators.
// kBlocked: Y stored blocked (ImplicitTile::blocked_fn), else channel-major.
template <int kRows, int kVecs, bool kBlocked>
void Tile(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w, const float* bias,
          int valid, int channels, float* y, int64_t ldy, const float* carry_in, float* carry_out,
          const float* residual, bool relu) {
  constexpr int kCols = 8 * kVecs;
  const float* row[kRows];
#pragma GCC unroll 6
  for (int i = 0; i < kRows; ++i) row[i] = rows[i];
  __m256 acc[kRows][kVecs];
#pragma GCC unroll 6
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v)
      acc[i][v] = carry_in != nullptr ? _mm256_loadu_ps(carry_in + i * kCols + 8 * v) : _mm256_setzero_ps();
  }
  // 3 x 32 only: unrolled, the 6 x 16 loop needs register copies (12 accumulators, 2 weight
  // vectors and a broadcast already take 15 of 16 registers) and measured 3.5% slower on
  // conv3x3_24to40_28 (interleaved, AVX2 cap); the 3 x 32 one has none.
  constexpr int64_t kUnroll = kRows <= kVecs ? kKUnroll : 1;
  int64_t k = k_count;
  for (; k >= kUnroll; k -= kUnroll) {
#pragma GCC unroll 4
    for (int u = 0; u < kUnroll; ++u) TileStep<kRows, kVecs>(offsets[u], row, w + u * kCols, acc);
    offsets += kUnroll;
    w += kUnroll * kCols;
  }
  for (; k > 0; --k) {
    TileStep<kRows, kVecs>(*offsets++, row, w, acc);
    w += kCols;
  }
  if (carry_out != nullptr) {
    // Not the last K chunk: the raw sums, row by row, for the next chunk to continue.
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) _mm256_storeu_ps(carry_out + i * kCols + 8 * v, acc[i][v]);
    }
    return;
  }
  if constexpr (kBlocked) {
    // Position i's 16 channels of block v / 2 are two 8-lane stores at y + (v / 2) * ldy +
    // 16 i (+ 8 for the upper half); whole blocks up to `channels`.
    // Then the residual (one add) and Relu (x > 0 or NaN ? x : +0, the epilogue's).
    const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      if (16 * (v / 2) >= channels) break;
      const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + 8 * v) : zero;
#pragma GCC unroll 6
      for (int i = 0; i < kRows; ++i) {
        if (i >= valid) continue;
        const int64_t at = (v / 2) * ldy + 16 * i + 8 * (v % 2);
        __m256 out = _mm256_add_ps(acc[i][v], b);
        if (residual != nullptr) out = _mm256_add_ps(out, _mm256_loadu_ps(residual + at));
        if (relu) out = _mm256_blendv_ps(zero, out, _mm256_cmp_ps(out, zero, _CMP_NLE_UQ));
        _mm256_storeu_ps(y + at, out);
      }
    }
    return;
  }
  // Bias, then out through a staging block: each channel gets `valid` (<= kRows)
  // consecutive positions of its own output plane, too few for a vector store, so one
  // scalar store per output against K / 8 FMA instructions per output: about 16 / K of
  // the FMA time at 2 FMAs and 1 store per cycle (3% at K = 576, 3x3 over 64 channels;
  // large only for the shortest K, e.g. 27 for a 3x3 stem over 3 channels).
  alignas(32) float staged[kRows][kCols];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + 8 * v) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) _mm256_store_ps(staged[i] + 8 * v, _mm256_add_ps(acc[i][v], b));
  }
  for (int j = 0; j < channels; ++j) {  // a group's last block: only its real channels
    float* out = y + j * ldy;
    for (int i = 0; i < valid; ++i) out[i] = staged[i][j];
  }
}

}  // namespace

void ImplicitTile3x32Avx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                          const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                          float* carry_out) {
  Tile<3, 4, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr, false);
}

void ImplicitTile6x16Avx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                          const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                          float* carry_out) {
  Tile<6, 2, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr, false);
}

// The same tiles storing blocked Y (ImplicitTile::blocked_fn).
void ImplicitTile3x32BlockedAvx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                 const float* bias, int valid, int channels, float* y, int64_t ldy,
                                 const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<3, 4, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual, relu);
}

void ImplicitTile6x16BlockedAvx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                 const float* bias, int valid, int channels, float* y, int64_t ldy,
                                 const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<6, 2, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual, relu);
}

}  // namespace conv
}  // namespace onnx_light

#endif  // defined(__x86_64__)
