// The NEON interior rows of the 2-D pools (PoolRowsVariants' "neon"): int8/uint8 MaxPool
// at column strides 1 and 2, 16 bytes a register. The other kinds and types take the
// portable kernels (pool_rows.cc composes the table). NEON is the aarch64 baseline: built
// as isa_library(isa = "neon"), reached only through PoolRowsVariants().
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstdint>
#include <type_traits>

#include "native/kernels/pooling/pool_byte_rows_simd.h"
#include "native/kernels/pooling/pool_rows_interior.h"

namespace onnx_light {
namespace {

// 16 byte columns src[0], src[S], ..., src[15 * S], reading nothing past src[15 * S]. At
// S == 2 the even bytes of src[0..15] (columns 0-7, the low byte of each 16-bit element:
// xtn) and the odd ones of src[15..30] (columns 8-15, the high bytes: shrn #8) fill the
// register's low and high halves, already in column order.
// The byte lanes of ByteMaxRow (pool_byte_rows_simd.h): 16 columns a register.
struct ByteLanesNeon {
  using Reg = uint8x16_t;
  static constexpr int64_t kBytes = 16;
  template <int S>
  __attribute__((always_inline)) static uint8x16_t Load(const void* src) {
    const auto* p = static_cast<const uint8_t*>(src);
    if constexpr (S == 1) {
      return vld1q_u8(p);
    } else {
      const uint16x8_t even = vreinterpretq_u16_u8(vld1q_u8(p));
      const uint16x8_t odd = vreinterpretq_u16_u8(vld1q_u8(p + 15));
      return vshrn_high_n_u16(vmovn_u16(even), odd, 8);
    }
  }
  template <int S>
  __attribute__((always_inline)) static uint8x16_t Order(uint8x16_t v) {
    return v;
  }
  template <typename T>
  __attribute__((always_inline)) static uint8x16_t Max(uint8x16_t a, uint8x16_t b) {
    if constexpr (std::is_same_v<T, int8_t>)
      return vreinterpretq_u8_s8(vmaxq_s8(vreinterpretq_s8_u8(a), vreinterpretq_s8_u8(b)));
    else
      return vmaxq_u8(a, b);
  }
  template <typename T>
  __attribute__((always_inline)) static void Store(T* dst, Reg v) {
    vst1q_u8(reinterpret_cast<uint8_t*>(dst), v);
  }
};

}  // namespace

extern const PoolRowByteKernels kPoolByteRowsNeon = {
    {InteriorRow<PoolKind::kMax, int8_t, 0>, ByteMaxRow<ByteLanesNeon, int8_t, 1>,
     ByteMaxRow<ByteLanesNeon, int8_t, 2>},
    {InteriorRow<PoolKind::kMax, uint8_t, 0>, ByteMaxRow<ByteLanesNeon, uint8_t, 1>,
     ByteMaxRow<ByteLanesNeon, uint8_t, 2>},
};

}  // namespace onnx_light
#endif  // defined(__aarch64__)
