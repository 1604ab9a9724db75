#include "native/kernels/controlflow/axis_copy.h"

#include <cstring>
#include <string>

namespace onnx_light {
namespace axis_copy {
namespace {

// Copies `count` elements; strings are assigned, everything else is bytes.
void CopyElements(DataType type, const void* src, int64_t src_offset, void* dst, int64_t dst_offset, int64_t count) {
  if (type == DataType::kString) {
    const auto* s = static_cast<const std::string*>(src) + src_offset;
    auto* d = static_cast<std::string*>(dst) + dst_offset;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i];
    return;
  }
  const size_t size = ElementSize(type);
  std::memcpy(static_cast<char*>(dst) + dst_offset * size, static_cast<const char*>(src) + src_offset * size,
              count * size);
}

}  // namespace

StatusOr<Tensor> Slice(const Tensor& input, int axis, int64_t start, int64_t length, bool keep_axis,
                       Allocator* allocator) {
  const Shape& shape = input.shape();
  if (axis < 0 || axis >= shape.rank() || start < 0 || length < 0 || start + length > shape[axis] ||
      (!keep_axis && length != 1)) {
    return InvalidArgument("cannot take [", start, ", ", start + length, ") of axis ", axis, " of ",
                           input.TypeAndShape());
  }
  std::vector<int64_t> dims = shape.dims();
  if (keep_axis) {
    dims[axis] = length;
  } else {
    dims.erase(dims.begin() + axis);
  }
  OL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(input.dtype(), Shape(dims), allocator));
  const int64_t outer = shape.SizeTo(axis);
  const int64_t inner = shape.SizeFrom(axis + 1);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(input.dtype(), input.raw_data(), (o * shape[axis] + start) * inner, out.raw_data(), o * length * inner,
                 length * inner);
  }
  return out;
}

StatusOr<Tensor> Concat(const std::vector<Tensor>& parts, int axis, Allocator* allocator) {
  if (parts.empty()) return InvalidArgument("cannot concatenate zero tensors");
  const Tensor& first = parts.front();
  if (axis < 0 || axis >= first.shape().rank()) {
    return InvalidArgument("cannot concatenate ", first.TypeAndShape(), " along axis ", axis);
  }
  std::vector<int64_t> dims = first.shape().dims();
  dims[axis] = 0;
  for (const Tensor& part : parts) {
    bool compatible = part.dtype() == first.dtype() && part.shape().rank() == first.shape().rank();
    for (int d = 0; compatible && d < first.shape().rank(); ++d) {
      compatible = d == axis || part.shape()[d] == first.shape()[d];
    }
    if (!compatible) {
      return InvalidArgument("cannot concatenate ", part.TypeAndShape(), " with ", first.TypeAndShape(), " along axis ",
                             axis, ": types and the other dims must match");
    }
    dims[axis] += part.shape()[axis];
  }
  OL_ASSIGN_OR_RETURN(Shape shape, Shape::Create(dims));
  OL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape, allocator));
  const int64_t outer = shape.SizeTo(axis);
  const int64_t out_row = shape.SizeFrom(axis);
  int64_t offset = 0;  // elements of the output row before this part
  for (const Tensor& part : parts) {
    const int64_t row = part.shape().SizeFrom(axis);
    for (int64_t o = 0; o < outer; ++o) {
      CopyElements(first.dtype(), part.raw_data(), o * row, out.raw_data(), o * out_row + offset, row);
    }
    offset += row;
  }
  return out;
}

StatusOr<Tensor> Stack(const std::vector<Tensor>& parts, int axis, DataType type, const Shape& part_shape,
                       Allocator* allocator) {
  if (axis < 0 || axis > part_shape.rank()) {
    return InvalidArgument("cannot stack ", DataTypeName(type), part_shape.ToString(), " along new axis ", axis);
  }
  std::vector<int64_t> dims = part_shape.dims();
  dims.insert(dims.begin() + axis, 1);
  std::vector<Tensor> expanded;
  expanded.reserve(parts.size());
  for (const Tensor& part : parts) {
    if (part.dtype() != type || part.shape() != part_shape) {
      return InvalidArgument("cannot stack ", part.TypeAndShape(), " with ", DataTypeName(type), part_shape.ToString(),
                             ": every part must have the same type and shape");
    }
    OL_ASSIGN_OR_RETURN(Tensor view, part.Reshaped(Shape(dims)));
    expanded.push_back(std::move(view));
  }
  if (expanded.empty()) {
    dims[axis] = 0;
    return Tensor::Allocate(type, Shape(dims), allocator);
  }
  return Concat(expanded, axis, allocator);
}

}  // namespace axis_copy
}  // namespace onnx_light
