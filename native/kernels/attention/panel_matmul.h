// The inner products of the attention family: C = A * B where B is packed in column
// panels once per key/value head (the decode of the cache, shared by the head's whole
// query group and every query tile) and A (query rows, probabilities) is read in place.
// A general GEMM would repack both operands on every call; here neither is repacked.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace attention {

// Columns per packed panel and the row multiple callers pad A to (the widest register
// block of the micro kernels: 8 rows for AVX-512, 4 for AVX2 and the portable loops).
inline constexpr int64_t kPanelWidth = 16;
inline constexpr int64_t kRowBlock = 8;

inline int64_t RoundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// Packed layout of a (k x n) right-hand side: ceil(n / kPanelWidth) panels, panel p holding
// rows 0..k-1 of columns [p*kPanelWidth, (p+1)*kPanelWidth) contiguously (k x kPanelWidth),
// columns past n zero. Element (r, c) lives at PackedIndex(k, r, c).
inline int64_t PackedSize(int64_t k, int64_t n) { return k * RoundUp(n, kPanelWidth); }
inline int64_t PackedIndex(int64_t k, int64_t r, int64_t c) {
  return (c / kPanelWidth) * k * kPanelWidth + r * kPanelWidth + c % kPanelWidth;
}

// c[i * ldc + j] = sum over r < k of a[i * lda + r] * B(r, j), for i < m and
// j < RoundUp(n, kPanelWidth), where B was packed with packed_rows >= k rows (only its
// leading k rows take part). m must be a multiple of kRowBlock (callers pad A with zero
// rows). Each output element is accumulated in order r = 0..k-1, so a row's result does
// not depend on which other rows share its call.
void PanelMatMul(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                 int64_t packed_rows, float* c, int64_t ldc);
void PanelMatMul(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b_packed,
                 int64_t packed_rows, double* c, int64_t ldc);

// The float kernels, best first, "portable" (the compiler-vectorised loops) last: x86-64
// "avx512" (8 rows x 32 columns of zmm accumulators), "avx2" (4 x 16 of ymm). PanelMatMul
// runs the best one enabled (isa_variants.h); the double one is portable only.
using PanelMatMulFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                               int64_t packed_rows, float* c, int64_t ldc);
const std::vector<IsaVariant<PanelMatMulFn>>& PanelMatMulVariants();

}  // namespace attention
}  // namespace onnx_light
