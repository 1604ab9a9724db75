#include "native/kernels/pooling/pool_rows.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "native/kernels/common/isa_variants.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace {

struct ColumnRange {
  int64_t begin = 0, end = 0;
};

// Taps along dimension d inside the padded input, for AveragePool's count_include_pad.
int64_t PaddedTaps(const PoolGeometry& g, int d, const WindowSpan& s) {
  const int64_t reach = g.in[d] + g.pad_end[d] - s.start, dil = g.dilation[d];
  return std::min(g.kernel[d], dil == 1 ? reach : (reach + dil - 1) / dil);
}

// One window tap across the row's interior columns: acc[j] folds src[j * step], in the
// generic path's per-output order. S is the column stride when known at compile time
// (1, 2: the loads the vectoriser turns into contiguous or de-interleaved vectors), else 0.
template <PoolKind K, typename T, int S>
__attribute__((always_inline)) inline void FoldTap(T* __restrict acc, const T* __restrict src, int64_t n,
                                                   int64_t stride, int64_t p) {
  const int64_t step = S > 0 ? S : stride;
  for (int64_t j = 0; j < n; ++j) {
    const T v = src[j * step];
    if constexpr (K == PoolKind::kMax)
      acc[j] = v > acc[j] ? v : acc[j];  // NaN taps after the first lose
    else if constexpr (K == PoolKind::kAverage)
      acc[j] += v;
    else
      acc[j] += LpPower(v, p);
  }
}

template <PoolKind K, typename T, int S>
__attribute__((always_inline)) inline void RowInterior(const PoolGeometry& g, const PoolOptions& opt, const T* x_plane,
                                                       T* y_row, int64_t oh, ColumnRange cols) {
  const WindowSpan h = SpanOf(g, 0, oh);
  const int64_t n = cols.end - cols.begin, stride = g.stride[1];
  T* acc = y_row + cols.begin;
  const T* base = x_plane + cols.begin * stride - g.pad_begin[1];
  // MaxPool takes its first tap unconditionally (a NaN there wins); the sums start at 0.
  bool first = K == PoolKind::kMax;
  if constexpr (K != PoolKind::kMax) std::fill(acc, acc + n, T(0));
  for (int64_t kh = h.lo; kh < h.hi; ++kh) {
    const T* row = base + (h.start + kh * g.dilation[0]) * g.in[1];
    for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
      const T* src = row + kw * g.dilation[1];
      if (first) {
        const int64_t step = S > 0 ? S : stride;
        for (int64_t j = 0; j < n; ++j) acc[j] = src[j * step];
        first = false;
      } else {
        FoldTap<K, T, S>(acc, src, n, stride, opt.p);
      }
    }
  }
  if constexpr (K == PoolKind::kAverage) {
    // Interior columns have all kernel[1] taps; the rows may be cut by the top/bottom edge.
    const int64_t count = (opt.count_include_pad ? PaddedTaps(g, 0, h) : h.hi - h.lo) * g.kernel[1];
    const T divisor = static_cast<T>(count);
    for (int64_t j = 0; j < n; ++j) acc[j] = acc[j] / divisor;
  } else if constexpr (K == PoolKind::kLp) {
    for (int64_t j = 0; j < n; ++j) acc[j] = LpRoot(acc[j], opt.p);
  }
}

// Output column `ow` with bounds-checked taps (the row's border columns), folded in the
// generic path's order.
template <PoolKind K, typename T>
T BorderOutput(const PoolGeometry& g, const PoolOptions& opt, const T* x_plane, const WindowSpan& h, int64_t ow) {
  const WindowSpan w = SpanOf(g, 1, ow);
  T acc = K == PoolKind::kMax ? -std::numeric_limits<T>::infinity() : T(0);
  bool first = true;
  for (int64_t kh = h.lo; kh < h.hi; ++kh) {
    const T* row = x_plane + (h.start + kh * g.dilation[0]) * g.in[1] + w.start;
    for (int64_t kw = w.lo; kw < w.hi; ++kw) {
      const T v = row[kw * g.dilation[1]];
      if constexpr (K == PoolKind::kMax)
        acc = first || v > acc ? v : acc;
      else if constexpr (K == PoolKind::kAverage)
        acc += v;
      else
        acc += LpPower(v, opt.p);
      first = false;
    }
  }
  if constexpr (K == PoolKind::kAverage) {
    const int64_t count =
        opt.count_include_pad ? PaddedTaps(g, 0, h) * PaddedTaps(g, 1, w) : (h.hi - h.lo) * (w.hi - w.lo);
    return count > 0 ? acc / static_cast<T>(count) : T(0);
  } else if constexpr (K == PoolKind::kLp) {
    return LpRoot(acc, opt.p);
  }
  return acc;
}

template <PoolKind K, typename T>
using RowFn = void (*)(const PoolGeometry&, const PoolOptions&, const T*, T*, int64_t, ColumnRange);

template <PoolKind K, typename T, int S>
void RowPortable(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t oh, ColumnRange cols) {
  RowInterior<K, T, S>(g, opt, x, y, oh, cols);
}

#if defined(__x86_64__)
// AVX2 without FMA: the folds must not contract, so that they match the generic path.
template <PoolKind K, typename T, int S>
__attribute__((target("avx2"))) void RowAvx2(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y,
                                             int64_t oh, ColumnRange cols) {
  RowInterior<K, T, S>(g, opt, x, y, oh, cols);
}

// 8 floats at src[0], src[S], ..., src[7 * S], reading nothing past src[7 * S]. At S == 2
// they come in the order of columns 0 1 4 5 2 3 6 7 (one shuffle: even elements of
// src[0..7] and odd ones of src[7..14] per 128-bit lane); the folds are elementwise, so
// InColumnOrder puts the result in order once, before the store.
template <int S>
__attribute__((target("avx2"), always_inline)) inline __m256 LoadColumns(const float* src) {
  if constexpr (S == 1)
    return _mm256_loadu_ps(src);
  else
    return _mm256_shuffle_ps(_mm256_loadu_ps(src), _mm256_loadu_ps(src + 7), _MM_SHUFFLE(3, 1, 2, 0));
}
template <int S>
__attribute__((target("avx2"), always_inline)) inline __m256 InColumnOrder(__m256 v) {
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
__attribute__((target("avx2"), always_inline)) inline void FoldBlocks(const PoolGeometry& g, int64_t rows,
                                                                      __m256 divisor, const float* first, float* out,
                                                                      const int64_t (&starts)[NB]) {
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
__attribute__((target("avx2"))) void RowAvx2Blocked(const PoolGeometry& g, const PoolOptions& opt, const float* x,
                                                    float* y, int64_t oh, ColumnRange cols) {
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
#endif

// The interior row kernel of one variant (see PoolRowsVariants()).
template <PoolKind K, typename T, int S>
RowFn<K, T> SelectIsa(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx2) {
    if constexpr (std::is_same_v<T, float> && K != PoolKind::kLp && (S == 1 || S == 2)) {
      return &RowAvx2Blocked<K, S>;
    } else {
      return &RowAvx2<K, T, S>;
    }
  }
#endif
  return &RowPortable<K, T, S>;
}

// Output columns [begin, end) whose horizontal window lies inside the input.
ColumnRange InteriorColumns(const PoolGeometry& g) {
  const int64_t out = g.out[1], stride = g.stride[1], pad = g.pad_begin[1];
  const int64_t last_start = g.in[1] - 1 - (g.kernel[1] - 1) * g.dilation[1];  // last in-bounds window start
  ColumnRange c;
  c.begin = std::min(out, (pad + stride - 1) / stride);
  const int64_t end = last_start + pad < 0 ? 0 : (last_start + pad) / stride + 1;
  c.end = std::clamp(end, c.begin, out);
  return c;
}

// Asks for the input rows under output row r (of the flattened [N*C, out rows] space)
// ahead of use: a row's first loads otherwise wait on memory for each new input row.
template <typename T>
void PrefetchWindowRows(const PoolGeometry& g, const T* x, int64_t r) {
  const WindowSpan h = SpanOf(g, 0, r % g.out[0]);
  const char* plane = reinterpret_cast<const char*>(x + r / g.out[0] * g.in_plane);
  const int64_t row_bytes = g.in[1] * static_cast<int64_t>(sizeof(T));
  for (int64_t kh = h.lo; kh < h.hi; ++kh) {
    const char* row = plane + (h.start + kh * g.dilation[0]) * row_bytes;
    for (int64_t at = 0; at < row_bytes; at += 64) __builtin_prefetch(row + at);
  }
}

// Rows [begin, end) with the interior kernels of one variant, by column stride (0: other).
template <PoolKind K, typename T>
void PoolRowsWith(const RowFn<K, T> (&by_stride)[3], const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y,
                  int64_t begin, int64_t end) {
  const RowFn<K, T> interior = by_stride[g.stride[1] <= 2 ? g.stride[1] : 0];
  const ColumnRange inside = InteriorColumns(g);
  for (int64_t r = begin; r < end; ++r) {
    if (r + 1 < end) PrefetchWindowRows(g, x, r + 1);
    const int64_t oh = r % g.out[0];
    const T* x_plane = x + r / g.out[0] * g.in_plane;
    T* y_row = y + r * g.out[1];
    const WindowSpan h = SpanOf(g, 0, oh);
    // A row whose window misses the input vertically has only border columns.
    const ColumnRange cols = h.lo == h.hi ? ColumnRange{g.out[1], g.out[1]} : inside;
    for (int64_t ow = 0; ow < cols.begin; ++ow) y_row[ow] = BorderOutput<K, T>(g, opt, x_plane, h, ow);
    if (cols.begin < cols.end) interior(g, opt, x_plane, y_row, oh, cols);
    for (int64_t ow = cols.end; ow < g.out[1]; ++ow) y_row[ow] = BorderOutput<K, T>(g, opt, x_plane, h, ow);
  }
}

}  // namespace

const std::vector<IsaVariant<Isa>>& PoolRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<Isa>> {
#if defined(__x86_64__)
    {"avx2", Isa::kAvx2, Isa::kAvx2},
#endif
        {"portable", Isa::kPortable, Isa::kPortable},
  };
  return *variants;
}

template <PoolKind K, typename T>
void PoolRows2d(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin, int64_t end) {
  static const Isa isa = BestVariant(PoolRowsVariants()).impl;
  static const RowFn<K, T> by_stride[3] = {SelectIsa<K, T, 0>(isa), SelectIsa<K, T, 1>(isa), SelectIsa<K, T, 2>(isa)};
  PoolRowsWith<K, T>(by_stride, g, opt, x, y, begin, end);
}

template <PoolKind K, typename T>
void PoolRows2dVariant(Isa variant, const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin,
                       int64_t end) {
  const RowFn<K, T> by_stride[3] = {SelectIsa<K, T, 0>(variant), SelectIsa<K, T, 1>(variant),
                                    SelectIsa<K, T, 2>(variant)};
  PoolRowsWith<K, T>(by_stride, g, opt, x, y, begin, end);
}

#define OL_POOL_ROWS(K, T)                                                                                 \
  template void PoolRows2d<K, T>(const PoolGeometry&, const PoolOptions&, const T*, T*, int64_t, int64_t); \
  template void PoolRows2dVariant<K, T>(Isa, const PoolGeometry&, const PoolOptions&, const T*, T*, int64_t, int64_t);
OL_POOL_ROWS(PoolKind::kMax, float)
OL_POOL_ROWS(PoolKind::kMax, double)
OL_POOL_ROWS(PoolKind::kAverage, float)
OL_POOL_ROWS(PoolKind::kAverage, double)
OL_POOL_ROWS(PoolKind::kLp, float)
OL_POOL_ROWS(PoolKind::kLp, double)
#undef OL_POOL_ROWS

}  // namespace onnx_light
