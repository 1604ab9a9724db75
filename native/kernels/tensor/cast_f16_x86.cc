// F16C conversions, chosen at run time: committed builds target baseline x86-64.
#include "native/kernels/tensor/cast_convert.h"

#include "native/kernels/common/isa_variants.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light::cast_internal {

#if defined(__x86_64__)
namespace {

bool CpuHasF16c() {
  static const bool has = IsaEnabled(Isa::kAvx2);
  return has;
}

__attribute__((target("avx2,f16c"))) void FloatToHalfAvx2(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = FloatToHalfBits(src[i]);
}

__attribute__((target("avx2,f16c"))) void HalfToFloatAvx2(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = HalfBitsToFloat(src[i]);
}

}  // namespace

bool FloatToHalfFast(const float* src, uint16_t* dst, int64_t n) {
  if (!CpuHasF16c()) return false;
  FloatToHalfAvx2(src, dst, n);
  return true;
}

bool HalfToFloatFast(const uint16_t* src, float* dst, int64_t n) {
  if (!CpuHasF16c()) return false;
  HalfToFloatAvx2(src, dst, n);
  return true;
}

#else  // other architectures: the scalar codec (a NEON path is future work)

bool FloatToHalfFast(const float*, uint16_t*, int64_t) { return false; }
bool HalfToFloatFast(const uint16_t*, float*, int64_t) { return false; }

#endif

}  // namespace onnx_light::cast_internal
