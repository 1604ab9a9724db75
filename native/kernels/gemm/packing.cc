#include "native/kernels/gemm/packing.h"

#include <algorithm>
#include <cstring>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/gemm/packing_avx512.h"

namespace onnx_light {
namespace gemm {
namespace {

// Transposing copies are done in square blocks so that both sides stay in cache lines.
constexpr int64_t kTransposeBlock = 8;

// dst[k * stride + i] = src[i * ld + k] for i < rows, k < cols; avx512: the caller checked
// IsaEnabled(Isa::kAvx512).
void TransposeInto(bool avx512, const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride) {
#if defined(__x86_64__)
  if (avx512) return TransposeAvx512(src, ld, rows, cols, dst, stride);
#endif
  for (int64_t k0 = 0; k0 < cols; k0 += kTransposeBlock) {
    const int64_t k1 = std::min(cols, k0 + kTransposeBlock);
    for (int64_t i = 0; i < rows; ++i) {
      const float* s = src + i * ld;
      for (int64_t k = k0; k < k1; ++k) dst[k * stride + i] = s[k];
    }
  }
}

template <bool kAvx512>
void PackAPanelWith(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                    float* dst) {
  if (trans_a) {
    for (int64_t k = 0; k < kc; ++k) {
      float* d = dst + k * mr;
      std::memcpy(d, a + (k0 + k) * lda + i0, sizeof(float) * rows);
      std::fill(d + rows, d + mr, 0.0f);
    }
    return;
  }
  TransposeInto(kAvx512, a + i0 * lda + k0, lda, rows, kc, dst, mr);
  if (rows < mr) {
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * mr + rows, dst + (k + 1) * mr, 0.0f);
  }
}

template <bool kAvx512>
void PackBDenseWith(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                    float* dst) {
  const int64_t full = nc / nr * nr;
  const int cols = static_cast<int>(nc - full);  // of the last, partial panel
  if (trans_b) {
    for (int64_t j0 = 0; j0 < full; j0 += nr) {
      TransposeInto(kAvx512, b + (n0 + j0) * ldb + k0, ldb, nr, kc, dst + (j0 / nr) * kc * nr, nr);
    }
    if (cols > 0) {
      float* panel = dst + (full / nr) * kc * nr;
      for (int64_t k = 0; k < kc; ++k) std::fill(panel + k * nr + cols, panel + (k + 1) * nr, 0.0f);
      TransposeInto(kAvx512, b + (n0 + full) * ldb + k0, ldb, cols, kc, panel, nr);
    }
    return;
  }
#if defined(__x86_64__)
  if (kAvx512 && nr % 16 == 0) return PackBRowsAvx512(b + k0 * ldb + n0, ldb, kc, nc, nr, dst);
#endif
  // Row by row, so that B is read sequentially.
  for (int64_t k = 0; k < kc; ++k) {
    const float* src = b + (k0 + k) * ldb + n0;
    for (int64_t j0 = 0; j0 < full; j0 += nr) {
      std::memcpy(dst + ((j0 / nr) * kc + k) * nr, src + j0, sizeof(float) * nr);
    }
    if (cols > 0) {
      float* row = dst + ((full / nr) * kc + k) * nr;
      std::memcpy(row, src + full, sizeof(float) * cols);
      std::fill(row + cols, row + nr, 0.0f);
    }
  }
}

}  // namespace

const std::vector<IsaVariant<Packing>>& PackingVariants() {
  static const auto* variants = new std::vector<IsaVariant<Packing>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, Packing{PackAPanelWith<true>, PackBDenseWith<true>}},
#endif
        {"portable", Isa::kPortable, Packing{PackAPanelWith<false>, PackBDenseWith<false>}},
  };
  return *variants;
}

namespace {
const Packing& BestPacking() {
  static const Packing packing = BestVariant(PackingVariants()).impl;
  return packing;
}
}  // namespace

void PackAPanel(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                float* dst) {
  BestPacking().pack_a(trans_a, a, lda, i0, rows, k0, kc, mr, dst);
}

void PackBDense(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                float* dst) {
  BestPacking().pack_b(trans_b, b, ldb, k0, kc, n0, nc, nr, dst);
}

}  // namespace gemm
}  // namespace onnx_light
