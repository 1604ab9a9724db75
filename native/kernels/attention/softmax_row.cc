#include "native/kernels/attention/softmax_row.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace attention {
namespace {

template <typename T>
T ExpShiftedSumPortable(T* x, int64_t n, T shift) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

// Eight independent running maxima: no loop-carried latency chain, vectorisable.
template <typename T>
T RowMaxPortable(const T* x, int64_t n) {
  constexpr int kLanes = 8;
  T lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  }
  T m = x[0];
  for (int l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

#if defined(__x86_64__)
// exp on 8 lanes: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts for accuracy),
// exp(r) by a degree-6 polynomial, 2^k assembled in the exponent bits. Inputs below the
// float range (masked keys give -inf) flush to 0; relative error about 2 ulp.
__attribute__((target("avx2,fma"))) inline __m256 Exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.37626f);
  const __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(below, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

__attribute__((target("avx2,fma"))) float ExpShiftedSumAvx2(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, v);
    acc = _mm256_add_ps(acc, v);
  }
  if (i < n) {  // the tail through the same approximation, masked
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane);
    const __m256 v = _mm256_and_ps(Exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)), _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(x + i, mask, v);
    acc = _mm256_add_ps(acc, v);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// Four independent running maxima hide the max latency; max is exact, so the split
// cannot change the result.
__attribute__((target("avx2,fma"))) float RowMaxAvx2(const float* x, int64_t n) {
  __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
    m2 = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), m2);
    m3 = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), m3);
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
  float r = lanes[0];
  for (int l = 1; l < 8; ++l) r = lanes[l] > r ? lanes[l] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

// Exp8's algorithm on 16 lanes (same constants, so the same values lane for lane).
__attribute__((target("avx512f"))) inline __m512 Exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.33654f), hi = _mm512_set1_ps(88.37626f);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(keep, p, _mm512_castsi512_ps(e));
}

__attribute__((target("avx512f"))) float ExpShiftedSumAvx512(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 v = _mm512_maskz_mov_ps(mask, Exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), s)));
    _mm512_mask_storeu_ps(x + i, mask, v);
    acc = _mm512_add_ps(acc, v);
  }
  return _mm512_reduce_add_ps(acc);
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

}  // namespace

float ExpShiftedSum(float* x, int64_t n, float shift) {
#if defined(__x86_64__)
  if (HasAvx512()) return ExpShiftedSumAvx512(x, n, shift);
  if (HasAvx2Fma()) return ExpShiftedSumAvx2(x, n, shift);
#endif
  return ExpShiftedSumPortable(x, n, shift);
}

double ExpShiftedSum(double* x, int64_t n, double shift) { return ExpShiftedSumPortable(x, n, shift); }

float RowMax(const float* x, int64_t n) {
#if defined(__x86_64__)
  if (HasAvx2Fma()) return RowMaxAvx2(x, n);
#endif
  return RowMaxPortable(x, n);
}
double RowMax(const double* x, int64_t n) { return RowMaxPortable(x, n); }

}  // namespace attention
}  // namespace onnx_light
