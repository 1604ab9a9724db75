// 8-bit <-> float conversion rows shared by QuantizeLinear, DequantizeLinear and the
// com.microsoft QLinear element kernels, 16 elements per step in the x86-64 baseline
// (SSE2), the scalar formula for the tail and on other architectures:
//
//   DequantizeRow: y[e] = (float(x[e]) - zero_point) * scale            (float arithmetic)
//   QuantizeRow:   y[e] = saturate(round_half_even(x[e] / scale) + zero_point), NaN -> zero_point
//
// Both are bit for bit the ONNX reference formula in float: the subtraction is exact, the
// product and the quotient are rounded once (no FMA: SSE2 has none), and rounding half to
// even of a quotient clamped to +-2^16 is exact with cvtps2dq in the default rounding mode
// (the clamp changes no result: zero_point lies in Q's range, so anything past 2^16
// saturates either way). Saturation to Q goes through the saturating packs (int32 -> int16
// -> Q), which clamp exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace onnx_light {
namespace quantization {

template <typename Q>
inline constexpr bool kIsByte = std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t>;

// The scalar formulas (also the tails of the vector loops).
template <typename Q>
inline float DequantizeOne(Q x, float zero_point, float scale) {
  return (static_cast<float>(x) - zero_point) * scale;
}

template <typename Q>
inline Q QuantizeOne(float x, float scale, int32_t zero_point) {
  constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  const float q = x / scale;
  const double r = (std::isnan(q) ? 0.0 : std::nearbyint(static_cast<double>(q))) + zero_point;
  return static_cast<Q>(r < lo ? lo : (r > hi ? hi : r));
}

#if defined(__x86_64__)
namespace lanes {

// 16 bytes at p as four vectors of int32 (elements 0-3, 4-7, 8-11, 12-15).
template <typename Q>
inline void Widen16(const Q* p, __m128i out[4]) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i lo, hi;
  if constexpr (std::is_signed_v<Q>) {
    lo = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8);
    hi = _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8);
    out[0] = _mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 16);
    out[1] = _mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 16);
    out[2] = _mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 16);
    out[3] = _mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 16);
  } else {
    const __m128i zero = _mm_setzero_si128();
    lo = _mm_unpacklo_epi8(v, zero);
    hi = _mm_unpackhi_epi8(v, zero);
    out[0] = _mm_unpacklo_epi16(lo, zero);
    out[1] = _mm_unpackhi_epi16(lo, zero);
    out[2] = _mm_unpacklo_epi16(hi, zero);
    out[3] = _mm_unpackhi_epi16(hi, zero);
  }
}

// Four vectors of int32 saturated to Q, stored as 16 bytes at p.
template <typename Q>
inline void Narrow16(const __m128i v[4], Q* p) {
  const __m128i ab = _mm_packs_epi32(v[0], v[1]), cd = _mm_packs_epi32(v[2], v[3]);
  const __m128i bytes = std::is_signed_v<Q> ? _mm_packs_epi16(ab, cd) : _mm_packus_epi16(ab, cd);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
}

// round_half_even(q) as int32 for q clamped to +-2^16 (a NaN q becomes -2^16).
inline __m128i RoundClamped(__m128 q) {
  const __m128 limit = _mm_set1_ps(65536.0f), neg_limit = _mm_set1_ps(-65536.0f);
  return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(q, neg_limit), limit));  // max(NaN, l) = l
}

}  // namespace lanes
#endif  // __x86_64__

// y[e] = DequantizeOne(x[e], zero_point, scale) for e < n.
template <typename Q>
inline void DequantizeRow(const Q* x, int64_t n, float zero_point, float scale, float* y) {
  int64_t e = 0;
#if defined(__x86_64__)
  const __m128 vzp = _mm_set1_ps(zero_point), vscale = _mm_set1_ps(scale);
  for (; e + 16 <= n; e += 16) {
    __m128i w[4];
    lanes::Widen16(x + e, w);
    for (int v = 0; v < 4; ++v) {
      _mm_storeu_ps(y + e + 4 * v, _mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(w[v]), vzp), vscale));
    }
  }
#endif
  for (; e < n; ++e) y[e] = DequantizeOne(x[e], zero_point, scale);
}

// y[e] = QuantizeOne<Q>(x[e], scale, zero_point) for e < n.
template <typename Q>
inline void QuantizeRow(const float* x, int64_t n, float scale, int32_t zero_point, Q* y) {
  int64_t e = 0;
#if defined(__x86_64__)
  const __m128 vscale = _mm_set1_ps(scale);
  const __m128i vzp = _mm_set1_epi32(zero_point);
  for (; e + 16 <= n; e += 16) {
    __m128i w[4];
    for (int v = 0; v < 4; ++v) {
      __m128 q = _mm_div_ps(_mm_loadu_ps(x + e + 4 * v), vscale);
      q = _mm_and_ps(q, _mm_cmpord_ps(q, q));  // NaN -> 0: the zero point
      w[v] = _mm_add_epi32(lanes::RoundClamped(q), vzp);
    }
    lanes::Narrow16(w, y + e);
  }
#endif
  for (; e < n; ++e) y[e] = QuantizeOne<Q>(x[e], scale, zero_point);
}

}  // namespace quantization
}  // namespace onnx_light
