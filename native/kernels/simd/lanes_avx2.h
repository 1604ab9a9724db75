// The lane type of simd/math.h for 8 lanes: AVX2 + FMA.
// Include only in a file compiled by isa_library(isa = "avx2") (or "avx512"), whose code
// runs only after IsaEnabled said yes (see simd/math.h).
#pragma once

#include <immintrin.h>

namespace onnx_light {
namespace simd {
namespace {

struct Lanes8 {
  using V = __m256;
  using M = __m256;
  static constexpr int kLanes = 8;
  static V Set(float v) { return _mm256_set1_ps(v); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V Fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
  static V RoundNearest(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V SignOf(V a) { return _mm256_and_ps(a, _mm256_set1_ps(-0.0f)); }
  static V Or(V a, V b) { return _mm256_or_ps(a, b); }
  static M Less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M IsNan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static V Select(M m, V t, V f) { return _mm256_blendv_ps(f, t, m); }
  // p * 2^n1 * 2^n2 with n1 = floor(n / 2), n2 = n - n1, the biased exponents taken from
  // m = n + 2 * 127 as m >> 1 = n1 + 127 and m - (m >> 1) = n2 + 127 (one integer add
  // fewer than biasing n1 and n2 apart).
  static V ScaleByPow2(V p, V n) {
    const __m256i m = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(254));
    const __m256i m1 = _mm256_srai_epi32(m, 1);
    const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(m1, 23));
    const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(m, m1), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  static V ScaleByNormalPow2(V p, V n) {
    const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
  }
};

}  // namespace
}  // namespace simd
}  // namespace onnx_light
