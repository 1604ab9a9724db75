// The AVX-512 tiles of the implicit-GEMM convolution: 6 positions x 64 output channels
// (24 accumulators; per k, 4 weight loads and 6 broadcasts feed 24 FMAs), 12 x 32 (2 loads,
// 12 broadcasts: the GEMM engine's microkernel balance) when the channels per group are
// not a multiple of 64, 8 x 48 (3 loads, 8 broadcasts per 24 FMAs) for 40, 48, 144 ...
// channels and 12 x 16 (12 accumulators, 1 load and 12 broadcasts per 12 FMAs) for 16, 80,
// 112 ...: ImplicitTileFor takes the one that pads the fewest columns. Before the last two,
// those channel counts took the AVX2 6 x 16 tile (8-lane FMAs) or padded 40 to 64; on
// conv3x3_24to40_28 (Zen 5, 1 thread) 8 x 48 runs in 0.55x the time of avx2_6x16 and
// 12 x 16 takes 0.63-0.65x on 3x3 convolutions to 16, 80 and 112 channels (interleaved
// A/B, see the commit). Results leave through in-register transposes.
// Measured and not taken (interleaved A/B, loaded host): the 6 x 64 tile's FMAs broadcasting
// the input element themselves ({1to16} memory operands, 1.3 instructions per FMA instead
// of 1.67) made conv3x3_64_56 31% and conv3x3_512_7 11% slower; 4 k steps per iteration
// with the vbroadcastss kept was within noise (0.99, 1.05): the loop stays one step.
// The 12 x 32 tile's 12 row pointers do not fit beside its loop's other general registers
// (GCC parks four in xmm registers: 47 instructions a k step); when its rows lie in at most
// two runs of equally spaced positions (horizontal stride 1 or 2: most tiles) a loop
// compiled for that layout reads them from two base registers (44 instructions, nothing
// parked); the 12 x 16 tile takes the same layouts, and as each of its broadcasts feeds one
// FMA GCC folds it into the FMA ({1to16} operand: 18 instructions a k step). The 6 x 64 and
// 8 x 48 tiles' loops park nothing (8 x 48: 41 instructions a k step) and keep one loop
// (objdump -d of the .o).
// Compiled with AVX-512 flags by isa_library; implicit_gemm.cc lists them in
// ImplicitTileVariants() and reaches them only after IsaEnabled(Isa::kAvx512).
#include "native/kernels/conv/implicit_gemm_avx512.h"

#if defined(__x86_64__)
#if !defined(__AVX512F__)
#error "implicit_gemm_avx512.cc needs AVX-512 flags (isa_library isa = \"avx512\")"
#endif
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <utility>

namespace onnx_light {
namespace conv {
namespace {

// ImplicitBlockedTileFn (implicit_gemm.h), whose contract every tile here keeps; the
// channel-major tiles (ImplicitTileFn) pass residual null and relu false.
using TileFn = void (*)(int64_t, const int64_t*, const float* const*, const float*, const float*, int, int, float*,
                        int64_t, const float*, float*, const float*, bool);

// r[i] holds position i of 16 channels (i < 8): writes out[c * ldy + i] for c < channels
// (<= 16) and i < count. Two 4x4 transposes within each 128-bit lane, then each channel's 8 positions
// gathered into one 256-bit half and stored under a mask (masked-off elements are not
// touched, so the -8 offset of the upper half never reaches outside the row).
inline void StoreTransposed8x16(const __m512 r[8], int count, int channels, float* out, int64_t ldy) {
  __m512 u[4], w[4];  // lane L of u[k] / w[k]: channel 4L + k, positions 0-3 / 4-7
  for (int half = 0; half < 2; ++half) {
    const __m512* q = r + 4 * half;
    const __m512 t0 = _mm512_unpacklo_ps(q[0], q[1]), t1 = _mm512_unpackhi_ps(q[0], q[1]);
    const __m512 t2 = _mm512_unpacklo_ps(q[2], q[3]), t3 = _mm512_unpackhi_ps(q[2], q[3]);
    __m512* d = half == 0 ? u : w;
    d[0] = _mm512_shuffle_ps(t0, t2, 0x44);
    d[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    d[2] = _mm512_shuffle_ps(t1, t3, 0x44);
    d[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
  }
  const __mmask16 low = static_cast<__mmask16>((1u << count) - 1u), high = static_cast<__mmask16>(low << 8);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    // Lanes (0, 1) and (2, 3): [u.L, u.L', w.L, w.L'] -> [u.L, w.L, u.L', w.L'] = channels
    // 4L + k (low half) and 4L' + k (high half), positions 0-7 each.
    const __m512 a01 = _mm512_shuffle_f32x4(u[k], w[k], 0x44), a23 = _mm512_shuffle_f32x4(u[k], w[k], 0xEE);
    const __m512 lanes01 = _mm512_shuffle_f32x4(a01, a01, 0xD8), lanes23 = _mm512_shuffle_f32x4(a23, a23, 0xD8);
    if (channels >= 16) {
      _mm512_mask_storeu_ps(out + k * ldy, low, lanes01);
      _mm512_mask_storeu_ps(out + (4 + k) * ldy - 8, high, lanes01);
      _mm512_mask_storeu_ps(out + (8 + k) * ldy, low, lanes23);
      _mm512_mask_storeu_ps(out + (12 + k) * ldy - 8, high, lanes23);
      continue;
    }
    // A group's last block: only its real channels (the planes past them are other
    // groups', or past Y's end).
    if (k < channels) _mm512_mask_storeu_ps(out + k * ldy, low, lanes01);
    if (4 + k < channels) _mm512_mask_storeu_ps(out + (4 + k) * ldy - 8, high, lanes01);
    if (8 + k < channels) _mm512_mask_storeu_ps(out + (8 + k) * ldy, low, lanes23);
    if (12 + k < channels) _mm512_mask_storeu_ps(out + (12 + k) * ldy - 8, high, lanes23);
  }
}

// Adds acc (kRows positions x 16 * kVecs channels) + bias and stores its first `channels`
// channels transposed: each group of 8 positions x 16 channels becomes 16 runs of
// consecutive positions, one per output plane. Not inlined: one copy serves every row layout below (it runs once a
// tile, after k_count steps, so passing the accumulators through memory costs nothing measurable).
template <int kRows, int kVecs>
__attribute__((noinline)) void StoreTile(const __m512 (&acc)[kRows][kVecs], const float* bias, int valid, int channels,
                                         float* y, int64_t ldy) {
#pragma GCC unroll 4
  for (int v = 0; v < kVecs && 16 * v < channels; ++v) {
    const __m512 b = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int group = 0; group * 8 < kRows && group * 8 < valid; ++group) {
      __m512 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        r[i] = group * 8 + i < kRows ? _mm512_add_ps(acc[group * 8 + i][v], b) : _mm512_setzero_ps();
      }
      const int count = valid - group * 8 < 8 ? valid - group * 8 : 8;
      StoreTransposed8x16(r, count, channels - 16 * v, y + 16 * v * ldy + group * 8, ldy);
    }
  }
}

// Where the tile's rows lie. kSplit == 0: anywhere, one pointer per row (rows[i]); the
// 12-row tile then needs more general registers than x86-64 has, and the compiler parks
// row pointers in vector registers inside the k loop. kSplit in [1, kRows]: rows i <
// kSplit at rows[0] + kStride * i and rows i >= kSplit at rows[kSplit] + kStride * (i -
// kSplit): the positions of at most two output rows (kSplit == kRows: one), kStride the
// convolution's horizontal stride. Then every broadcast is one of two base registers plus
// the tap's offset plus a constant displacement, and the loop needs seven general registers.
template <int kRows, int kVecs, int kSplit, int kStride, bool kBlocked>
void TileWithLayout(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                    const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                    float* carry_out, const float* residual, bool relu) {
  constexpr int kCols = 16 * kVecs;
  const float* row[kRows];
  const float* const first = rows[0];
  const float* const second = kSplit > 0 && kSplit < kRows ? rows[kSplit] : rows[0];
  if (kSplit == 0) {
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) row[i] = rows[i];
  }
  __m512 acc[kRows][kVecs];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v)
      acc[i][v] = carry_in != nullptr ? _mm512_loadu_ps(carry_in + i * kCols + 16 * v) : _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < k_count; ++k) {
    const int64_t offset = offsets[k];
    __m512 wv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) wv[v] = _mm512_loadu_ps(w + 16 * v);
    _mm_prefetch(reinterpret_cast<const char*>(w + 8 * kCols), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const float* p = kSplit == 0  ? row[i] + offset
                       : i < kSplit ? first + offset + kStride * i
                                    : second + offset + kStride * (i - kSplit);
      const __m512 a = _mm512_set1_ps(*p);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm512_fmadd_ps(a, wv[v], acc[i][v]);
    }
    w += kCols;
  }
  if (carry_out != nullptr) {
    // Not the last K chunk: the raw sums, row by row, for the next chunk to continue.
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(carry_out + i * kCols + 16 * v, acc[i][v]);
    }
    return;
  }
  if constexpr (kBlocked) {
    // Blocked Y (ImplicitTile::blocked_fn): position i's 16 channels of vector v are one
    // 16-lane store at y + v * ldy + 16 i; whole vectors up to `channels`. Then the
    // residual (one add) and Relu (x > 0 or NaN ? x : +0, the epilogue's) in registers.
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      if (16 * v >= channels) break;
      const __m512 b = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : zero;
#pragma GCC unroll 12
      for (int i = 0; i < kRows; ++i) {
        if (i >= valid) continue;
        __m512 out = _mm512_add_ps(acc[i][v], b);
        if (residual != nullptr) out = _mm512_add_ps(out, _mm512_loadu_ps(residual + v * ldy + 16 * i));
        if (relu) out = _mm512_mask_mov_ps(zero, _mm512_cmp_ps_mask(out, zero, _CMP_NLE_UQ), out);
        _mm512_storeu_ps(y + v * ldy + 16 * i, out);
      }
    }
    return;
  }
  StoreTile<kRows, kVecs>(acc, bias, valid, channels, y, ldy);
}

template <int kRows, int kVecs, int kStride, bool kBlocked, int... kSplits>
constexpr std::array<TileFn, sizeof...(kSplits)> LayoutTable(std::integer_sequence<int, kSplits...>) {
  return {TileWithLayout<kRows, kVecs, kSplits, kStride, kBlocked>...};
}

// The loops of tiles cut to their first 1, 2, ..., kRows - 1 rows (index valid - 1).
template <int kVecs, bool kBlocked, int... kValid>
constexpr std::array<TileFn, sizeof...(kValid)> PartialTable(std::integer_sequence<int, kValid...>) {
  return {TileWithLayout<kValid + 1, kVecs, 0, 1, kBlocked>...};
}

// kRows positions x 16 * kVecs output channels. A tile with fewer valid positions (the last
// of an image: 1 of 6 rows at 7 x 7) runs a loop of just those rows, instead of FMAs for
// rows that are discarded. A full tile finds its rows' layout (TileWithLayout) and runs the
// loop compiled for it when kLayouts (the 12 x 32 tile). Every loop sums each accumulator
// in k order with the same fused multiply-adds, so neither choice changes a bit.
template <int kRows, int kVecs, bool kLayouts, bool kBlocked>
void Tile(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w, const float* bias,
          int valid, int channels, float* y, int64_t ldy, const float* carry_in, float* carry_out,
          const float* residual, bool relu) {
  static constexpr std::array<TileFn, kRows - 1> kPartial =
      PartialTable<kVecs, kBlocked>(std::make_integer_sequence<int, kRows - 1>());
  if (valid < kRows) {
    if (valid > 0)
      kPartial[valid - 1](k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual,
                          relu);
    return;
  }
  if (!kLayouts)
    return TileWithLayout<kRows, kVecs, 0, 1, kBlocked>(k_count, offsets, rows, w, bias, valid, channels, y, ldy,
                                                        carry_in, carry_out, residual, relu);
  // Index [split] (0 = general), per stride 1 and 2 (and, storing blocked Y, the blocked
  // input's 16 and 32: positions of an NCHW16c row are 16 floats apart).
  static constexpr std::array<TileFn, kRows + 1> kStride1 =
      LayoutTable<kRows, kVecs, 1, kBlocked>(std::make_integer_sequence<int, kRows + 1>());
  static constexpr std::array<TileFn, kRows + 1> kStride2 =
      LayoutTable<kRows, kVecs, 2, kBlocked>(std::make_integer_sequence<int, kRows + 1>());
  const std::ptrdiff_t stride = rows[kRows - 1] - rows[kRows - 2];
  const std::array<TileFn, kRows + 1>* table = nullptr;
  if (stride == 1 || stride == 2) {
    table = stride == 2 ? &kStride2 : &kStride1;
  } else if constexpr (kBlocked) {
    static constexpr std::array<TileFn, kRows + 1> kStride16 =
        LayoutTable<kRows, kVecs, 16, kBlocked>(std::make_integer_sequence<int, kRows + 1>());
    static constexpr std::array<TileFn, kRows + 1> kStride32 =
        LayoutTable<kRows, kVecs, 32, kBlocked>(std::make_integer_sequence<int, kRows + 1>());
    if (stride == 16 || stride == 32) table = stride == 32 ? &kStride32 : &kStride16;
  }
  int split = 0;
  if (table != nullptr) {
    // The first row that does not follow its predecessor by `stride` starts the second
    // run; any later break leaves the general loop.
    split = kRows;
    for (int i = 1; i < kRows; ++i) {
      if (rows[i] - rows[i - 1] == stride) continue;
      if (split != kRows) {
        split = 0;
        break;
      }
      split = i;
    }
  } else {
    table = &kStride1;  // split 0: the general loop
  }
  (*table)[split](k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual, relu);
}

}  // namespace

void ImplicitTile6x64Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                            const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                            float* carry_out) {
  // 6 row pointers fit in general registers: one loop serves every layout.
  Tile<6, 4, false, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr,
                           false);
}

void ImplicitTile12x32Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                             const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                             float* carry_out) {
  Tile<12, 2, true, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr,
                           false);
}

void ImplicitTile8x48Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                            const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                            float* carry_out) {
  // 8 row pointers fit beside the loop's other general registers: one loop serves every layout.
  Tile<8, 3, false, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr,
                           false);
}

void ImplicitTile12x16Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                             const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                             float* carry_out) {
  Tile<12, 1, true, false>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, nullptr,
                           false);
}

// The same tiles storing blocked Y (ImplicitTile::blocked_fn).
void ImplicitTile6x64BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                   const float* bias, int valid, int channels, float* y, int64_t ldy,
                                   const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<6, 4, false, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual,
                          relu);
}

void ImplicitTile12x32BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                    const float* bias, int valid, int channels, float* y, int64_t ldy,
                                    const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<12, 2, true, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual,
                          relu);
}

void ImplicitTile8x48BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                   const float* bias, int valid, int channels, float* y, int64_t ldy,
                                   const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<8, 3, false, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual,
                          relu);
}

void ImplicitTile12x16BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                    const float* bias, int valid, int channels, float* y, int64_t ldy,
                                    const float* carry_in, float* carry_out, const float* residual, bool relu) {
  Tile<12, 1, true, true>(k_count, offsets, rows, w, bias, valid, channels, y, ldy, carry_in, carry_out, residual,
                          relu);
}

}  // namespace conv
}  // namespace onnx_light

#endif  // defined(__x86_64__)
