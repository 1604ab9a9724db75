// The portable variants of qlinear_binary_spans.h (SSE2, the x86-64 baseline, and scalar)
// and the variant list.
#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__x86_64__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "native/kernels/qlinear_ms/qlinear_binary_lanes.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

// One element per "vector": the reference every other variant is tested against.
struct ScalarLanes {
  using VF = float;
  using VI = int32_t;
  static constexpr int kLanes = 1;
  static VF SetF(float v) { return v; }
  static VI SetI(int32_t v) { return v; }
  template <typename Q>
  static VI Widen(const Q* p) {
    return *p;
  }
  template <typename Q>
  static void Narrow(VI v, Q* p) {
    constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
    *p = static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));
  }
  template <typename Q>
  static void Narrow4(const VI v[4], Q* p) {
    for (int i = 0; i < 4; ++i) Narrow<Q>(v[i], p + i);
  }
  static VI SubI(VI a, VI b) { return a - b; }
  static VI AddI(VI a, VI b) { return a + b; }
  static VF ToFloat(VI a) { return static_cast<float>(a); }
  static VF Mul(VF a, VF b) { return a * b; }
  static VF Add(VF a, VF b) { return a + b; }
  static VF Div(VF a, VF b) { return a / b; }
  static VI RoundClamped(VF q) {
    q = q > -65536.0f ? q : -65536.0f;  // NaN -> -2^16
    q = q < 65536.0f ? q : 65536.0f;
    return static_cast<int32_t>(std::nearbyint(q));  // half to even in the default mode
  }
};

#if defined(__x86_64__)
// Four elements per vector in SSE2.
struct ByteLanes4 {
  using VF = __m128;
  using VI = __m128i;
  static constexpr int kLanes = 4;
  static VF SetF(float v) { return _mm_set1_ps(v); }
  static VI SetI(int32_t v) { return _mm_set1_epi32(v); }
  template <typename Q>
  static VI Widen(const Q* p) {
    int32_t word;
    std::memcpy(&word, p, 4);
    const __m128i v = _mm_cvtsi32_si128(word);
    if constexpr (std::is_signed_v<Q>) {
      const __m128i w = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8);
      return _mm_srai_epi32(_mm_unpacklo_epi16(w, w), 16);
    } else {
      const __m128i zero = _mm_setzero_si128();
      return _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, zero), zero);
    }
  }
  template <typename Q>
  static void Narrow(VI v, Q* p) {
    const __m128i words = _mm_packs_epi32(v, v);
    const __m128i bytes = std::is_signed_v<Q> ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
    const int32_t word = _mm_cvtsi128_si32(bytes);
    std::memcpy(p, &word, 4);
  }
  template <typename Q>
  static void Narrow4(const VI v[4], Q* p) {
    const __m128i ab = _mm_packs_epi32(v[0], v[1]), cd = _mm_packs_epi32(v[2], v[3]);
    const __m128i bytes = std::is_signed_v<Q> ? _mm_packs_epi16(ab, cd) : _mm_packus_epi16(ab, cd);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
  }
  static VI SubI(VI a, VI b) { return _mm_sub_epi32(a, b); }
  static VI AddI(VI a, VI b) { return _mm_add_epi32(a, b); }
  static VF ToFloat(VI a) { return _mm_cvtepi32_ps(a); }
  static VF Mul(VF a, VF b) { return _mm_mul_ps(a, b); }
  static VF Add(VF a, VF b) { return _mm_add_ps(a, b); }
  static VF Div(VF a, VF b) { return _mm_div_ps(a, b); }
  static VI RoundClamped(VF q) {
    // max(NaN, l) = l; cvtps2dq rounds half to even in the default mode.
    return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(q, SetF(-65536.0f)), SetF(65536.0f)));
  }
};
#endif

#if defined(__aarch64__)
// Four elements per vector in Advanced SIMD (the AArch64 baseline).
struct ByteLanesNeon {
  using VF = float32x4_t;
  using VI = int32x4_t;
  static constexpr int kLanes = 4;
  static VF SetF(float v) { return vdupq_n_f32(v); }
  static VI SetI(int32_t v) { return vdupq_n_s32(v); }
  template <typename Q>
  static VI Widen(const Q* p) {
    uint32_t word;
    std::memcpy(&word, p, 4);
    const uint8x8_t bytes = vreinterpret_u8_u32(vdup_n_u32(word));
    if constexpr (std::is_signed_v<Q>) {
      return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(bytes))));
    } else {
      return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(bytes))));
    }
  }
  template <typename Q>
  static void Narrow(VI v, Q* p) {
    const int16x8_t words = vcombine_s16(vqmovn_s32(v), vqmovn_s32(v));
    uint32_t word;
    if constexpr (std::is_signed_v<Q>) {
      word = vget_lane_u32(vreinterpret_u32_s8(vqmovn_s16(words)), 0);
    } else {
      word = vget_lane_u32(vreinterpret_u32_u8(vqmovun_s16(words)), 0);
    }
    std::memcpy(p, &word, 4);
  }
  template <typename Q>
  static void Narrow4(const VI v[4], Q* p) {
    const int16x8_t ab = vcombine_s16(vqmovn_s32(v[0]), vqmovn_s32(v[1]));
    const int16x8_t cd = vcombine_s16(vqmovn_s32(v[2]), vqmovn_s32(v[3]));
    if constexpr (std::is_signed_v<Q>) {
      vst1q_s8(reinterpret_cast<int8_t*>(p), vcombine_s8(vqmovn_s16(ab), vqmovn_s16(cd)));
    } else {
      vst1q_u8(reinterpret_cast<uint8_t*>(p), vcombine_u8(vqmovun_s16(ab), vqmovun_s16(cd)));
    }
  }
  static VI SubI(VI a, VI b) { return vsubq_s32(a, b); }
  static VI AddI(VI a, VI b) { return vaddq_s32(a, b); }
  static VF ToFloat(VI a) { return vcvtq_f32_s32(a); }
  static VF Mul(VF a, VF b) { return vmulq_f32(a, b); }
  static VF Add(VF a, VF b) { return vaddq_f32(a, b); }
  static VF Div(VF a, VF b) { return vdivq_f32(a, b); }
  static VI RoundClamped(VF q) {
    // q > -2^16 is false for NaN, which thus becomes -2^16 (as SSE2's max); vcvtnq rounds
    // half to even.
    const VF low = SetF(-65536.0f);
    q = vbslq_f32(vcgtq_f32(q, low), q, low);
    return vcvtnq_s32_f32(vminq_f32(q, SetF(65536.0f)));
  }
};
#endif

constexpr QLinearBinarySpans kScalar = {BinarySpan<ScalarLanes, uint8_t>, BinarySpan<ScalarLanes, int8_t>};
#if defined(__x86_64__)
constexpr QLinearBinarySpans kSse2 = {BinarySpan<ByteLanes4, uint8_t>, BinarySpan<ByteLanes4, int8_t>};
#elif defined(__aarch64__)
constexpr QLinearBinarySpans kNeon = {BinarySpan<ByteLanesNeon, uint8_t>, BinarySpan<ByteLanesNeon, int8_t>};
#endif

}  // namespace

#if defined(__x86_64__)
// qlinear_binary_avx2.cc and qlinear_binary_avx512.cc (isa_library targets): tables of
// function addresses, called only after IsaEnabled(variant.isa).
extern const QLinearBinarySpans kQLinearBinarySpansAvx2;
extern const QLinearBinarySpans kQLinearBinarySpansAvx512;
#endif

const std::vector<IsaVariant<QLinearBinarySpans>>& QLinearBinarySpanVariants() {
  static const auto* variants = new std::vector<IsaVariant<QLinearBinarySpans>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, kQLinearBinarySpansAvx512}, {"avx2", Isa::kAvx2, kQLinearBinarySpansAvx2},
        {"sse2", Isa::kPortable, kSse2},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, kNeon},
#endif
        {"portable", Isa::kPortable, kScalar},
  };
  return *variants;
}

const QLinearBinarySpans& BestQLinearBinarySpans() {
  static const QLinearBinarySpans best = BestVariant(QLinearBinarySpanVariants()).impl;
  return best;
}

}  // namespace qlinear_ms
}  // namespace onnx_light
