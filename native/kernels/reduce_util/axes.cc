#include "native/kernels/reduce_util/axes.h"

#include <algorithm>

namespace onnx_light {

StatusOr<int> NormalizeAxisFor(int64_t axis, const Shape& shape, const std::string& where) {
  const int rank = shape.rank();
  if (axis < -rank || axis >= rank) {
    return InvalidArgument(where, ": axis ", axis, " is out of range for input shape ", shape.ToString(), " (rank ",
                           rank, ")");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, const Shape& shape,
                                         const std::string& where) {
  const int rank = shape.rank();
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument(where, ": axis ", a, " is out of range for input shape ", shape.ToString(), " (rank ",
                             rank, ")");
    }
    out.push_back(static_cast<int>(a < 0 ? a + rank : a));
  }
  std::sort(out.begin(), out.end());
  auto dup = std::adjacent_find(out.begin(), out.end());
  if (dup != out.end()) {
    return InvalidArgument(where, ": axis ", *dup, " is repeated in axes for input shape ", shape.ToString());
  }
  return out;
}

StatusOr<std::vector<int64_t>> ReadInt64Input(const KernelContext& ctx, int index, const char* name) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) return std::vector<int64_t>{};
  if (t->dtype() != DataType::kInt64 || t->shape().rank() > 1) {
    return InvalidArgument(ctx.Where(), ": input '", name, "' must be a 1-D int64 tensor, got ", t->TypeAndShape());
  }
  const int64_t* d = t->data<int64_t>();
  return std::vector<int64_t>(d, d + t->num_elements());
}

bool StridedWalk::Add(int64_t size, int64_t stride) {
  if (rank_ == kMaxDims) return false;
  sizes_[rank_] = size;
  strides_[rank_] = stride;
  index_[rank_] = 0;
  ++rank_;
  return true;
}

int64_t StridedWalk::count() const {
  int64_t n = 1;
  for (int d = 0; d < rank_; ++d) n *= sizes_[d];
  return n;
}

void StridedWalk::Seek(int64_t linear) {
  offset_ = 0;
  for (int d = rank_ - 1; d >= 0; --d) {
    index_[d] = linear % sizes_[d];
    linear /= sizes_[d];
    offset_ += index_[d] * strides_[d];
  }
}

}  // namespace onnx_light
