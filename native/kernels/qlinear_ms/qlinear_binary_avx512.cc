// qlinear_binary_spans.h on 16 lanes (AVX-512F/BW), compiled by isa_library(isa = "avx512").
// Called only after IsaEnabled(Isa::kAvx512) (qlinear_binary_spans.cc).
#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include <type_traits>

#include "native/kernels/qlinear_ms/qlinear_binary_lanes.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

struct ByteLanes16 {
  using VF = __m512;
  using VI = __m512i;
  static constexpr int kLanes = 16;
  static VF SetF(float v) { return _mm512_set1_ps(v); }
  static VI SetI(int32_t v) { return _mm512_set1_epi32(v); }
  template <typename Q>
  static VI Widen(const Q* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<Q> ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
  }
  template <typename Q>
  static void Narrow(VI v, Q* p) {
    // vpmovsdb saturates signed; vpmovusdb reads its input as unsigned, so clamp at 0 first.
    const __m128i bytes = std::is_signed_v<Q> ? _mm512_cvtsepi32_epi8(v)
                                              : _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512()));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
  }
  template <typename Q>
  static void Narrow4(const VI v[4], Q* p) {
    // Saturating packs work within 128-bit lanes: lane l of the result holds elements
    // 4l..4l+3 of v[0], v[1], v[2], v[3]; one dword permutation puts them in order.
    const __m512i ab = _mm512_packs_epi32(v[0], v[1]), cd = _mm512_packs_epi32(v[2], v[3]);
    const __m512i bytes = std::is_signed_v<Q> ? _mm512_packs_epi16(ab, cd) : _mm512_packus_epi16(ab, cd);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_si512(p, _mm512_permutexvar_epi32(order, bytes));
  }
  static VI SubI(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI AddI(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VF ToFloat(VI a) { return _mm512_cvtepi32_ps(a); }
  static VF Mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  static VF Add(VF a, VF b) { return _mm512_add_ps(a, b); }
  static VF Div(VF a, VF b) { return _mm512_div_ps(a, b); }
  static VI RoundClamped(VF q) {
    // max(NaN, l) = l, as in SSE2; cvtps2dq rounds half to even in the default mode.
    return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(q, SetF(-65536.0f)), SetF(65536.0f)));
  }
};

}  // namespace

// Function addresses only: constant-initialised, no code of this file runs at start-up.
extern const QLinearBinarySpans kQLinearBinarySpansAvx512;
const QLinearBinarySpans kQLinearBinarySpansAvx512 = {BinarySpan<ByteLanes16, uint8_t>,
                                                      BinarySpan<ByteLanes16, int8_t>};

}  // namespace qlinear_ms
}  // namespace onnx_light

#endif  // __x86_64__
