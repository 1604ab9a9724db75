// The lane type of simd/math.h for 4 lanes: AArch64 Advanced SIMD.
// Include from AArch64 builds only (every AArch64 CPU has Advanced SIMD).
#pragma once

#if !defined(__aarch64__)
#error "lanes_neon.h is for AArch64 builds only"
#endif

#include <arm_neon.h>

namespace onnx_light {
namespace simd {
namespace {

struct Lanes4 {
  using V = float32x4_t;
  using M = uint32x4_t;
  static constexpr int kLanes = 4;
  static V Set(float v) { return vdupq_n_f32(v); }
  static V Load(const float* p) { return vld1q_f32(p); }
  static void Store(float* p, V v) { vst1q_f32(p, v); }
  static V Add(V a, V b) { return vaddq_f32(a, b); }
  static V Sub(V a, V b) { return vsubq_f32(a, b); }
  static V Mul(V a, V b) { return vmulq_f32(a, b); }
  static V Div(V a, V b) { return vdivq_f32(a, b); }
  static V Min(V a, V b) { return vminq_f32(a, b); }
  static V Max(V a, V b) { return vmaxq_f32(a, b); }
  static V Fmadd(V a, V b, V c) { return vfmaq_f32(c, a, b); }
  static V Fnmadd(V a, V b, V c) { return vfmsq_f32(c, a, b); }
  static V Fmsub(V a, V b, V c) { return vnegq_f32(vfmsq_f32(c, a, b)); }  // -(c - ab), exact negation
  static V RoundNearest(V a) { return vrndnq_f32(a); }
  static V Abs(V a) { return vabsq_f32(a); }
  static V SignOf(V a) { return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x80000000u))); }
  static V Or(V a, V b) { return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
  static M Less(V a, V b) { return vcltq_f32(a, b); }
  static M IsNan(V a) { return vmvnq_u32(vceqq_f32(a, a)); }
  static V Select(M m, V t, V f) { return vbslq_f32(m, t, f); }
  // As Lanes8's: m = n + 2 * 127, biased exponents m >> 1 and m - (m >> 1).
  static V ScaleByPow2(V p, V n) {
    const int32x4_t m = vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(254));  // n is integral already
    const int32x4_t m1 = vshrq_n_s32(m, 1);
    const V s1 = vreinterpretq_f32_s32(vshlq_n_s32(m1, 23));
    const V s2 = vreinterpretq_f32_s32(vshlq_n_s32(vsubq_s32(m, m1), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
  }
  static V ScaleByNormalPow2(V p, V n) {
    const int32x4_t biased = vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127));
    return vmulq_f32(p, vreinterpretq_f32_s32(vshlq_n_s32(biased, 23)));
  }
};

}  // namespace
}  // namespace simd
}  // namespace onnx_light
