#include "native/kernels/pooling/pool_rows.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <type_traits>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {

extern const PoolRowKernels kPoolRowsPortable = {
    OL_POOL_INTERIOR_ROWS(kMax, float),  OL_POOL_INTERIOR_ROWS(kAverage, float),  OL_POOL_INTERIOR_ROWS(kLp, float),
    OL_POOL_INTERIOR_ROWS(kMax, double), OL_POOL_INTERIOR_ROWS(kAverage, double), OL_POOL_INTERIOR_ROWS(kLp, double),
    OL_POOL_INTERIOR_ROWS(kMax, int8_t), OL_POOL_INTERIOR_ROWS(kMax, uint8_t),
};

namespace {

// Output column `ow` with bounds-checked taps (the row's border columns), folded in the
// generic path's order.
template <PoolKind K, typename T>
T BorderOutput(const PoolGeometry& g, const PoolOptions& opt, const T* x_plane, const WindowSpan& h, int64_t ow) {
  const WindowSpan w = SpanOf(g, 1, ow);
  // An output with no tap (its window wholly in the padding) keeps the identity of max:
  // -inf, or the integer type's minimum, as in the generic path.
  T acc = T(0);
  if constexpr (K == PoolKind::kMax) {
    acc = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  }
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

// The kernels of one variant (see PoolRowsVariants()).
const PoolRowKernels& KernelsOf(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) {  // the AVX2 table with the AVX-512 byte rows
    static const PoolRowKernels* avx512 = [] {
      auto* k = new PoolRowKernels(kPoolRowsAvx2);
      std::copy(std::begin(kPoolByteRowsAvx512.max_int8), std::end(kPoolByteRowsAvx512.max_int8), k->max_int8);
      std::copy(std::begin(kPoolByteRowsAvx512.max_uint8), std::end(kPoolByteRowsAvx512.max_uint8), k->max_uint8);
      return k;
    }();
    return *avx512;
  }
  if (isa == Isa::kAvx2) return kPoolRowsAvx2;
#elif defined(__aarch64__)
  if (isa == Isa::kNeon) {  // the portable table with the NEON byte rows
    static const PoolRowKernels* neon = [] {
      auto* k = new PoolRowKernels(kPoolRowsPortable);
      std::copy(std::begin(kPoolByteRowsNeon.max_int8), std::end(kPoolByteRowsNeon.max_int8), k->max_int8);
      std::copy(std::begin(kPoolByteRowsNeon.max_uint8), std::end(kPoolByteRowsNeon.max_uint8), k->max_uint8);
      return k;
    }();
    return *neon;
  }
#endif
  return kPoolRowsPortable;
}

template <PoolKind K, typename T>
const PoolRowFn<T> (&ByStride(const PoolRowKernels& kernels))[3] {
  if constexpr (std::is_same_v<T, int8_t>) {
    static_assert(K == PoolKind::kMax);
    return kernels.max_int8;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    static_assert(K == PoolKind::kMax);
    return kernels.max_uint8;
  } else if constexpr (std::is_same_v<T, float>) {
    if constexpr (K == PoolKind::kMax)
      return kernels.max_float;
    else if constexpr (K == PoolKind::kAverage)
      return kernels.average_float;
    else
      return kernels.lp_float;
  } else {
    if constexpr (K == PoolKind::kMax)
      return kernels.max_double;
    else if constexpr (K == PoolKind::kAverage)
      return kernels.average_double;
    else
      return kernels.lp_double;
  }
}

// Output columns [begin, end) whose horizontal window lies inside the input.
PoolColumnRange InteriorColumns(const PoolGeometry& g) {
  const int64_t out = g.out[1], stride = g.stride[1], pad = g.pad_begin[1];
  const int64_t last_start = g.in[1] - 1 - (g.kernel[1] - 1) * g.dilation[1];  // last in-bounds window start
  PoolColumnRange c;
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
void PoolRowsWith(const PoolRowFn<T> (&by_stride)[3], const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y,
                  int64_t begin, int64_t end) {
  const PoolRowFn<T> interior = by_stride[g.stride[1] <= 2 ? g.stride[1] : 0];
  const PoolColumnRange inside = InteriorColumns(g);
  for (int64_t r = begin; r < end; ++r) {
    if (r + 1 < end) PrefetchWindowRows(g, x, r + 1);
    const int64_t oh = r % g.out[0];
    const T* x_plane = x + r / g.out[0] * g.in_plane;
    T* y_row = y + r * g.out[1];
    const WindowSpan h = SpanOf(g, 0, oh);
    // A row whose window misses the input vertically has only border columns.
    const PoolColumnRange cols = h.lo == h.hi ? PoolColumnRange{g.out[1], g.out[1]} : inside;
    for (int64_t ow = 0; ow < cols.begin; ++ow) y_row[ow] = BorderOutput<K, T>(g, opt, x_plane, h, ow);
    if (cols.begin < cols.end) interior(g, opt, x_plane, y_row, oh, cols);
    for (int64_t ow = cols.end; ow < g.out[1]; ++ow) y_row[ow] = BorderOutput<K, T>(g, opt, x_plane, h, ow);
  }
}

}  // namespace

const std::vector<IsaVariant<Isa>>& PoolRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<Isa>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, Isa::kAvx512}, {"avx2", Isa::kAvx2, Isa::kAvx2},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, Isa::kNeon},
#endif
        {"portable", Isa::kPortable, Isa::kPortable},
  };
  return *variants;
}

template <PoolKind K, typename T>
void PoolRows2d(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin, int64_t end) {
  static const PoolRowKernels& kernels = KernelsOf(BestVariant(PoolRowsVariants()).impl);
  PoolRowsWith<K, T>(ByStride<K, T>(kernels), g, opt, x, y, begin, end);
}

template <PoolKind K, typename T>
void PoolRows2dVariant(Isa variant, const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin,
                       int64_t end) {
  PoolRowsWith<K, T>(ByStride<K, T>(KernelsOf(variant)), g, opt, x, y, begin, end);
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
OL_POOL_ROWS(PoolKind::kMax, int8_t)
OL_POOL_ROWS(PoolKind::kMax, uint8_t)
#undef OL_POOL_ROWS

}  // namespace onnx_light
