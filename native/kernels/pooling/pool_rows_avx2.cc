// The AVX2 interior rows of the 2-D pools (PoolRowsVariants' "avx2"), compiled with AVX2
// flags by isa_library and -ffp-contract=off: no fold is contracted to an FMA, so results
// match the generic path (pool_ops.cc) bit for bit. Reached only after IsaEnabled(kAvx2).
#if defined(__x86_64__)
#if !defined(__AVX2__)
#error "pool_rows_avx2.cc needs AVX2 flags (isa_library isa = \"avx2\")"
#endif
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "native/kernels/pooling/pool_byte_rows_simd.h"
#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {
namespace {

// 8 floats at src[0], src[S], ..., src[7 * S], reading nothing past src[7 * S]. At S == 2
// they come in the order of columns 0 1 4 5 2 3 6 7 (one shuffle: even elements of
// src[0..7] and odd ones of src[7..14] per 128-bit lane); the folds are elementwise, so
// InColumnOrder puts the result in order once, before the store.
template <int S>
__attribute__((always_inline)) inline __m256 LoadColumns(const float* src) {
  if constexpr (S == 1)
    return _mm256_loadu_ps(src);
  else
    return _mm256_shuffle_ps(_mm256_loadu_ps(src), _mm256_loadu_ps(src + 7), _MM_SHUFFLE(3, 1, 2, 0));
}
template <int S>
__attribute__((always_inline)) inline __m256 InColumnOrder(__m256 v) {
  if constexpr (S == 1)
    return v;
  else
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

// NB blocks of 8 output columns of a float MaxPool/AveragePool row at column stride S,
// block b at columns starts[b]: every tap is folded into NB independent registers
// (independent chains, so the adds and maxes overlap) before one store each. `first`
// is the first tap of column 0. max_ps(v, acc) is exactly `v > acc ? v : acc`.
template <PoolKind K, int S, int NB>
__attribute__((always_inline)) inline void FoldBlocks(const PoolGeometry& g, int64_t rows, __m256 divisor,
                                                      const float* first, float* out, const int64_t (&starts)[NB]) {
  const int64_t row_step = g.dilation[0] * g.in[1], dw = g.dilation[1];
  __m256 acc[NB];
  for (int b = 0; b < NB; ++b) {
    acc[b] = K == PoolKind::kMax ? LoadColumns<S>(first + starts[b] * S) : _mm256_setzero_ps();
  }
  for (int64_t kh = 0; kh < rows; ++kh) {
    const float* row = first + kh * row_step;
    for (int64_t kw = K == PoolKind::kMax && kh == 0 ? 1 : 0; kw < g.kernel[1]; ++kw) {
      for (int b = 0; b < NB; ++b) {
        const __m256 v = LoadColumns<S>(row + kw * dw + starts[b] * S);
        acc[b] = K == PoolKind::kMax ? _mm256_max_ps(v, acc[b]) : _mm256_add_ps(acc[b], v);
      }
    }
  }
  for (int b = 0; b < NB; ++b) {
    if constexpr (K == PoolKind::kAverage) acc[b] = _mm256_div_ps(acc[b], divisor);
    _mm256_storeu_ps(out + starts[b], InColumnOrder<S>(acc[b]));
  }
}

// Float MaxPool/AveragePool interior at column stride 1 or 2: 32 columns at a time, then
// the rest (n >= 8) in one call of up to 4 blocks, the last of them ending at column n
// (overlapping its neighbour: those columns are recomputed with the same values).
template <PoolKind K, int S>
void RowAvx2Blocked(const PoolGeometry& g, const PoolOptions& opt, const float* x, float* y, int64_t oh,
                    PoolColumnRange cols) {
  static_assert(K != PoolKind::kLp && (S == 1 || S == 2));
  const int64_t n = cols.end - cols.begin;
  if (n < 8) return RowInterior<K, float, S>(g, opt, x, y, oh, cols);
  const WindowSpan h = SpanOf(g, 0, oh);
  const float* first = x + (h.start + h.lo * g.dilation[0]) * g.in[1] + cols.begin * S - g.pad_begin[1];
  float* out = y + cols.begin;
  const int64_t count = (opt.count_include_pad ? PaddedTaps(g, 0, h) : h.hi - h.lo) * g.kernel[1];
  const __m256 divisor = _mm256_set1_ps(static_cast<float>(count));
  const int64_t rows = h.hi - h.lo;
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) FoldBlocks<K, S, 4>(g, rows, divisor, first, out, {j, j + 8, j + 16, j + 24});
  const int64_t last = n - 8;
  switch ((n - j + 7) / 8) {
    case 1:
      return FoldBlocks<K, S, 1>(g, rows, divisor, first, out, {last});
    case 2:
      return FoldBlocks<K, S, 2>(g, rows, divisor, first, out, {j, last});
    case 3:
      return FoldBlocks<K, S, 3>(g, rows, divisor, first, out, {j, j + 8, last});
    case 4:
      return FoldBlocks<K, S, 4>(g, rows, divisor, first, out, {j, j + 8, j + 16, last});
    default:
      return;  // n is a multiple of 32
  }
}
// 32 byte columns src[0], src[S], ..., src[31 * S], reading nothing past src[31 * S]. At
// S == 2 the even bytes of src[0..31] (columns 0-15) and the odd ones of src[31..62]
// (columns 16-31) are widened to 16 bits and packed back per 128-bit lane, giving the
// order 0-7 16-23 8-15 24-31; the max is elementwise, so Order puts the result
// in order once, before the store. packus is exact here: every 16-bit value is 0..255,
// the byte's bit pattern, whether the bytes are int8 or uint8.
// The byte lanes of ByteMaxRow (pool_byte_rows_simd.h): 32 columns a register.
struct ByteLanesAvx2 {
  using Reg = __m256i;
  static constexpr int64_t kBytes = 32;
  template <int S>
  __attribute__((always_inline)) static __m256i Load(const void* src) {
    const auto* p = static_cast<const char*>(src);
    if constexpr (S == 1) {
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    } else {
      const __m256i even =
          _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), _mm256_set1_epi16(0x00FF));
      const __m256i odd = _mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 31)), 8);
      return _mm256_packus_epi16(even, odd);
    }
  }
  template <int S>
  __attribute__((always_inline)) static __m256i Order(__m256i v) {
    if constexpr (S == 1)
      return v;
    else
      return _mm256_permute4x64_epi64(v, _MM_SHUFFLE(3, 1, 2, 0));
  }
  template <typename T>
  __attribute__((always_inline)) static __m256i Max(__m256i a, __m256i b) {
    if constexpr (std::is_same_v<T, int8_t>)
      return _mm256_max_epi8(a, b);
    else
      return _mm256_max_epu8(a, b);
  }
  template <typename T>
  __attribute__((always_inline)) static void Store(T* dst, Reg v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  }
};
}  // namespace

// Float MaxPool/AveragePool at column strides 1 and 2 in register blocks, int8/uint8
// MaxPool likewise (32 bytes a register); the rest is the interior loop compiled with AVX2.
extern const PoolRowKernels kPoolRowsAvx2 = {
    {InteriorRow<PoolKind::kMax, float, 0>, RowAvx2Blocked<PoolKind::kMax, 1>, RowAvx2Blocked<PoolKind::kMax, 2>},
    {InteriorRow<PoolKind::kAverage, float, 0>, RowAvx2Blocked<PoolKind::kAverage, 1>,
     RowAvx2Blocked<PoolKind::kAverage, 2>},
    OL_POOL_INTERIOR_ROWS(kLp, float),
    OL_POOL_INTERIOR_ROWS(kMax, double),
    OL_POOL_INTERIOR_ROWS(kAverage, double),
    OL_POOL_INTERIOR_ROWS(kLp, double),
    {InteriorRow<PoolKind::kMax, int8_t, 0>, ByteMaxRow<ByteLanesAvx2, int8_t, 1>,
     ByteMaxRow<ByteLanesAvx2, int8_t, 2>},
    {InteriorRow<PoolKind::kMax, uint8_t, 0>, ByteMaxRow<ByteLanesAvx2, uint8_t, 1>,
     ByteMaxRow<ByteLanesAvx2, uint8_t, 2>},
};

}  // namespace onnx_light
#endif  // defined(__x86_64__)
