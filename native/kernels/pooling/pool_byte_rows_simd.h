// The int8/uint8 MaxPool interior row of PoolRowsVariants' SIMD kernels, one algorithm for
// every vector width; included by each ISA file (pool_rows_avx2.cc, pool_rows_avx512.cc,
// pool_rows_neon.cc),
// which compiles it with its own flags and supplies the lanes L:
//   L::Reg, L::kBytes             a register of kBytes byte columns
//   L::Load<S>(const void* src)   columns src[0], src[S], ..., src[(kBytes - 1) * S], reading
//                                 nothing past the last; at S == 2 in a lane order of L's own
//   L::Max<T>(a, b)               bytewise max, signed for int8, unsigned for uint8
//   L::Order<S>(v)                L::Load<S>'s lane order back to column order
//   L::Store(T* dst, v)           kBytes bytes
// Every tap of a block is folded in a register before one store; the last block ends at
// column n, overlapping its neighbour, whose columns it recomputes with the same values. A
// max of integers does not depend on the fold order, so this equals the portable path;
// rows narrower than a register take the compiler-vectorised interior loop.
#pragma once

#include <cstdint>

#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {

template <class L, typename T, int S>
void ByteMaxRow(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t oh, PoolColumnRange cols) {
  static_assert(S == 1 || S == 2);
  const int64_t n = cols.end - cols.begin;
  if (n < L::kBytes) return RowInterior<PoolKind::kMax, T, S>(g, opt, x, y, oh, cols);
  const WindowSpan h = SpanOf(g, 0, oh);
  const T* first = x + (h.start + h.lo * g.dilation[0]) * g.in[1] + cols.begin * S - g.pad_begin[1];
  T* out = y + cols.begin;
  const int64_t rows = h.hi - h.lo, row_step = g.dilation[0] * g.in[1], dw = g.dilation[1], kw_end = g.kernel[1];
  for (int64_t j = 0; j < n; j += L::kBytes) {
    const int64_t at = j + L::kBytes <= n ? j : n - L::kBytes;
    const T* block = first + at * S;
    typename L::Reg acc = L::template Load<S>(block);
    for (int64_t kh = 0; kh < rows; ++kh) {
      const T* row = block + kh * row_step;
      for (int64_t kw = kh == 0 ? 1 : 0; kw < kw_end; ++kw) {
        acc = L::template Max<T>(acc, L::template Load<S>(row + kw * dw));
      }
    }
    L::Store(out + at, L::template Order<S>(acc));
  }
}

}  // namespace onnx_light
