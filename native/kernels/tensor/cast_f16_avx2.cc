// float <-> float16 with F16C, 8 at a time; compiled by isa_library(isa = "avx2"). Reached
// only through HalfCodecVariants() after IsaEnabled(Isa::kAvx2).
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__F16C__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/core/narrow_float.h"

namespace onnx_light::cast_internal {

void FloatToHalfAvx2(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = FloatToHalfBits(src[i]);
}

void HalfToFloatAvx2(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = HalfBitsToFloat(src[i]);
}

}  // namespace onnx_light::cast_internal

#endif  // __x86_64__
