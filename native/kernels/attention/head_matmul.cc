#include "native/kernels/attention/head_matmul.h"

#include <algorithm>

#include "native/kernels/gemm/gemm.h"

namespace onnx_light {
namespace attention {

size_t HeadMatMulScratchBytes(bool is_double, int64_t m, int64_t n, int64_t k) {
  return is_double ? 0 : gemm::SgemmSerialScratchBytes(m, n, k);
}

void HeadMatMul(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, void* scratch) {
  gemm::SgemmSerial(/*trans_a=*/false, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc,
                    static_cast<float*>(scratch));
}

void HeadMatMul(bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
                int64_t ldb, double* c, int64_t ldc, void*) {
  for (int64_t i = 0; i < m; ++i) {
    const double* a_row = a + i * lda;
    double* c_row = c + i * ldc;
    if (trans_b) {  // dot products against rows of b
      for (int64_t j = 0; j < n; ++j) {
        const double* b_row = b + j * ldb;
        double sum = 0;
        for (int64_t r = 0; r < k; ++r) sum += a_row[r] * b_row[r];
        c_row[j] = sum;
      }
    } else {  // rows of b scaled and accumulated (vectorises along n)
      std::fill(c_row, c_row + n, 0.0);
      for (int64_t r = 0; r < k; ++r) {
        const double av = a_row[r];
        const double* b_row = b + r * ldb;
        for (int64_t j = 0; j < n; ++j) c_row[j] += av * b_row[j];
      }
    }
  }
}

}  // namespace attention
}  // namespace onnx_light
