// numpy.matmul shapes for MatMul, MatMulInteger and QLinearMatMul: 1-D operands and
// broadcast batch dimensions resolved into per-batch matrix offsets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"

namespace onnx_light {
namespace gemm {

struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  Shape output;
  std::vector<int64_t> a_offsets, b_offsets;  // element offsets of each output batch's matrices
};

// InvalidArgument (prefixed by `where`) for rank-0 operands, mismatched inner dimensions
// or batch dimensions that do not broadcast. With fold_shared_b, batches that share B and
// whose A matrices are consecutive become one (batches * m) x k product.
StatusOr<MatMulPlan> PlanMatMul(const std::string& where, const Shape& a, const Shape& b, bool fold_shared_b);

}  // namespace gemm
}  // namespace onnx_light
