// The lane type of simd/math.h for 16 lanes: AVX-512F.
// Include only in a file compiled by isa_library(isa = "avx512"), whose code runs only
// after IsaEnabled said yes (see simd/math.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace onnx_light {
namespace simd {
namespace {

struct Lanes16 {
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;
  static V Set(float v) { return _mm512_set1_ps(v); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V Fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  static V RoundNearest(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Abs(V a) { return _mm512_abs_ps(a); }
  static V SignOf(V a) {
    return _mm512_castsi512_ps(_mm512_and_epi32(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  static V Or(V a, V b) { return _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static M Less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M IsNan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static V Select(M m, V t, V f) { return _mm512_mask_blend_ps(m, f, t); }
  // One instruction: p * 2^n rounded once, the same value as the two exact factors the
  // other widths multiply by (also in the subnormal range).
  static V ScaleByPow2(V p, V n) { return _mm512_scalef_ps(p, n); }
  static V ScaleByNormalPow2(V p, V n) { return _mm512_scalef_ps(p, n); }
};

}  // namespace
}  // namespace simd
}  // namespace onnx_light
