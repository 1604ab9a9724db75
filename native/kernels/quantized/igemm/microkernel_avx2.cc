// AVX2 integer microkernel: 6 x 16 tile and its edge tiles, 16-bit pairs multiplied and pair-summed with
// vpmaddwd (exact: no saturation for 8-bit inputs), and the double-precision requantiser.
// Compiled by isa_library(isa = "avx2") with -ffp-contract=off.
#include "native/kernels/quantized/igemm/igemm_kernel.h"
#include "native/kernels/quantized/igemm/zero_point_terms.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <utility>

#if !defined(__AVX2__)
#error "build with isa_library(isa = \"avx2\")"
#endif

namespace onnx_light {
namespace igemm {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// One algorithm for every tile: rows [0, R) of the kMr-row A panel times V (1 or 2)
// vectors of 8 columns of the kNr-column B panel, kp pairs of K; stores those R rows and
// 8V columns only. The full tile is PanelTile<kMr, 2>; the others are the edge tiles
// (igemm_kernel.h).
template <int R, int V>
void PanelTile(int64_t kp, const int16_t* a, const int16_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  static_assert(R >= 1 && R <= kMr && V >= 1 && 8 * V <= kNr);
  __m256i acc[R][V];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_si256();
  }
  for (int64_t p = 0; p < kp; ++p) {
    __m256i bv[V];
    for (int v = 0; v < V; ++v) bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 * v));
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + 2 * i, sizeof(pair));
      const __m256i ai = _mm256_set1_epi32(pair);
      for (int v = 0; v < V; ++v) acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(ai, bv[v]));
    }
    a += 2 * kMr;
    b += 2 * kNr;
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    __m256i* row = reinterpret_cast<__m256i*>(c + i * ldc);
    for (int v = 0; v < V; ++v) {
      if (accumulate) acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_loadu_si256(row + v));
      _mm256_storeu_si256(row + v, acc[i][v]);
    }
  }
}

void Tile(int64_t kp, const int16_t* a, const int16_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  PanelTile<kMr, 2>(kp, a, b, c, ldc, accumulate);
}

// The tiles of rows 1..kMr and columns 8, 16.
template <size_t... I>
constexpr std::array<std::array<IgemmTileFn, kNr / 8>, kMr> EdgeTable(std::index_sequence<I...>) {
  return {{{PanelTile<I + 1, 1>, PanelTile<I + 1, 2>}...}};
}

IgemmTileFn EdgeTile(int rows, int cols) {
  static constexpr auto kTable = EdgeTable(std::make_index_sequence<kMr>());
  return kTable[rows - 1][(cols + 7) / 8 - 1];
}

// The indirect pair tile (igemm_kernel.h): PanelTile's algorithm with row i's pairs read
// at rows[i] + offsets[t] + 4p (int16 values) in place of a packed A panel, the
// accumulators starting at the column values `init`.
template <int R, int V>
void IndirectTile(int64_t taps, int64_t pairs, const uint8_t* const* rows, const int64_t* offsets, const int16_t* b,
                  const int32_t* init, int32_t* c, int64_t ldc) {
  static_assert(R >= 1 && R <= kMr && V >= 1 && 8 * V <= kNr);
  __m256i acc[R][V], start[V];
  for (int v = 0; v < V; ++v) start[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(init + 8 * v));
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = start[v];
  }
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* a[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) a[i] = rows[i] + offsets[t];
    for (int64_t p = 0; p < pairs; ++p) {
      __m256i bv[V];
      for (int v = 0; v < V; ++v) bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 * v));
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        int32_t pair;
        __builtin_memcpy(&pair, a[i] + 4 * p, sizeof(pair));
        const __m256i ai = _mm256_set1_epi32(pair);
        for (int v = 0; v < V; ++v) acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(ai, bv[v]));
      }
      b += 2 * kNr;
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    __m256i* row = reinterpret_cast<__m256i*>(c + i * ldc);
    for (int v = 0; v < V; ++v) _mm256_storeu_si256(row + v, acc[i][v]);
  }
}

template <size_t... I>
constexpr std::array<std::array<IgemmIndirectPairTileFn, kNr / 8>, kMr> IndirectTable(std::index_sequence<I...>) {
  return {{{IndirectTile<I + 1, 1>, IndirectTile<I + 1, 2>}...}};
}

IgemmIndirectPairTileFn IndirectEdgeTile(int rows, int cols) {
  static constexpr auto kTable = IndirectTable(std::make_index_sequence<kMr>());
  return kTable[rows - 1][(cols + 7) / 8 - 1];
}

// Eight outputs: (acc + bias) * multiplier + zp in double, rounded half to even, clamped.
template <bool Signed>
void Requantize8(const int32_t* acc, __m256i bias, const float* multiplier, int64_t step, __m256d zp, void* out) {
  const __m256d lo = _mm256_set1_pd(Signed ? -128.0 : 0.0), hi = _mm256_set1_pd(Signed ? 127.0 : 255.0);
  const __m256i v = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)), bias);
  const __m256 m = step != 0 ? _mm256_loadu_ps(multiplier) : _mm256_set1_ps(multiplier[0]);
  __m256d d0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(v)), _mm256_cvtps_pd(_mm256_castps256_ps128(m)));
  __m256d d1 =
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)));
  d0 = _mm256_round_pd(_mm256_add_pd(d0, zp), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  d1 = _mm256_round_pd(_mm256_add_pd(d1, zp), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  d0 = _mm256_min_pd(_mm256_max_pd(d0, lo), hi);
  d1 = _mm256_min_pd(_mm256_max_pd(d1, lo), hi);
  const __m128i words = _mm_packs_epi32(_mm256_cvtpd_epi32(d0), _mm256_cvtpd_epi32(d1));
  const __m128i bytes = Signed ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
  _mm_storel_epi64(static_cast<__m128i*>(out), bytes);
}

template <bool Signed>
void RequantizeTo(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                  uint8_t* out) {
  const __m256i vbias = _mm256_set1_epi32(bias);
  const __m256d vzp = _mm256_set1_pd(static_cast<double>(zp));
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) Requantize8<Signed>(acc + j, vbias, multiplier + j * step, step, vzp, out + j);
  if (j == n) return;
  // The tail through the same vector code (one rounding path for every element).
  int32_t tail_acc[8] = {};
  float tail_multiplier[8] = {};
  uint8_t tail_out[8];
  for (int64_t t = j; t < n; ++t) {
    tail_acc[t - j] = acc[t];
    tail_multiplier[t - j] = multiplier[t * step];
  }
  Requantize8<Signed>(tail_acc, vbias, tail_multiplier, 1, vzp, tail_out);
  for (int64_t t = j; t < n; ++t) out[t] = tail_out[t - j];
}

void Requantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                bool is_signed, void* out) {
  if (is_signed) {
    RequantizeTo<true>(acc, n, bias, multiplier, step, zp, static_cast<uint8_t*>(out));
  } else {
    RequantizeTo<false>(acc, n, bias, multiplier, step, zp, static_cast<uint8_t*>(out));
  }
}

// The pair panel packing (IgemmPackPanelFn) of 16 columns: per pair of K rows, two row
// loads (a copy past `width`), widened to int16, word unpacks into pairs with a lane
// fix-up, and the column sums by vpmaddwd against ones.
void PackPanelPairs(const IgemmRows& rows, int64_t col0, int64_t k, int64_t width, bool is_signed, void* dst,
                    int32_t* sums) {
  static_assert(kNr == 16, "one panel is one 128-bit row of bytes");
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  const auto load = [&](int64_t kk) {
    if (kk >= k) return zero;
    const uint8_t* row = rows.at(kk, col0);
    __m128i x;
    if (width >= kNr) {
      x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row));
    } else {
      alignas(16) uint8_t tmp[kNr] = {};
      __builtin_memcpy(tmp, row, static_cast<size_t>(width));
      x = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
    }
    return is_signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);
  };
  __m256i s0 = zero, s1 = zero;
  auto* out = static_cast<__m256i*>(dst);
  for (int64_t p = 0, kp = (k + 1) / 2; p < kp; ++p, out += 2) {
    const __m256i e0 = load(2 * p), e1 = load(2 * p + 1);
    const __m256i lo = _mm256_unpacklo_epi16(e0, e1), hi = _mm256_unpackhi_epi16(e0, e1);  // 0-3|8-11, 4-7|12-15
    const __m256i o0 = _mm256_permute2x128_si256(lo, hi, 0x20), o1 = _mm256_permute2x128_si256(lo, hi, 0x31);
    _mm256_storeu_si256(out, o0);
    _mm256_storeu_si256(out + 1, o1);
    s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(o0, ones));
    s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(o1, ones));
  }
  alignas(32) int32_t all[kNr];
  _mm256_store_si256(reinterpret_cast<__m256i*>(all), s0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(all + 8), s1);
  for (int64_t c = 0; c < width; ++c) sums[c] = all[c];
}

// Eight uint32 lanes (zero_point_terms.h).
struct Lanes8 {
  using V = __m256i;
  static constexpr int kLanes = 8;
  static V Set(uint32_t v) { return _mm256_set1_epi32(static_cast<int32_t>(v)); }
  static V Load(const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void Store(uint32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static V Add(V a, V b) { return _mm256_add_epi32(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_epi32(a, b); }
  static V MulLow(V a, V b) { return _mm256_mullo_epi32(a, b); }
};

void AddZeroPointTerms(uint32_t* row, int64_t n, uint32_t row_term, uint32_t azp, const uint32_t* column_sums) {
  AddZeroPointTermsLanes<Lanes8>(row, n, row_term, azp, column_sums);
}

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx2).
extern const IgemmKernel kIgemmAvx2Kernel = {
    "avx2",          kMr, kNr, Tile, Requantize, nullptr, EdgeTile, nullptr, PackPanelPairs, AddZeroPointTerms, nullptr,
    IndirectEdgeTile};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
