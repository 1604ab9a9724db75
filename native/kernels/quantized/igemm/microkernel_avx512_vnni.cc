// AVX-512 VNNI integer microkernel, 12 x 32 tiles and their edge tiles: a signed B takes the byte tile
// (vpdpbusd: four u8 x s8 products summed into int32; an int8 A arrives shifted to uint8),
// an unsigned B the 16-bit pair tile with vpdpwssd (pair products summed into int32). Both
// exact, accumulation wrapping. Compiled by isa_library(isa = "avx512") plus -mavx512vnni;
// reached only when the CPU has VNNI.
#include "native/kernels/quantized/igemm/igemm_kernel.h"
#include "native/kernels/quantized/igemm/zero_point_terms.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <utility>

#if !defined(__AVX512BW__) || !defined(__AVX512VNNI__)
#error "build with isa_library(isa = \"avx512\") and -mavx512vnni"
#endif

namespace onnx_light {
namespace igemm {
namespace {

#define OL_IGEMM_MADD(acc, a, b) _mm512_dpwssd_epi32((acc), (a), (b))
#define OL_IGEMM_MADD256(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#include "native/kernels/quantized/igemm/microkernel_avx512.inc"
#undef OL_IGEMM_MADD256
#undef OL_IGEMM_MADD

// The byte format: K in quads, u8 x s8 quad products summed by vpdpbusd.
struct ByteFormat {
  using A = uint8_t;
  using B = int8_t;
  using Fn = IgemmByteTileFn;
  static constexpr int kGroup = 4;
  static __m512i Madd(__m512i acc, __m512i a, __m512i b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static __m256i Madd256(__m256i acc, __m256i a, __m256i b) { return _mm256_dpbusd_epi32(acc, a, b); }
};

void TileU8S8(int64_t kq, const uint8_t* a, const int8_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  PanelTile<ByteFormat, kMr, 2, 0>(kq, a, b, c, ldc, accumulate);
}

// The byte panel packing (IgemmPackPanelFn) of 32 columns: per quad of K rows, four row
// loads (masked past `width`), a uint8 B shifted to int8 (xor 0x80), 256-bit byte and word
// unpacks into quads with a lane fix-up, and the column sums by vpdpbusd against ones.
template <bool kFull>
void PackPanelBytesAs(const IgemmRows& rows, int64_t col0, int64_t k, int64_t width, bool is_signed, void* dst,
                      int32_t* sums) {
  static_assert(kNr == 32, "one panel is one 256-bit row of bytes");
  const __mmask32 mask = kFull ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << width) - 1);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(is_signed ? 0x00 : 0x80));
  const __m256i ones = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();
  const auto load = [&](int64_t kk) {
    if (kk >= k) return zero;
    const uint8_t* row = rows.at(kk, col0);
    if (kFull) return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), flip);
    return _mm256_maskz_mov_epi8(mask, _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, row), flip));
  };
  __m256i s0 = zero, s1 = zero, s2 = zero, s3 = zero;
  auto* out = static_cast<__m256i*>(dst);
  for (int64_t q = 0, kq = (k + 3) / 4; q < kq; ++q, out += 4) {
    const __m256i r0 = load(4 * q), r1 = load(4 * q + 1), r2 = load(4 * q + 2), r3 = load(4 * q + 3);
    // Per 128-bit lane: a, c hold columns 0-7 (lane 1: 16-23), b, d columns 8-15 (24-31).
    const __m256i a = _mm256_unpacklo_epi8(r0, r1), b = _mm256_unpackhi_epi8(r0, r1);
    const __m256i c = _mm256_unpacklo_epi8(r2, r3), d = _mm256_unpackhi_epi8(r2, r3);
    const __m256i q0 = _mm256_unpacklo_epi16(a, c), q1 = _mm256_unpackhi_epi16(a, c);  // 0-3|16-19, 4-7|20-23
    const __m256i q2 = _mm256_unpacklo_epi16(b, d), q3 = _mm256_unpackhi_epi16(b, d);  // 8-11|24-27, 12-15|28-31
    const __m256i o0 = _mm256_permute2x128_si256(q0, q1, 0x20), o1 = _mm256_permute2x128_si256(q2, q3, 0x20);
    const __m256i o2 = _mm256_permute2x128_si256(q0, q1, 0x31), o3 = _mm256_permute2x128_si256(q2, q3, 0x31);
    _mm256_storeu_si256(out, o0);
    _mm256_storeu_si256(out + 1, o1);
    _mm256_storeu_si256(out + 2, o2);
    _mm256_storeu_si256(out + 3, o3);
    s0 = _mm256_dpbusd_epi32(s0, ones, o0);
    s1 = _mm256_dpbusd_epi32(s1, ones, o1);
    s2 = _mm256_dpbusd_epi32(s2, ones, o2);
    s3 = _mm256_dpbusd_epi32(s3, ones, o3);
  }
  alignas(32) int32_t all[kNr];
  _mm256_store_si256(reinterpret_cast<__m256i*>(all), s0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(all + 8), s1);
  _mm256_store_si256(reinterpret_cast<__m256i*>(all + 16), s2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(all + 24), s3);
  for (int64_t c = 0; c < width; ++c) sums[c] = all[c];
}

void PackPanelBytes(const IgemmRows& rows, int64_t col0, int64_t k, int64_t width, bool is_signed, void* dst,
                    int32_t* sums) {
  if (width >= kNr) {
    PackPanelBytesAs<true>(rows, col0, k, width, is_signed, dst, sums);
  } else {
    PackPanelBytesAs<false>(rows, col0, k, width, is_signed, dst, sums);
  }
}

// The indirect byte tile (igemm_kernel.h): PanelTile's algorithm with row i's quads read
// at rows[i] + offsets[t] + 4q in place of a packed A panel, the accumulators starting at
// the column values `init`; rows [0, R), 16V + 8H columns.
template <int R, int V, int H>
void IndirectTile(int64_t taps, int64_t quads, const uint8_t* const* rows, const int64_t* offsets, const int8_t* b,
                  const int32_t* init, int32_t* c, int64_t ldc) {
  static_assert(R >= 1 && R <= kMr && V >= 0 && (H == 0 || H == 1) && V + H >= 1 && 16 * V + 8 * H <= kNr);
  constexpr int kV = V > 0 ? V : 1;
  __m512i acc[R][kV];
  __m256i half[R];
  __m512i start[kV];
  for (int v = 0; v < V; ++v) start[v] = _mm512_loadu_si512(init + 16 * v);
  __m256i start_half = _mm256_setzero_si256();
  if constexpr (H != 0) start_half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(init + 16 * V));
#pragma GCC unroll 12
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = start[v];
    if constexpr (H != 0) half[i] = start_half;
  }
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* a[R];
#pragma GCC unroll 12
    for (int i = 0; i < R; ++i) a[i] = rows[i] + offsets[t];
    for (int64_t q = 0; q < quads; ++q) {
      __m512i bv[kV];
      for (int v = 0; v < V; ++v) bv[v] = _mm512_loadu_si512(b + v * 64);
      __m256i bh = _mm256_setzero_si256();
      if constexpr (H != 0) bh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + V * 64));
#pragma GCC unroll 12
      for (int i = 0; i < R; ++i) {
        int32_t quad;
        __builtin_memcpy(&quad, a[i] + 4 * q, sizeof(quad));
        const __m512i ai = _mm512_set1_epi32(quad);
        for (int v = 0; v < V; ++v) acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], ai, bv[v]);
        if constexpr (H != 0) half[i] = _mm256_dpbusd_epi32(half[i], _mm512_castsi512_si256(ai), bh);
      }
      b += 4 * kNr;
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < R; ++i) {
    int32_t* row = c + i * ldc;
    for (int v = 0; v < V; ++v) _mm512_storeu_si512(row + 16 * v, acc[i][v]);
    if constexpr (H != 0) _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 16 * V), half[i]);
  }
}

template <size_t... I>
constexpr std::array<std::array<IgemmIndirectTileFn, kNr / 8>, kMr> IndirectTable(std::index_sequence<I...>) {
  return {{{IndirectTile<I + 1, 0, 1>, IndirectTile<I + 1, 1, 0>, IndirectTile<I + 1, 1, 1>,
            IndirectTile<I + 1, 2, 0>}...}};
}

IgemmIndirectTileFn IndirectEdgeTile(int rows, int cols) {
  static constexpr auto kTable = IndirectTable(std::make_index_sequence<kMr>());
  return kTable[rows - 1][(cols + 7) / 8 - 1];
}

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512) and the
// CPU has AVX512-VNNI.
extern const IgemmKernel kIgemmAvx512VnniKernel = {"avx512_vnni",
                                                   kMr,
                                                   kNr,
                                                   Tile,
                                                   Requantize,
                                                   TileU8S8,
                                                   EdgeTile<PairFormat>,
                                                   EdgeTile<ByteFormat>,
                                                   PackPanelBytes,
                                                   AddZeroPointTerms,
                                                   IndirectEdgeTile};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
