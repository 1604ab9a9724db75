// The AVX-512 interior rows of the 2-D pools (PoolRowsVariants' "avx512"): int8/uint8
// MaxPool at column strides 1 and 2, 64 bytes a register (AVX-512BW byte max). The other
// kinds and types take the AVX2 kernels (pool_rows.cc composes the table). Compiled with
// AVX-512 flags by isa_library; reached only after IsaEnabled(kAvx512).
#if defined(__x86_64__)
#if !defined(__AVX512BW__)
#error "pool_rows_avx512.cc needs AVX-512 flags (isa_library isa = \"avx512\")"
#endif
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {
namespace {

// 64 byte columns src[0], src[S], ..., src[63 * S], reading nothing past src[63 * S]. At
// S == 2 the even bytes of src[0..63] (columns 0-31) and the odd ones of src[63..126]
// (columns 32-63) are widened to 16 bits and packed back per 128-bit lane (order 0-7
// 32-39 8-15 40-47 16-23 48-55 24-31 56-63); the max is elementwise, so ByteColumnOrder
// puts the result in order once, before the store. packus is exact: every 16-bit value is
// 0..255, the byte's bit pattern.
template <int S>
__attribute__((always_inline)) inline __m512i LoadByteColumns(const void* src) {
  const auto* p = static_cast<const char*>(src);
  if constexpr (S == 1) {
    return _mm512_loadu_si512(p);
  } else {
    const __m512i even = _mm512_and_si512(_mm512_loadu_si512(p), _mm512_set1_epi16(0x00FF));
    const __m512i odd = _mm512_srli_epi16(_mm512_loadu_si512(p + 63), 8);
    return _mm512_packus_epi16(even, odd);
  }
}
template <int S>
__attribute__((always_inline)) inline __m512i ByteColumnOrder(__m512i v) {
  if constexpr (S == 1)
    return v;
  else  // 64-bit elements in the order 0 2 4 6 1 3 5 7
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), v);
}
template <typename T>
__attribute__((always_inline)) inline __m512i MaxBytes(__m512i a, __m512i b) {
  if constexpr (std::is_same_v<T, int8_t>)
    return _mm512_max_epi8(a, b);
  else
    return _mm512_max_epu8(a, b);
}

// As ByteMaxRowAvx2 (pool_rows_avx2.cc) with 64 columns per register; rows narrower than
// that take the compiler-vectorised interior loop.
template <typename T, int S>
void ByteMaxRowAvx512(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t oh,
                      PoolColumnRange cols) {
  static_assert(S == 1 || S == 2);
  const int64_t n = cols.end - cols.begin;
  if (n < 64) return RowInterior<PoolKind::kMax, T, S>(g, opt, x, y, oh, cols);
  const WindowSpan h = SpanOf(g, 0, oh);
  const T* first = x + (h.start + h.lo * g.dilation[0]) * g.in[1] + cols.begin * S - g.pad_begin[1];
  T* out = y + cols.begin;
  const int64_t rows = h.hi - h.lo, row_step = g.dilation[0] * g.in[1], dw = g.dilation[1], kw_end = g.kernel[1];
  for (int64_t j = 0; j < n; j += 64) {
    const int64_t at = j + 64 <= n ? j : n - 64;
    const T* block = first + at * S;
    __m512i acc = LoadByteColumns<S>(block);
    for (int64_t kh = 0; kh < rows; ++kh) {
      const T* row = block + kh * row_step;
      for (int64_t kw = kh == 0 ? 1 : 0; kw < kw_end; ++kw) acc = MaxBytes<T>(acc, LoadByteColumns<S>(row + kw * dw));
    }
    _mm512_storeu_si512(out + at, ByteColumnOrder<S>(acc));
  }
}

}  // namespace

extern const PoolRowByteKernels kPoolByteRowsAvx512 = {
    {InteriorRow<PoolKind::kMax, int8_t, 0>, ByteMaxRowAvx512<int8_t, 1>, ByteMaxRowAvx512<int8_t, 2>},
    {InteriorRow<PoolKind::kMax, uint8_t, 0>, ByteMaxRowAvx512<uint8_t, 1>, ByteMaxRowAvx512<uint8_t, 2>},
};

}  // namespace onnx_light
#endif  // defined(__x86_64__)
