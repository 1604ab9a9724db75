// DynamicQuantizeLinear's arithmetic (opset 11), shared by the ai.onnx kernel and the
// com.microsoft DynamicQuantizeMatMul kernel (native/kernels/quantized), so that a fused
// node quantizes its input to exactly the bytes, scale and zero point of the op it replaces:
//
//   range  = [min(0, min x), max(0, max x)]            (NaN elements take no part)
//   scale  = (hi == lo ? 1 : hi - lo) / 255            (float, as ONNX spells it)
//   zero   = round_half_even(clamp(0 - lo / scale, 0, 255))
//   y[i]   = saturate_u8(round_half_even(x[i] / scale) + zero)   (a NaN quotient: zero)
//
// Each loop runs 4 lanes at a time with SSE2 on x86-64 (the baseline: no ISA variant to
// choose) and scalar elsewhere and for the tails. The lanes compute what the scalar loops
// compute, bit for bit: min/max are exact and order-free (a NaN keeps the running value, as
// the scalar comparison does; a -0 never replaces +0), the division is IEEE, cvtps2dq rounds
// half to even in the default rounding mode as nearbyint does, and the saturating packs are
// the clamp to [0, 255] (q is clamped to +-1024 first, which changes no result since zero is
// in [0, 255]; a NaN quotient counts as 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace onnx_light {
namespace quantization {

struct DynamicRange {
  float lo = 0.0f, hi = 0.0f;  // starts at 0: the range always contains zero

  // The union of two ranges (exact: the order of merging never matters).
  DynamicRange Merge(const DynamicRange& o) const { return {std::min(lo, o.lo), std::max(hi, o.hi)}; }
};

// The range of x[begin, end), including zero.
inline DynamicRange DynamicRangeOf(const float* x, int64_t begin, int64_t end) {
  DynamicRange r;
  int64_t i = begin;
#if defined(__x86_64__)
  if (end - begin >= 8) {
    // minps(a, b) = a < b ? a : b and maxps(a, b) = a > b ? a : b: the scalar rule per lane.
    __m128 lo0 = _mm_setzero_ps(), hi0 = _mm_setzero_ps(), lo1 = lo0, hi1 = hi0;
    for (; i + 8 <= end; i += 8) {
      const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
      lo0 = _mm_min_ps(a, lo0);
      hi0 = _mm_max_ps(a, hi0);
      lo1 = _mm_min_ps(b, lo1);
      hi1 = _mm_max_ps(b, hi1);
    }
    alignas(16) float lo[4], hi[4];
    _mm_store_ps(lo, _mm_min_ps(lo0, lo1));
    _mm_store_ps(hi, _mm_max_ps(hi0, hi1));
    for (int l = 0; l < 4; ++l) {
      r.lo = lo[l] < r.lo ? lo[l] : r.lo;
      r.hi = hi[l] > r.hi ? hi[l] : r.hi;
    }
  }
#endif
  for (; i < end; ++i) {
    r.lo = x[i] < r.lo ? x[i] : r.lo;
    r.hi = x[i] > r.hi ? x[i] : r.hi;
  }
  return r;
}

// The scale and zero point DynamicQuantizeLinear derives from a range.
struct DynamicQuantParams {
  float scale = 1.0f;
  float zero = 0.0f;  // an integer in [0, 255], held as float for the quantizing loop
};

inline DynamicQuantParams DynamicQuantParamsOf(const DynamicRange& range) {
  DynamicQuantParams p;
  p.scale = (range.hi == range.lo ? 1.0f : range.hi - range.lo) / 255.0f;
  p.zero = std::nearbyint(std::min(255.0f, std::max(0.0f, 0.0f - range.lo / p.scale)));
  return p;
}

// y[i] = saturate(round_half_even(x[i] / scale) + zero) to uint8 for i in [begin, end).
inline void DynamicQuantizeSpan(const float* x, uint8_t* y, int64_t begin, int64_t end, float scale, float zero) {
  int64_t i = begin;
#if defined(__x86_64__)
  const __m128 vscale = _mm_set1_ps(scale), limit = _mm_set1_ps(1024.0f), neg_limit = _mm_set1_ps(-1024.0f);
  const __m128i vzero = _mm_set1_epi32(static_cast<int32_t>(zero));
  auto lanes = [&](const float* p) {
    __m128 q = _mm_div_ps(_mm_loadu_ps(p), vscale);
    q = _mm_and_ps(q, _mm_cmpord_ps(q, q));  // NaN -> +0
    q = _mm_max_ps(_mm_min_ps(q, limit), neg_limit);
    return _mm_add_epi32(_mm_cvtps_epi32(q), vzero);
  };
  for (; i + 16 <= end; i += 16) {
    const __m128i w0 = _mm_packs_epi32(lanes(x + i), lanes(x + i + 4));
    const __m128i w1 = _mm_packs_epi32(lanes(x + i + 8), lanes(x + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w0, w1));
  }
#endif
  for (; i < end; ++i) {
    const float q = x[i] / scale;
    const float v = (std::isnan(q) ? 0.0f : std::nearbyint(q)) + zero;
    y[i] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, v)));
  }
}

}  // namespace quantization
}  // namespace onnx_light
