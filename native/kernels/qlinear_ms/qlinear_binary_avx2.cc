// qlinear_binary_spans.h on 8 lanes (AVX2), compiled by isa_library(isa = "avx2"). Called
// only after IsaEnabled(Isa::kAvx2) (qlinear_binary_spans.cc).
#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include <type_traits>

#include "native/kernels/qlinear_ms/qlinear_binary_lanes.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

struct ByteLanes8 {
  using VF = __m256;
  using VI = __m256i;
  static constexpr int kLanes = 8;
  static VF SetF(float v) { return _mm256_set1_ps(v); }
  static VI SetI(int32_t v) { return _mm256_set1_epi32(v); }
  template <typename Q>
  static VI Widen(const Q* p) {
    const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  }
  template <typename Q>
  static void Narrow(VI v, Q* p) {
    // Saturating packs: int32 -> int16 (elements 0-7 in order) -> Q.
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i bytes = std::is_signed_v<Q> ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
  }
  template <typename Q>
  static void Narrow4(const VI v[4], Q* p) {
    // Saturating packs work within 128-bit lanes: lane l of the result holds elements
    // 4l..4l+3 of v[0], v[1], v[2], v[3]; one dword permutation puts them in order.
    const __m256i ab = _mm256_packs_epi32(v[0], v[1]), cd = _mm256_packs_epi32(v[2], v[3]);
    const __m256i bytes = std::is_signed_v<Q> ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permutevar8x32_epi32(bytes, order));
  }
  static VI SubI(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI AddI(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VF ToFloat(VI a) { return _mm256_cvtepi32_ps(a); }
  static VF Mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  static VF Add(VF a, VF b) { return _mm256_add_ps(a, b); }
  static VF Div(VF a, VF b) { return _mm256_div_ps(a, b); }
  static VI RoundClamped(VF q) {
    // max(NaN, l) = l, as in SSE2; cvtps2dq rounds half to even in the default mode.
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(q, SetF(-65536.0f)), SetF(65536.0f)));
  }
};

}  // namespace

// Function addresses only: constant-initialised, no code of this file runs at start-up.
extern const QLinearBinarySpans kQLinearBinarySpansAvx2;
const QLinearBinarySpans kQLinearBinarySpansAvx2 = {BinarySpan<ByteLanes8, uint8_t>, BinarySpan<ByteLanes8, int8_t>};

}  // namespace qlinear_ms
}  // namespace onnx_light

#endif  // __x86_64__
