// AVX-512 microkernels, 24 accumulators with A broadcast from memory.
// Compiled by isa_library(isa = "avx512") (flags from kernel_family.bzl). The default tile is
// 12 x 32 (2 loads and 12 broadcasts per 24 FMAs). The 8 x 48 tile (no edge rows on CNN
// channel counts, 3 loads and 8 broadcasts) is kept selectable: measured, it wins on some
// shapes and loses badly where N is small (49, 196 output positions), so it is not the
// default (benchmarks/reports/gemm/README.md, tiles_1thread.csv). The 12 x 32 tile's K block
// is 256: its A and B micro-panels, (12 + 32) x 256 floats = 44 KiB, fit a 48 KiB L1 (at
// 384 they did not; blocking_1thread.csv: +2..7% in short runs, within 3% in steady state).
// Each tile has its partial tiles (Edge): 49 columns of C, 32 + 17, cost 32 + 16 + 1 lanes
// of FMAs (the last column in column form) instead of 64, and rows below MR cost only theirs.
// Measured and not taken (interleaved A/B, loaded 2-core host, thread CPU time): the FMAs
// broadcasting A themselves ({1to16} memory operands, 1.2 instructions per FMA instead of
// 1.83) ran 9% slower at 256^3 and 4% at 2048x49x512; 4 k steps per loop iteration with
// the vbroadcastss kept changed nothing measurable (1.008, 0.996): the loop stays one step.
#include "native/kernels/gemm/microkernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <utility>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace gemm {
namespace {

// Lanes [0, min(remaining, 16)).
__mmask16 Mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1u);
}

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

// A partial tile (EdgeTileFn) of a kernel whose A panel holds MR rows and whose B panel
// kPanel columns per k: rows [0, R), V vectors of B's columns (the last stored under a
// mask where `cols` ends inside it) and, in column form, kCols more columns from 16 * V on:
// the A panel's MR rows as the lanes of one accumulator per column, each FMA the same
// product and sum as Tile's (a * b == b * a), in the same K loop as the vectors, so the
// column chains' latency hides under the vectors' FMAs. Every element then takes Tile's
// alpha/beta step (the column form's lanes one by one, with the same roundings).
template <int MR, int kPanel, int R, int V, int kCols>
void Partial(int64_t kc, const float* a, const float* b, int /*rows*/, int cols, float* c, int64_t ldc, float alpha,
             float beta) {
  static_assert(R >= 1 && R <= MR && MR <= 16 && 16 * V + kCols <= kPanel, "a partial tile inside the full one");
  constexpr int kV = V > 0 ? V : 1, kC = kCols > 0 ? kCols : 1;
  __m512 acc[R][kV], column[kC];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  }
#pragma GCC unroll 16
  for (int j = 0; j < kCols; ++j) column[j] = _mm512_setzero_ps();
  const __mmask16 a_lanes = static_cast<__mmask16>((1u << MR) - 1u);
  for (int64_t k = 0; k < kc; ++k) {
    if constexpr (V > 0) {
      __m512 bv[kV];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kPanel), _MM_HINT_T0);
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) {
        const __m512 ai = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
      }
    }
    if constexpr (kCols > 0) {
      const __m512 av = _mm512_maskz_loadu_ps(a_lanes, a);
#pragma GCC unroll 16
      for (int j = 0; j < kCols; ++j) column[j] = _mm512_fmadd_ps(av, _mm512_set1_ps(b[16 * V + j]), column[j]);
    }
    a += MR;
    b += kPanel;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __mmask16 mask = Mask(cols - 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      float* out = c + i * ldc + 16 * v;
      const __m512 result = beta == 0.0f
                                ? _mm512_mul_ps(va, acc[i][v])
                                : _mm512_fmadd_ps(va, acc[i][v], _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(mask, out)));
      _mm512_mask_storeu_ps(out, mask, result);
    }
  }
  for (int j = 0; j < kCols; ++j) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, column[j]);
    float* out = c + 16 * V + j;
    for (int i = 0; i < R; ++i) {
      float& o = out[i * ldc];
      o = beta == 0.0f ? alpha * lanes[i] : __builtin_fmaf(alpha, lanes[i], beta * o);
    }
  }
}

// Partial<MR, 16 * NV, R, v, 0> for v = 1..NV (row R's whole and masked vectors), and for
// MR rows, Partial<MR, 16 * NV, MR, v, r> for v = 0..NV-1 and r = 1..MR-1 (column form).
template <int MR, int NV, int R, int... V>
constexpr std::array<EdgeTileFn, NV> VectorRow(std::integer_sequence<int, V...>) {
  return {{&Partial<MR, 16 * NV, R, V + 1, 0>...}};
}
template <int MR, int NV, int... R>
constexpr std::array<std::array<EdgeTileFn, NV>, MR> VectorTable(std::integer_sequence<int, R...>) {
  return {{VectorRow<MR, NV, R + 1>(std::make_integer_sequence<int, NV>())...}};
}
template <int MR, int NV, int V, int... C>
constexpr std::array<EdgeTileFn, MR - 1> ColumnRow(std::integer_sequence<int, C...>) {
  return {{&Partial<MR, 16 * NV, MR, V, C + 1>...}};
}
template <int MR, int NV, int... V>
constexpr std::array<std::array<EdgeTileFn, MR - 1>, NV> ColumnTable(std::integer_sequence<int, V...>) {
  return {{ColumnRow<MR, NV, V>(std::make_integer_sequence<int, MR - 1>())...}};
}

// The partial tiles of Tile<MR, NV>: columns past the last whole vector in column form
// when they are fewer than the rows (fewer FMAs than one more vector of MR rows), else
// in one more vector stored under a mask.
template <int MR, int NV>
void Edge(int64_t kc, const float* a, const float* b, int rows, int cols, float* c, int64_t ldc, float alpha,
          float beta) {
  static constexpr auto kVector = VectorTable<MR, NV>(std::make_integer_sequence<int, MR>());
  static constexpr auto kColumn = ColumnTable<MR, NV>(std::make_integer_sequence<int, NV>());
  const int whole = cols / 16, rest = cols % 16;
  if (rows == MR && rest != 0 && rest < MR) return kColumn[whole][rest - 1](kc, a, b, rows, cols, c, ldc, alpha, beta);
  kVector[rows - 1][(cols + 15) / 16 - 1](kc, a, b, rows, cols, c, ldc, alpha, beta);
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

// y[j] += sum_k x[k] m[k * ld + j], one fused multiply-add per k in k order for every
// column: eight rows per pass over y (eight streams in flight), then single rows.
void GemvRowsAdd(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8) AccumulateRows<8>(x + kk, m + kk * ld, ld, n, y);
  for (; kk < k; ++kk) AccumulateRows<1>(x + kk, m + kk * ld, ld, n, y);
}

void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  GemvRowsAdd(k, n, x, m, ld, y);
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
extern const MicroKernel kAvx512MicroKernel = {"avx512_12x32", 12,          32,          /*kc=*/256,
                                               /*nc=*/640,     Tile<12, 2>, Edge<12, 2>, GemvRows,
                                               GemvRowsAdd,    GemvDots,    kDotsBlock};
extern const MicroKernel kAvx512Tile8x48MicroKernel = {
    "avx512_8x48", 8, 48, /*kc=*/384, /*nc=*/672, Tile<8, 3>, Edge<8, 3>, GemvRows, GemvRowsAdd, GemvDots, kDotsBlock};

}  // namespace gemm
}  // namespace onnx_light

#endif  // __x86_64__
