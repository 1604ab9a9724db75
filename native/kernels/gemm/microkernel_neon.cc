// NEON microkernels (aarch64): 8 x 12 register tile (24 accumulators).
#include "native/kernels/gemm/microkernel.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <array>
#include <utility>

namespace onnx_light {
namespace gemm {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;

void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  float32x4_t acc[kMr][3];
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = acc[i][2] = vdupq_n_f32(0.0f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
#define OL_ROW(i, av, lane)                             \
  acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av, lane); \
  acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av, lane); \
  acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, av, lane)
    OL_ROW(0, a0, 0);
    OL_ROW(1, a0, 1);
    OL_ROW(2, a0, 2);
    OL_ROW(3, a0, 3);
    OL_ROW(4, a1, 0);
    OL_ROW(5, a1, 1);
    OL_ROW(6, a1, 2);
    OL_ROW(7, a1, 3);
#undef OL_ROW
    a += kMr;
    b += kNr;
  }
  const float32x4_t va = vdupq_n_f32(alpha);
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    for (int q = 0; q < 3; ++q) {
      float32x4_t out = vmulq_f32(va, acc[i][q]);
      if (beta != 0.0f) out = vfmaq_f32(out, vdupq_n_f32(beta), vld1q_f32(row + 4 * q));
      vst1q_f32(row + 4 * q, out);
    }
  }
}

// A partial tile (EdgeTileFn): rows [0, R) and the first V vectors of the B panel's
// columns, the last one stored lane by lane where `cols` ends inside it; each element with
// Tile's fused multiply-adds (vfmaq_n_f32 is vfmaq_laneq_f32's arithmetic) and alpha/beta
// step. (The column form of the x86 kernels is not here: not measured on ARM hardware.)
template <int R, int V>
void Partial(int64_t kc, const float* a, const float* b, int /*rows*/, int cols, float* c, int64_t ldc, float alpha,
             float beta) {
  float32x4_t acc[R][V];
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = vdupq_n_f32(0.0f);
  }
  for (int64_t k = 0; k < kc; ++k) {
    float32x4_t bv[V];
    for (int v = 0; v < V; ++v) bv[v] = vld1q_f32(b + 4 * v);
    for (int i = 0; i < R; ++i) {
      for (int v = 0; v < V; ++v) acc[i][v] = vfmaq_n_f32(acc[i][v], bv[v], a[i]);
    }
    a += kMr;
    b += kNr;
  }
  const float32x4_t va = vdupq_n_f32(alpha);
  for (int i = 0; i < R; ++i) {
    float* row = c + i * ldc;
    for (int v = 0; v < V; ++v) {
      const int lanes = cols - 4 * v < 4 ? cols - 4 * v : 4;
      float in[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int l = 0; l < lanes; ++l) in[l] = row[4 * v + l];
      float32x4_t out = vmulq_f32(va, acc[i][v]);
      if (beta != 0.0f) out = vfmaq_f32(out, vdupq_n_f32(beta), vld1q_f32(in));
      float result[4];
      vst1q_f32(result, out);
      for (int l = 0; l < lanes; ++l) row[4 * v + l] = result[l];
    }
  }
}

template <int R, int... V>
constexpr std::array<EdgeTileFn, kNr / 4> VectorRow(std::integer_sequence<int, V...>) {
  return {{&Partial<R, V + 1>...}};
}
template <int... R>
constexpr std::array<std::array<EdgeTileFn, kNr / 4>, kMr> VectorTable(std::integer_sequence<int, R...>) {
  return {{VectorRow<R + 1>(std::make_integer_sequence<int, kNr / 4>())...}};
}

void Edge(int64_t kc, const float* a, const float* b, int rows, int cols, float* c, int64_t ldc, float alpha,
          float beta) {
  static constexpr auto kVector = VectorTable(std::make_integer_sequence<int, kMr>());
  kVector[rows - 1][(cols + 3) / 4 - 1](kc, a, b, rows, cols, c, ldc, alpha, beta);
}

// GEMV streams the matrix once from memory: each matrix row stream is prefetched this
// many floats (1 KiB) ahead, as on x86 (not measured on ARM hardware).
constexpr int64_t kGemvPrefetch = 256;

// y[j] += sum over R rows of x[i] m[i * ld + j], the rows added in order; lanes and tail
// both use one fused multiply-add per row, so every column rounds alike.
template <int R>
void AccumulateRows(const float* x, const float* m, int64_t ld, int64_t n, float* y) {
  float32x4_t xv[R];
  for (int i = 0; i < R; ++i) xv[i] = vdupq_n_f32(x[i]);
  GemvRowsPrefetch prefetch(m, ld, n, R, kGemvPrefetch);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {  // one 64-byte line of each row per prefetch
    const float* ahead = prefetch.Next();
    for (int i = 0; i < R; ++i) __builtin_prefetch(ahead + i * ld);
    float32x4_t acc[4];
    for (int q = 0; q < 4; ++q) acc[q] = vld1q_f32(y + j + 4 * q);
    for (int i = 0; i < R; ++i) {
      for (int q = 0; q < 4; ++q) acc[q] = vfmaq_f32(acc[q], xv[i], vld1q_f32(m + i * ld + j + 4 * q));
    }
    for (int q = 0; q < 4; ++q) vst1q_f32(y + j + 4 * q, acc[q]);
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

// K block of the dots form: one step of Dots (four vectors per column).
constexpr int kDotsBlock = 16;

// Dot products of `Rows` columns (one group, DotsLayout) with x, four accumulators per
// column and the partial last block in scalar fused multiply-adds; every column follows
// the same sequence whatever Rows or the layout is.
template <int Rows>
void Dots(int64_t k, const float* x, const float* m, const DotsLayout& l, float* y) {
  float32x4_t acc[Rows][4];
  for (int r = 0; r < Rows; ++r) {
    for (int q = 0; q < 4; ++q) acc[r][q] = vdupq_n_f32(0.0f);
  }
  const int64_t ahead = kGemvPrefetch / kDotsBlock * l.block;
  const float* block = m;
  int64_t kk = 0;
  for (; kk + kDotsBlock <= k; kk += kDotsBlock, block += l.block) {
    float32x4_t xv[4];
    for (int q = 0; q < 4; ++q) xv[q] = vld1q_f32(x + kk + 4 * q);
    for (int r = 0; r < Rows; ++r) {
      const float* row = block + r * l.row;
      __builtin_prefetch(row + ahead);
      for (int q = 0; q < 4; ++q) acc[r][q] = vfmaq_f32(acc[r][q], xv[q], vld1q_f32(row + 4 * q));
    }
  }
  for (int r = 0; r < Rows; ++r) {
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[r][0], acc[r][1]), vaddq_f32(acc[r][2], acc[r][3])));
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

const MicroKernel* NeonKernel() {
  static const MicroKernel kernel{"neon", kMr,      kNr,         /*kc=*/256, /*nc=*/480, Tile,
                                  Edge,   GemvRows, GemvRowsAdd, GemvDots,   kDotsBlock};
  return &kernel;
}

}  // namespace gemm
}  // namespace onnx_light

#else
namespace onnx_light {
namespace gemm {
const MicroKernel* NeonKernel() { return nullptr; }
}  // namespace gemm
}  // namespace onnx_light
#endif
