// AVX-512 microkernels: 12 x 32 register tile (24 accumulators, A broadcast from memory).
#include "native/kernels/gemm/microkernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define OL_AVX512 __attribute__((target("avx512f")))

namespace onnx_light {
namespace gemm {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

OL_AVX512 void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  __m512 acc0[kMr], acc1[kMr];
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr + 16), _MM_HINT_T0);
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kMr;
    b += kNr;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      _mm512_storeu_ps(c + i * ldc, _mm512_mul_ps(va, acc0[i]));
      _mm512_storeu_ps(c + i * ldc + 16, _mm512_mul_ps(va, acc1[i]));
    }
    return;
  }
  const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    _mm512_storeu_ps(row, _mm512_fmadd_ps(va, acc0[i], _mm512_mul_ps(vb, _mm512_loadu_ps(row))));
    _mm512_storeu_ps(row + 16, _mm512_fmadd_ps(va, acc1[i], _mm512_mul_ps(vb, _mm512_loadu_ps(row + 16))));
  }
}

// Lanes [0, min(remaining, 16)).
OL_AVX512 __mmask16 Mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1u);
}

// y[j] = sum_k x[k] m[k * ld + j]: four rows per pass over y (kept in L1).
OL_AVX512 void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const float* r = m + kk * ld;
    const __m512 x0 = _mm512_set1_ps(x[kk]), x1 = _mm512_set1_ps(x[kk + 1]);
    const __m512 x2 = _mm512_set1_ps(x[kk + 2]), x3 = _mm512_set1_ps(x[kk + 3]);
    for (int64_t j = 0; j < n; j += 16) {
      const __mmask16 mask = Mask(n - j);
      __m512 acc = _mm512_maskz_loadu_ps(mask, y + j);
      acc = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(mask, r + j), acc);
      acc = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(mask, r + ld + j), acc);
      acc = _mm512_fmadd_ps(x2, _mm512_maskz_loadu_ps(mask, r + 2 * ld + j), acc);
      acc = _mm512_fmadd_ps(x3, _mm512_maskz_loadu_ps(mask, r + 3 * ld + j), acc);
      _mm512_mask_storeu_ps(y + j, mask, acc);
    }
  }
  for (; kk < k; ++kk) {
    const float* r = m + kk * ld;
    const __m512 xv = _mm512_set1_ps(x[kk]);
    for (int64_t j = 0; j < n; j += 16) {
      const __mmask16 mask = Mask(n - j);
      const __m512 acc = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(mask, r + j), _mm512_maskz_loadu_ps(mask, y + j));
      _mm512_mask_storeu_ps(y + j, mask, acc);
    }
  }
}

// Dot products of `Rows` matrix rows with x, two accumulators per row; every row follows
// the same sequence whatever Rows is.
template <int Rows>
OL_AVX512 void Dots(int64_t k, const float* x, const float* m, int64_t ld, float* y) {
  __m512 acc0[Rows], acc1[Rows];
  for (int r = 0; r < Rows; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    const __m512 x0 = _mm512_loadu_ps(x + kk), x1 = _mm512_loadu_ps(x + kk + 16);
    for (int r = 0; r < Rows; ++r) {
      acc0[r] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(m + r * ld + kk), acc0[r]);
      acc1[r] = _mm512_fmadd_ps(x1, _mm512_loadu_ps(m + r * ld + kk + 16), acc1[r]);
    }
  }
  for (; kk < k; kk += 16) {
    const __mmask16 mask = Mask(k - kk);
    const __m512 xv = _mm512_maskz_loadu_ps(mask, x + kk);
    for (int r = 0; r < Rows; ++r) {
      acc0[r] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(mask, m + r * ld + kk), acc0[r]);
    }
  }
  for (int r = 0; r < Rows; ++r) y[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

OL_AVX512 void GemvDots(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) Dots<4>(k, x, m + j * ld, ld, y + j);
  for (; j < n; ++j) Dots<1>(k, x, m + j * ld, ld, y + j);
}

}  // namespace

const MicroKernel* Avx512Kernel() {
  static const MicroKernel kernel{"avx512", kMr, kNr, /*kc=*/384, /*nc=*/640, Tile, GemvRows, GemvDots};
  return __builtin_cpu_supports("avx512f") ? &kernel : nullptr;
}

}  // namespace gemm
}  // namespace onnx_light

#else
namespace onnx_light {
namespace gemm {
const MicroKernel* Avx512Kernel() { return nullptr; }
}  // namespace gemm
}  // namespace onnx_light
#endif
