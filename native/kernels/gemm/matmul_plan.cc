#include "native/kernels/gemm/matmul_plan.h"

#include <algorithm>

namespace onnx_light {
namespace gemm {

StatusOr<MatMulPlan> PlanMatMul(const std::string& where, const Shape& a, const Shape& b, bool fold_shared_b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return InvalidArgument(where, ": operands must have rank >= 1, got ", a, " and ", b);
  }
  MatMulPlan p;
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  const bool a_vector = ad.size() == 1, b_vector = bd.size() == 1;
  if (a_vector) ad.insert(ad.begin(), 1);
  if (b_vector) bd.push_back(1);
  p.m = ad[ad.size() - 2];
  p.k = ad.back();
  p.n = bd.back();
  if (bd[bd.size() - 2] != p.k) {
    return InvalidArgument(where, ": inner dimensions differ: ", a, " x ", b);
  }
  const size_t batch_rank = std::max(ad.size(), bd.size()) - 2;
  std::vector<int64_t> out_batch(batch_rank), a_batch(batch_rank, 1), b_batch(batch_rank, 1);
  std::copy(ad.begin(), ad.end() - 2, a_batch.end() - (ad.size() - 2));
  std::copy(bd.begin(), bd.end() - 2, b_batch.end() - (bd.size() - 2));
  for (size_t i = 0; i < batch_rank; ++i) {
    if (a_batch[i] != b_batch[i] && a_batch[i] != 1 && b_batch[i] != 1) {
      return InvalidArgument(where, ": batch dimensions do not broadcast: ", a, " x ", b);
    }
    out_batch[i] = a_batch[i] == 1 ? b_batch[i] : a_batch[i];
  }
  std::vector<int64_t> out_dims = out_batch;
  if (!a_vector) out_dims.push_back(p.m);
  if (!b_vector) out_dims.push_back(p.n);
  OL_ASSIGN_OR_RETURN(p.output, Shape::Create(out_dims));
  // Batch offsets: odometer over the output batch, operands' broadcast dims stride 0.
  const int64_t batches = Shape(out_batch).num_elements();
  p.a_offsets.resize(batches);
  p.b_offsets.resize(batches);
  std::vector<int64_t> index(batch_rank, 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t ao = 0, bo = 0, a_stride = p.m * p.k, b_stride = p.k * p.n;
    for (size_t d = batch_rank; d-- > 0;) {
      if (a_batch[d] != 1) ao += index[d] * a_stride;
      if (b_batch[d] != 1) bo += index[d] * b_stride;
      a_stride *= a_batch[d];
      b_stride *= b_batch[d];
    }
    p.a_offsets[t] = ao;
    p.b_offsets[t] = bo;
    for (size_t d = batch_rank; d-- > 0;) {
      if (++index[d] < out_batch[d]) break;
      index[d] = 0;
    }
  }
  // B shared by every batch and A's batches consecutive: one (batches * m) x k product.
  bool a_consecutive = true;
  for (int64_t t = 0; t < batches; ++t) a_consecutive = a_consecutive && p.a_offsets[t] == t * p.m * p.k;
  bool b_shared = true;
  for (int64_t t = 0; t < batches; ++t) b_shared = b_shared && p.b_offsets[t] == 0;
  if (fold_shared_b && batches > 1 && a_consecutive && b_shared) {
    p.m *= batches;
    p.a_offsets = {0};
    p.b_offsets = {0};
  }
  return p;
}

}  // namespace gemm
}  // namespace onnx_light
