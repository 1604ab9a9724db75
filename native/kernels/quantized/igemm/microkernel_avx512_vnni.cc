// AVX-512 VNNI integer microkernel, 12 x 32 tiles and their edge tiles: a signed B takes the byte tile
// (vpdpbusd: four u8 x s8 products summed into int32; an int8 A arrives shifted to uint8),
// an unsigned B the 16-bit pair tile with vpdpwssd (pair products summed into int32). Both
// exact, accumulation wrapping. Compiled by isa_library(isa = "avx512") plus -mavx512vnni;
// reached only when the CPU has VNNI.
#include "native/kernels/quantized/igemm/igemm_kernel.h"

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

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512) and the
// CPU has AVX512-VNNI.
extern const IgemmKernel kIgemmAvx512VnniKernel = {
    "avx512_vnni", kMr, kNr, Tile, Requantize, TileU8S8, EdgeTile<PairFormat>, EdgeTile<ByteFormat>};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
