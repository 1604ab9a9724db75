// AVX-512 microkernels, 24 accumulators with A broadcast from memory. The default tile is
// Compiled by isa_library(isa = "avx512") (flags from kernel_family.bzl).
// 12 x 32 (2 loads and 12 broadcasts per 24 FMAs). The 8 x 48 tile (no edge rows on CNN
// channel counts, 3 loads and 8 broadcasts) is kept selectable: measured, it wins on some
// shapes and loses badly where N is small (49, 196 output positions), so it is not the
// default (benchmarks/reports/gemm/README.md, tiles_1thread.csv). The 12 x 32 tile's K block
// is 256: its A and B micro-panels, (12 + 32) x 256 floats = 44 KiB, fit a 48 KiB L1 (at
// 384 they did not; blocking_1thread.csv: +2..7% in short runs, within 3% in steady state).
#include "native/kernels/gemm/microkernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace gemm {
namespace {

// Register tile of MR rows x 16 * NV columns.
template <int MR, int NV>
void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  constexpr int kNr = 16 * NV;
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += kNr;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + i * ldc + 16 * v, _mm512_mul_ps(va, acc[i][v]));
    }
    return;
  }
  const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* out = c + i * ldc + 16 * v;
      _mm512_storeu_ps(out, _mm512_fmadd_ps(va, acc[i][v], _mm512_mul_ps(vb, _mm512_loadu_ps(out))));
    }
  }
}

// Lanes [0, min(remaining, 16)).
__mmask16 Mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1u);
}

// GEMV streams the matrix once from memory: each matrix row stream is prefetched this
// many floats (1 KiB) ahead, far enough to cover the memory latency at one core's
// bandwidth (sweep in benchmarks/reports/gemm/README.md).
constexpr int64_t kGemvPrefetch = 256;

// y[j] += sum over R rows of x[i] m[i * ld + j], the rows added in order into one
// accumulator per 16 columns: R matrix loads per load/store of y (which stays in L1).
template <int R>
void AccumulateRows(const float* x, const float* m, int64_t ld, int64_t n, float* y) {
  __m512 xv[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) xv[i] = _mm512_set1_ps(x[i]);
  GemvRowsPrefetch prefetch(m, ld, n, R, kGemvPrefetch);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const float* ahead = prefetch.Next();
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) _mm_prefetch(reinterpret_cast<const char*>(ahead + i * ld), _MM_HINT_T0);
    __m512 acc = _mm512_loadu_ps(y + j);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc = _mm512_fmadd_ps(xv[i], _mm512_loadu_ps(m + i * ld + j), acc);
    _mm512_storeu_ps(y + j, acc);
  }
  if (j < n) {
    const __mmask16 mask = Mask(n - j);
    __m512 acc = _mm512_maskz_loadu_ps(mask, y + j);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc = _mm512_fmadd_ps(xv[i], _mm512_maskz_loadu_ps(mask, m + i * ld + j), acc);
    _mm512_mask_storeu_ps(y + j, mask, acc);
  }
}

// y[j] = sum_k x[k] m[k * ld + j], one fused multiply-add per k in k order for every
// column: eight rows per pass over y (eight streams in flight), then single rows.
void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8) AccumulateRows<8>(x + kk, m + kk * ld, ld, n, y);
  for (; kk < k; ++kk) AccumulateRows<1>(x + kk, m + kk * ld, ld, n, y);
}

// K block of the dots form: one step of Dots (two vectors per column).
constexpr int kDotsBlock = 32;

// Dot products of `Rows` columns (one group, DotsLayout) with x, two accumulators per
// column; every column follows the same sequence whatever Rows or the layout is. Each
// column's stream is prefetched kGemvPrefetch floats of K ahead, which in the interleaved
// layout runs on into the next group.
template <int Rows>
void Dots(int64_t k, const float* x, const float* m, const DotsLayout& l, float* y) {
  __m512 acc0[Rows], acc1[Rows];
  for (int r = 0; r < Rows; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  const int64_t ahead = kGemvPrefetch / kDotsBlock * l.block;
  const float* block = m;
  int64_t kk = 0;
  for (; kk + kDotsBlock <= k; kk += kDotsBlock, block += l.block) {
    const __m512 x0 = _mm512_loadu_ps(x + kk), x1 = _mm512_loadu_ps(x + kk + 16);
    for (int r = 0; r < Rows; ++r) {
      const float* row = block + r * l.row;
      _mm_prefetch(reinterpret_cast<const char*>(row + ahead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(row + ahead + 16), _MM_HINT_T0);
      acc0[r] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(row), acc0[r]);
      acc1[r] = _mm512_fmadd_ps(x1, _mm512_loadu_ps(row + 16), acc1[r]);
    }
  }
  for (int64_t t = 0; kk + t < k; t += 16) {  // the last, partial block
    const __mmask16 mask = Mask(k - kk - t);
    const __m512 xv = _mm512_maskz_loadu_ps(mask, x + kk + t);
    for (int r = 0; r < Rows; ++r) {
      acc0[r] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(mask, block + r * l.row + t), acc0[r]);
    }
  }
  for (int r = 0; r < Rows; ++r) y[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

void GemvDots(int64_t k, int64_t n, const float* x, const float* m, const DotsLayout& l, float* y) {
  int64_t j = 0;
  for (; j + kDotsGroup <= n; j += kDotsGroup) Dots<kDotsGroup>(k, x, m + j / kDotsGroup * l.group, l, y + j);
  for (; j < n; ++j) Dots<1>(k, x, m + j / kDotsGroup * l.group + j % kDotsGroup * l.row, l, y + j);
}

}  // namespace

// Constant-initialized (no code runs before a CPU check): gemm.cc hands them out only
// when IsaEnabled(Isa::kAvx512).
extern const MicroKernel kAvx512MicroKernel = {"avx512_12x32", 12,       32,       /*kc=*/256, /*nc=*/640,
                                               Tile<12, 2>,    GemvRows, GemvDots, kDotsBlock};
extern const MicroKernel kAvx512Tile8x48MicroKernel = {"avx512_8x48", 8,        48,       /*kc=*/384, /*nc=*/672,
                                                       Tile<8, 3>,    GemvRows, GemvDots, kDotsBlock};

}  // namespace gemm
}  // namespace onnx_light

#endif  // __x86_64__
