// The inner products of one attention task: QK^T and PV of a tile of query rows against
// one kv head. float goes to the shared GEMM engine's serial entry point (its register
// tiles, packing and run-time ISA dispatch; it runs inline inside our task, opening no
// nested region); double, a rare path, uses plain loops.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onnx_light {
namespace attention {

// c (m x n, ldc) = a (m x k, lda) * op(b), op(b) = b (k x n, ldb) or, with trans_b, the
// transpose of b stored n x k. c is write-only. `scratch` holds HeadMatMulScratchBytes
// for the same shape (64-byte aligned). Each output element's sum has one fixed order,
// so results do not depend on the participant running the call.
size_t HeadMatMulScratchBytes(bool is_double, int64_t m, int64_t n, int64_t k);
void HeadMatMul(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, void* scratch);
void HeadMatMul(bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
                int64_t ldb, double* c, int64_t ldc, void* scratch);

}  // namespace attention
}  // namespace onnx_light
