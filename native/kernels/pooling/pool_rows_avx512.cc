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

#include "native/kernels/pooling/pool_byte_rows_simd.h"
#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {
namespace {

// 64 byte columns src[0], src[S], ..., src[63 * S], reading nothing past src[63 * S]. At
// S == 2 the even bytes of src[0..63] (columns 0-31) and the odd ones of src[63..126]
// (columns 32-63) are widened to 16 bits and packed back per 128-bit lane (order 0-7
// 32-39 8-15 40-47 16-23 48-55 24-31 56-63); the max is elementwise, so Order
// puts the result in order once, before the store. packus is exact: every 16-bit value is
// 0..255, the byte's bit pattern.
// The byte lanes of ByteMaxRow (pool_byte_rows_simd.h): 64 columns a register.
struct ByteLanesAvx512 {
  using Reg = __m512i;
  static constexpr int64_t kBytes = 64;
  template <int S>
  __attribute__((always_inline)) static __m512i Load(const void* src) {
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
  __attribute__((always_inline)) static __m512i Order(__m512i v) {
    if constexpr (S == 1)
      return v;
    else  // 64-bit elements in the order 0 2 4 6 1 3 5 7
      return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), v);
  }
  template <typename T>
  __attribute__((always_inline)) static __m512i Max(__m512i a, __m512i b) {
    if constexpr (std::is_same_v<T, int8_t>)
      return _mm512_max_epi8(a, b);
    else
      return _mm512_max_epu8(a, b);
  }
  template <typename T>
  __attribute__((always_inline)) static void Store(T* dst, Reg v) {
    _mm512_storeu_si512(dst, v);
  }
};

}  // namespace

extern const PoolRowByteKernels kPoolByteRowsAvx512 = {
    {InteriorRow<PoolKind::kMax, int8_t, 0>, ByteMaxRow<ByteLanesAvx512, int8_t, 1>,
     ByteMaxRow<ByteLanesAvx512, int8_t, 2>},
    {InteriorRow<PoolKind::kMax, uint8_t, 0>, ByteMaxRow<ByteLanesAvx512, uint8_t, 1>,
     ByteMaxRow<ByteLanesAvx512, uint8_t, 2>},
};

}  // namespace onnx_light
#endif  // defined(__x86_64__)
