// AVX-512 VNNI integer microkernel, 12 x 32 tiles: a signed B takes the byte tile
// (vpdpbusd: four u8 x s8 products summed into int32; an int8 A arrives shifted to uint8),
// an unsigned B the 16-bit pair tile with vpdpwssd (pair products summed into int32). Both
// exact, accumulation wrapping. Compiled by isa_library(isa = "avx512") plus -mavx512vnni;
// reached only when the CPU has VNNI.
#include "native/kernels/quantized/igemm/igemm_kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512BW__) || !defined(__AVX512VNNI__)
#error "build with isa_library(isa = \"avx512\") and -mavx512vnni"
#endif

namespace onnx_light {
namespace igemm {
namespace {

#define OL_IGEMM_MADD(acc, a, b) _mm512_dpwssd_epi32((acc), (a), (b))
#include "native/kernels/quantized/igemm/microkernel_avx512.inc"
#undef OL_IGEMM_MADD

void TileU8S8(int64_t kq, const uint8_t* a, const int8_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  __m512i acc0[kMr], acc1[kMr];
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) acc0[i] = acc1[i] = _mm512_setzero_si512();
  for (int64_t q = 0; q < kq; ++q) {
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 64);
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, a + 4 * i, sizeof(quad));
      const __m512i ai = _mm512_set1_epi32(quad);
      acc0[i] = _mm512_dpbusd_epi32(acc0[i], ai, b0);
      acc1[i] = _mm512_dpbusd_epi32(acc1[i], ai, b1);
    }
    a += 4 * kMr;
    b += 4 * kNr;
  }
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) {
    int32_t* row = c + i * ldc;
    if (accumulate) {
      acc0[i] = _mm512_add_epi32(acc0[i], _mm512_loadu_si512(row));
      acc1[i] = _mm512_add_epi32(acc1[i], _mm512_loadu_si512(row + 16));
    }
    _mm512_storeu_si512(row, acc0[i]);
    _mm512_storeu_si512(row + 16, acc1[i]);
  }
}

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512) and the
// CPU has AVX512-VNNI.
extern const IgemmKernel kIgemmAvx512VnniKernel = {"avx512_vnni", kMr, kNr, Tile, Requantize, TileU8S8};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
