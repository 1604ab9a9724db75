// Portable microkernels (any architecture; the compiler vectorises the inner loops).
#include <cmath>
#include <cstring>

#include "native/kernels/gemm/microkernel.h"

namespace onnx_light {
namespace gemm {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  float acc[kMr][kNr] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int i = 0; i < kMr; ++i) {
      for (int j = 0; j < kNr; ++j) acc[i][j] += a[i] * b[j];
    }
    a += kMr;
    b += kNr;
  }
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    for (int j = 0; j < kNr; ++j) row[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * row[j];
  }
}

// The partial tile: the full tile on a copy of the rows and columns it writes (the
// portable kernel is the reference build's; its edges are not where it is slow).
void Edge(int64_t kc, const float* a, const float* b, int rows, int cols, float* c, int64_t ldc, float alpha,
          float beta) {
  float tile[kMr * kNr];
  if (beta != 0.0f) {
    for (int i = 0; i < rows; ++i) std::memcpy(tile + i * kNr, c + i * ldc, sizeof(float) * cols);
  }
  Tile(kc, a, b, tile, kNr, alpha, beta);
  for (int i = 0; i < rows; ++i) std::memcpy(c + i * ldc, tile + i * kNr, sizeof(float) * cols);
}

void GemvRowsAdd(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* r = m + kk * ld;
    for (int64_t j = 0; j < n; ++j) y[j] += x[kk] * r[j];
  }
}

void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  GemvRowsAdd(k, n, x, m, ld, y);
}

// K block of the dots form (the sum runs in k order; the block only addresses the layout).
constexpr int kDotsBlock = 16;

void GemvDots(int64_t k, int64_t n, const float* x, const float* m, const DotsLayout& l, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* column = m + j / kDotsGroup * l.group + j % kDotsGroup * l.row;
    float sum = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kDotsBlock, column += l.block) {
      const int64_t steps = k - k0 < kDotsBlock ? k - k0 : kDotsBlock;
      for (int64_t t = 0; t < steps; ++t) sum += x[k0 + t] * column[t];
    }
    y[j] = sum;
  }
}

}  // namespace

const MicroKernel& ScalarKernel() {
  static const MicroKernel kernel{"scalar", kMr,      kNr,         /*kc=*/256, /*nc=*/512, Tile,
                                  Edge,     GemvRows, GemvRowsAdd, GemvDots,   kDotsBlock};
  return kernel;
}

}  // namespace gemm
}  // namespace onnx_light
