// AVX2 + FMA microkernels: 6 x 16 register tile (12 accumulators).
// Compiled by isa_library(isa = "avx2") (flags from kernel_family.bzl).
#include "native/kernels/gemm/microkernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <utility>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

namespace onnx_light {
namespace gemm {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// The k steps Tile's main loop takes per iteration: one pointer increment, counter and
// branch per kKUnroll steps. Each accumulator still takes its FMAs one k after the other,
// so the sums (and the bits) are those of one step per iteration.
constexpr int64_t kKUnroll = 4;

// One k step on the panels' k-th column / row: 2 vector loads of B, then per row one
// vbroadcastss of A feeding its 2 FMAs (AVX2 has no embedded broadcast; 12 + 2 + 1 = 15
// registers). No software prefetch: B's 64 bytes a step are one cache line, read in order.
__attribute__((always_inline)) inline void TileStep(const float* a, const float* b, __m256 (&acc0)[kMr],
                                                    __m256 (&acc1)[kMr]) {
  const __m256 b0 = _mm256_loadu_ps(b);
  const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    const __m256 ai = _mm256_broadcast_ss(a + i);
    acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
    acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
  }
}

void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  __m256 acc0[kMr], acc1[kMr];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  int64_t k = kc;
  for (; k >= kKUnroll; k -= kKUnroll) {
#pragma GCC unroll 4
    for (int u = 0; u < kKUnroll; ++u) TileStep(a + u * kMr, b + u * kNr, acc0, acc1);
    a += kKUnroll * kMr;
    b += kKUnroll * kNr;
  }
  for (; k > 0; --k) {
    TileStep(a, b, acc0, acc1);
    a += kMr;
    b += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      _mm256_storeu_ps(c + i * ldc, _mm256_mul_ps(va, acc0[i]));
      _mm256_storeu_ps(c + i * ldc + 8, _mm256_mul_ps(va, acc1[i]));
    }
    return;
  }
  const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    _mm256_storeu_ps(row, _mm256_fmadd_ps(va, acc0[i], _mm256_mul_ps(vb, _mm256_loadu_ps(row))));
    _mm256_storeu_ps(row + 8, _mm256_fmadd_ps(va, acc1[i], _mm256_mul_ps(vb, _mm256_loadu_ps(row + 8))));
  }
}

// Lanes [0, count) of an 8-lane vector (count may be past 8 or below 0).
__m256i LaneMask(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// A partial tile (EdgeTileFn): rows [0, R), V vectors of the B panel's columns (the last
// stored under a mask where `cols` ends inside it) and, in column form, kCols more columns
// from 8 * V on: the A panel's kMr rows as the lanes of one accumulator per column, each
// FMA the same product and sum as Tile's, in the same K loop as the vectors. Every element
// then takes Tile's alpha/beta step (the column form's lanes one by one, same roundings).
template <int R, int V, int kCols>
void Partial(int64_t kc, const float* a, const float* b, int /*rows*/, int cols, float* c, int64_t ldc, float alpha,
             float beta) {
  static_assert(R >= 1 && R <= kMr && 8 * V + kCols <= kNr, "a partial tile inside the full one");
  constexpr int kV = V > 0 ? V : 1, kC = kCols > 0 ? kCols : 1;
  __m256 acc[R][kV], column[kC];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();
  }
#pragma GCC unroll 8
  for (int j = 0; j < kCols; ++j) column[j] = _mm256_setzero_ps();
  const __m256i a_lanes = LaneMask(kMr);
  // One k step: Tile's vector loads and FMAs for the rows below R, then the column form's
  // FMAs; kKUnroll of them per loop iteration.
  const auto step = [&](const float* ak, const float* bk) __attribute__((always_inline)) {
    if constexpr (V > 0) {
      __m256 bv[kV];
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) bv[v] = _mm256_loadu_ps(bk + 8 * v);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const __m256 ai = _mm256_broadcast_ss(ak + i);
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
      }
    }
    if constexpr (kCols > 0) {
      const __m256 av = _mm256_maskload_ps(ak, a_lanes);
#pragma GCC unroll 8
      for (int j = 0; j < kCols; ++j) column[j] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(bk + 8 * V + j), column[j]);
    }
  };
  int64_t k = kc;
  for (; k >= kKUnroll; k -= kKUnroll) {
#pragma GCC unroll 4
    for (int u = 0; u < kKUnroll; ++u) step(a + u * kMr, b + u * kNr);
    a += kKUnroll * kMr;
    b += kKUnroll * kNr;
  }
  for (; k > 0; --k) {
    step(a, b);
    a += kMr;
    b += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    const __m256i mask = LaneMask(cols - 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      float* out = c + i * ldc + 8 * v;
      const __m256 result = beta == 0.0f
                                ? _mm256_mul_ps(va, acc[i][v])
                                : _mm256_fmadd_ps(va, acc[i][v], _mm256_mul_ps(vb, _mm256_maskload_ps(out, mask)));
      _mm256_maskstore_ps(out, mask, result);
    }
  }
  for (int j = 0; j < kCols; ++j) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, column[j]);
    float* out = c + 8 * V + j;
    for (int i = 0; i < R; ++i) {
      float& o = out[i * ldc];
      o = beta == 0.0f ? alpha * lanes[i] : __builtin_fmaf(alpha, lanes[i], beta * o);
    }
  }
}

// Partial<R, v, 0> for v = 1, 2 (row R's whole and masked vectors), and for kMr rows
// Partial<kMr, v, r> for v = 0, 1 and r = 1..kMr-1 (column form).
constexpr int kNv = kNr / 8;
template <int R, int... V>
constexpr std::array<EdgeTileFn, kNv> VectorRow(std::integer_sequence<int, V...>) {
  return {{&Partial<R, V + 1, 0>...}};
}
template <int... R>
constexpr std::array<std::array<EdgeTileFn, kNv>, kMr> VectorTable(std::integer_sequence<int, R...>) {
  return {{VectorRow<R + 1>(std::make_integer_sequence<int, kNv>())...}};
}
template <int V, int... C>
constexpr std::array<EdgeTileFn, kMr - 1> ColumnRow(std::integer_sequence<int, C...>) {
  return {{&Partial<kMr, V, C + 1>...}};
}
template <int... V>
constexpr std::array<std::array<EdgeTileFn, kMr - 1>, kNv> ColumnTable(std::integer_sequence<int, V...>) {
  return {{ColumnRow<V>(std::make_integer_sequence<int, kMr - 1>())...}};
}

// The partial tiles: columns past the last whole vector in column form when they are
// fewer than the rows (fewer FMAs than one more vector of kMr rows), else in one more
// vector stored under a mask.
void Edge(int64_t kc, const float* a, const float* b, int rows, int cols, float* c, int64_t ldc, float alpha,
          float beta) {
  static constexpr auto kVector = VectorTable(std::make_integer_sequence<int, kMr>());
  static constexpr auto kColumn = ColumnTable(std::make_integer_sequence<int, kNv>());
  const int whole = cols / 8, rest = cols % 8;
  if (rows == kMr && rest != 0 && rest < kMr)
    return kColumn[whole][rest - 1](kc, a, b, rows, cols, c, ldc, alpha, beta);
  kVector[rows - 1][(cols + 7) / 8 - 1](kc, a, b, rows, cols, c, ldc, alpha, beta);
}

// GEMV streams the matrix once from memory: each matrix row stream is prefetched this
// many floats (1 KiB) ahead (as the AVX-512 kernel; README in benchmarks/reports/gemm).
constexpr int64_t kGemvPrefetch = 256;

// y[j] += sum over R rows of x[i] m[i * ld + j], the rows added in order; vector lanes
// and scalar tail both use one fused multiply-add per row, so every column rounds alike.
template <int R>
void AccumulateRows(const float* x, const float* m, int64_t ld, int64_t n, float* y) {
  __m256 xv[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) xv[i] = _mm256_set1_ps(x[i]);
  GemvRowsPrefetch prefetch(m, ld, n, R, kGemvPrefetch);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {  // two vectors: one cache line of each row per prefetch
    const float* ahead = prefetch.Next();
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) _mm_prefetch(reinterpret_cast<const char*>(ahead + i * ld), _MM_HINT_T0);
    __m256 acc0 = _mm256_loadu_ps(y + j), acc1 = _mm256_loadu_ps(y + j + 8);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      acc0 = _mm256_fmadd_ps(xv[i], _mm256_loadu_ps(m + i * ld + j), acc0);
      acc1 = _mm256_fmadd_ps(xv[i], _mm256_loadu_ps(m + i * ld + j + 8), acc1);
    }
    _mm256_storeu_ps(y + j, acc0);
    _mm256_storeu_ps(y + j + 8, acc1);
  }
  for (; j < n; ++j) {
    float acc = y[j];
    for (int i = 0; i < R; ++i) acc = __builtin_fmaf(x[i], m[i * ld + j], acc);
    y[j] = acc;
  }
}

// y[j] += sum_k x[k] m[k * ld + j] in k order for every column: eight rows per pass over y
// (eight streams in flight), then single rows.
void GemvRowsAdd(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8) AccumulateRows<8>(x + kk, m + kk * ld, ld, n, y);
  for (; kk < k; ++kk) AccumulateRows<1>(x + kk, m + kk * ld, ld, n, y);
}

void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  GemvRowsAdd(k, n, x, m, ld, y);
}

float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// K block of the dots form: one step of Dots (two vectors per column).
constexpr int kDotsBlock = 16;

// Dot products of `Rows` columns (one group, DotsLayout) with x, two accumulators per
// column and the partial last block in scalar fused multiply-adds; every column follows
// the same sequence whatever Rows or the layout is.
template <int Rows>
void Dots(int64_t k, const float* x, const float* m, const DotsLayout& l, float* y) {
  __m256 acc0[Rows], acc1[Rows];
  for (int r = 0; r < Rows; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  const int64_t ahead = kGemvPrefetch / kDotsBlock * l.block;
  const float* block = m;
  int64_t kk = 0;
  for (; kk + kDotsBlock <= k; kk += kDotsBlock, block += l.block) {
    const __m256 x0 = _mm256_loadu_ps(x + kk), x1 = _mm256_loadu_ps(x + kk + 8);
    for (int r = 0; r < Rows; ++r) {
      const float* row = block + r * l.row;
      _mm_prefetch(reinterpret_cast<const char*>(row + ahead), _MM_HINT_T0);
      acc0[r] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(row), acc0[r]);
      acc1[r] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(row + 8), acc1[r]);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    float sum = HorizontalSum(_mm256_add_ps(acc0[r], acc1[r]));
    for (int64_t t = 0; kk + t < k; ++t) sum = __builtin_fmaf(x[kk + t], block[r * l.row + t], sum);
    y[r] = sum;
  }
}

void GemvDots(int64_t k, int64_t n, const float* x, const float* m, const DotsLayout& l, float* y) {
  int64_t j = 0;
  for (; j + kDotsGroup <= n; j += kDotsGroup) Dots<kDotsGroup>(k, x, m + j / kDotsGroup * l.group, l, y + j);
  for (; j < n; ++j) Dots<1>(k, x, m + j / kDotsGroup * l.group + j % kDotsGroup * l.row, l, y + j);
}

}  // namespace

// Constant-initialized (no code runs before a CPU check): gemm.cc hands them out only
// when IsaEnabled(Isa::kAvx2).
extern const MicroKernel kAvx2MicroKernel = {"avx2", kMr,      kNr,         /*kc=*/256, /*nc=*/512, Tile,
                                             Edge,   GemvRows, GemvRowsAdd, GemvDots,   kDotsBlock};

}  // namespace gemm
}  // namespace onnx_light

#endif  // __x86_64__
