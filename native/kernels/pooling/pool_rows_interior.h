// The interior-row kernels of the 2-D pools (pool_rows.h), shared by the baseline file
// (pool_rows.cc) and the AVX2 one (pool_rows_avx2.cc, compiled with AVX2 flags). Internal
// to them. The templates sit in an anonymous namespace and call no inline function with
// external linkage, so each file keeps its own copies (native/kernels/common/README.md).
#pragma once

#include <cstdint>

#include "native/kernels/pooling/pool_geometry.h"
#include "native/kernels/pooling/pool_window.h"

namespace onnx_light {

// Output columns [begin, end) of a row.
struct PoolColumnRange {
  int64_t begin = 0, end = 0;
};

// Output row `oh` of one plane, columns `cols` (all of whose horizontal taps lie inside
// the input), of x_plane into y_row.
template <typename T>
using PoolRowFn = void (*)(const PoolGeometry& g, const PoolOptions& opt, const T* x_plane, T* y_row, int64_t oh,
                           PoolColumnRange cols);

// One ISA's interior-row kernels, by kind and type, each indexed by column stride: [0]
// any stride, [1] stride 1, [2] stride 2. The byte types have MaxPool only (the one
// window pool ONNX defines on them).
struct PoolRowKernels {
  PoolRowFn<float> max_float[3], average_float[3], lp_float[3];
  PoolRowFn<double> max_double[3], average_double[3], lp_double[3];
  PoolRowFn<int8_t> max_int8[3];
  PoolRowFn<uint8_t> max_uint8[3];
};

// The byte MaxPool rows of an ISA that has only those (pool_rows.cc takes the rest of its
// table from the level below).
struct PoolRowByteKernels {
  PoolRowFn<int8_t> max_int8[3];
  PoolRowFn<uint8_t> max_uint8[3];
};

extern const PoolRowKernels kPoolRowsPortable;  // pool_rows.cc
#if defined(__x86_64__)
extern const PoolRowKernels kPoolRowsAvx2;            // pool_rows_avx2.cc: AVX2, never contracted to FMA
extern const PoolRowByteKernels kPoolByteRowsAvx512;  // pool_rows_avx512.cc: AVX-512BW byte max
#elif defined(__aarch64__)
extern const PoolRowByteKernels kPoolByteRowsNeon;  // pool_rows_neon.cc: NEON byte max
#endif

namespace {

// Taps along dimension d inside the padded input, for AveragePool's count_include_pad.
int64_t PaddedTaps(const PoolGeometry& g, int d, const WindowSpan& s) {
  const int64_t reach = g.in[d] + g.pad_end[d] - s.start, dil = g.dilation[d];
  const int64_t taps = dil == 1 ? reach : (reach + dil - 1) / dil;
  return taps < g.kernel[d] ? taps : g.kernel[d];
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
                                                       T* y_row, int64_t oh, PoolColumnRange cols) {
  const WindowSpan h = SpanOf(g, 0, oh);
  const int64_t n = cols.end - cols.begin, stride = g.stride[1];
  T* acc = y_row + cols.begin;
  const T* base = x_plane + cols.begin * stride - g.pad_begin[1];
  // MaxPool takes its first tap unconditionally (a NaN there wins); the sums start at 0.
  bool first = K == PoolKind::kMax;
  if constexpr (K != PoolKind::kMax) {
    for (int64_t j = 0; j < n; ++j) acc[j] = T(0);
  }
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

// RowInterior as a PoolRowFn.
template <PoolKind K, typename T, int S>
void InteriorRow(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t oh, PoolColumnRange cols) {
  RowInterior<K, T, S>(g, opt, x, y, oh, cols);
}

}  // namespace

// A PoolRowKernels row of InteriorRow at every column stride, for the tables' initializers.
#define OL_POOL_INTERIOR_ROWS(K, T) \
  { InteriorRow<PoolKind::K, T, 0>, InteriorRow<PoolKind::K, T, 1>, InteriorRow<PoolKind::K, T, 2> }

}  // namespace onnx_light
