#include "native/kernels/tensor/tensor_args.h"

#include <algorithm>

#include "native/core/shape.h"

namespace onnx_light {

StatusOr<std::vector<int64_t>> ReadIndexList(const Tensor& t, const std::string& where, const char* what,
                                             bool allow_int32) {
  if (t.shape().rank() > 1) {
    return InvalidArgument(where, ": ", what, " must be a 1-D tensor, got ", t.TypeAndShape());
  }
  if (t.dtype() == DataType::kInt64)
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
  if (allow_int32 && t.dtype() == DataType::kInt32) {
    return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
  }
  return InvalidArgument(where, ": ", what, " must be int64", allow_int32 ? " or int32" : "", ", got ",
                         t.TypeAndShape());
}

StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank, const std::string& where) {
  std::vector<int> out;
  for (int64_t axis : axes) {
    auto a = NormalizeAxis(axis, rank);
    if (!a.ok()) return InvalidArgument(where, ": axis ", axis, " is out of range for rank ", rank);
    if (std::find(out.begin(), out.end(), *a) != out.end()) {
      return InvalidArgument(where, ": axis ", axis, " is repeated");
    }
    out.push_back(*a);
  }
  return out;
}

}  // namespace onnx_light
