#include "native/kernels/gemm/packing.h"

#include <algorithm>
#include <cstring>

namespace onnx_light {
namespace gemm {
namespace {

// Transposing copies are done in square blocks so that both sides stay in cache lines.
constexpr int64_t kTransposeBlock = 8;

// dst[k * stride + i] = src[i * ld + k] for i < rows, k < cols.
void TransposeInto(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride) {
  for (int64_t k0 = 0; k0 < cols; k0 += kTransposeBlock) {
    const int64_t k1 = std::min(cols, k0 + kTransposeBlock);
    for (int64_t i = 0; i < rows; ++i) {
      const float* s = src + i * ld;
      for (int64_t k = k0; k < k1; ++k) dst[k * stride + i] = s[k];
    }
  }
}

}  // namespace

void PackAPanel(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                float* dst) {
  if (trans_a) {
    for (int64_t k = 0; k < kc; ++k) {
      float* d = dst + k * mr;
      std::memcpy(d, a + (k0 + k) * lda + i0, sizeof(float) * rows);
      std::fill(d + rows, d + mr, 0.0f);
    }
    return;
  }
  TransposeInto(a + i0 * lda + k0, lda, rows, kc, dst, mr);
  if (rows < mr) {
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * mr + rows, dst + (k + 1) * mr, 0.0f);
  }
}

void PackBDense(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                float* dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    const int cols = static_cast<int>(std::min<int64_t>(nr, nc - j0));
    float* panel = dst + (j0 / nr) * kc * nr;
    if (trans_b) {
      TransposeInto(b + (n0 + j0) * ldb + k0, ldb, cols, kc, panel, nr);
      if (cols < nr) {
        for (int64_t k = 0; k < kc; ++k) std::fill(panel + k * nr + cols, panel + (k + 1) * nr, 0.0f);
      }
    } else {
      const float* src = b + k0 * ldb + n0 + j0;
      for (int64_t k = 0; k < kc; ++k) {
        std::memcpy(panel + k * nr, src + k * ldb, sizeof(float) * cols);
        std::fill(panel + k * nr + cols, panel + (k + 1) * nr, 0.0f);
      }
    }
  }
}

}  // namespace gemm
}  // namespace onnx_light
