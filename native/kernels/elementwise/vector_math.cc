#include "native/kernels/elementwise/vector_math.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace elementwise {
namespace vector_math {
namespace {

// ------------------------------------------------------------------------ exact scalar

void ExpScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}
void SigmoidScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    const double e = std::exp(-std::fabs(x));
    out[i] = static_cast<float>(x >= 0 ? 1 / (1 + e) : e / (1 + e));
  }
}
void TanhScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
}
void GeluErfScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = static_cast<float>(0.5 * x * std::erfc(-x * M_SQRT1_2));
  }
}
void GeluTanhScalar(const float* in, float* out, int64_t n) {
  const double k = std::sqrt(2 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    // = 0.5 x (1 + tanh u) without its cancellation for negative x.
    out[i] = static_cast<float>(x / (1 + std::exp(-2 * k * (x + 0.044715 * x * x * x))));
  }
}

const SpanKernels kScalar = {"scalar", ExpScalar, SigmoidScalar, TanhScalar, GeluErfScalar, GeluTanhScalar};

// ------------------------------------------------------------------------- AVX2 + FMA
#if defined(__x86_64__)
#define OL_AVX2 __attribute__((target("avx2,fma")))

// exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, Cephes' degree-6 polynomial for
// e^r, and 2^n applied as two factors so that results in the subnormal range stay exact.
OL_AVX2 inline __m256 Exp8(__m256 x) {
  const __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(89.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 result = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN stays NaN
}

OL_AVX2 inline __m256 Abs8(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }

// sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) below, with e = exp(-|x|): no overflow,
// no cancellation.
OL_AVX2 inline __m256 Sigmoid8(__m256 x) {
  const __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), Abs8(x)));
  const __m256 s = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_blendv_ps(s, _mm256_mul_ps(e, s), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

// tanh: Cephes' odd polynomial below |x| = 0.625 (where 1 - 2/(e^2x + 1) would cancel),
// the exponential form above; the sign is copied back.
OL_AVX2 inline __m256 Tanh8(__m256 x) {
  const __m256 a = Abs8(x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  const __m256 e = Exp8(_mm256_add_ps(a, a));
  const __m256 large_abs = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                                         _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  const __m256 large = _mm256_or_ps(large_abs, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
  return _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}

// gelu(x) = x - 0.5 x erfc(x/sqrt2) for x >= 0 and 0.5 x erfc(|x|/sqrt2) below, with
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2) (Numerical Recipes' erfcc, relative error
// < 1.2e-7 for all z >= 0).
OL_AVX2 inline __m256 GeluErf8(__m256 x) {
  const __m256 z = _mm256_mul_ps(Abs8(x), _mm256_set1_ps(0.70710678118654752f));
  const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
  __m256 p = _mm256_set1_ps(0.17087277f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
  const __m256 xx = _mm256_mul_ps(x, x);
  const __m256 xx_error = _mm256_fmsub_ps(x, x, xx);
  const __m256 half = _mm256_set1_ps(0.5f);
  // exponent = p - x^2/2 as hi + lo (Fast2Sum): hi alone is only good to half an ulp of
  // ~|x|^2/2, which e^hi would turn into a relative error of several 1e-6 for |x| > 8.
  const __m256 minus_half_xx = _mm256_mul_ps(_mm256_set1_ps(-0.5f), xx);
  const __m256 hi = _mm256_add_ps(minus_half_xx, p);
  const __m256 lo = _mm256_fnmadd_ps(half, xx_error, _mm256_sub_ps(p, _mm256_sub_ps(hi, minus_half_xx)));
  const __m256 erfc = _mm256_mul_ps(t, _mm256_fmadd_ps(Exp8(hi), lo, Exp8(hi)));
  const __m256 half_x = _mm256_mul_ps(half, x);
  const __m256 positive = _mm256_fnmadd_ps(half_x, erfc, x);
  const __m256 negative = _mm256_mul_ps(half_x, erfc);
  return _mm256_blendv_ps(positive, negative, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

// gelu_tanh(x) = x * sigmoid(2 u), u = sqrt(2/pi) (x + 0.044715 x^3): the same value as
// 0.5 x (1 + tanh u) without its cancellation for negative x.
OL_AVX2 inline __m256 GeluTanh8(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(1.5957691216057308f),  // 2 sqrt(2/pi)
                                 _mm256_fmadd_ps(x3, _mm256_set1_ps(0.044715f), x));
  return _mm256_mul_ps(x, Sigmoid8(u));
}

// Full vectors, then the tail through a padded vector: every element is computed by the
// same instructions wherever the block boundaries fall.
template <__m256 (*F)(__m256)>
OL_AVX2 void Span8(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, F(_mm256_loadu_ps(in + i)));
  if (i < n) {
    float buffer[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(buffer, in + i, (n - i) * sizeof(float));
    _mm256_storeu_ps(buffer, F(_mm256_loadu_ps(buffer)));
    std::memcpy(out + i, buffer, (n - i) * sizeof(float));
  }
}

const SpanKernels kAvx2 = {"avx2", Span8<Exp8>, Span8<Sigmoid8>, Span8<Tanh8>, Span8<GeluErf8>, Span8<GeluTanh8>};
#endif  // __x86_64__

}  // namespace

const SpanKernels& Scalar() { return kScalar; }

const SpanKernels* Avx2() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &kAvx2 : nullptr;
#else
  return nullptr;
#endif
}

const SpanKernels& Best() {
  static const SpanKernels* best = Avx2() ? Avx2() : &kScalar;
  return *best;
}

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
