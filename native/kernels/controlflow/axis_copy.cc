#include "native/kernels/controlflow/axis_copy.h"

#include <cstring>
#include <string>

namespace onnx_light {
namespace controlflow {
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

StatusOr<Tensor> SliceAxis(const Tensor& input, int axis, int64_t index, Allocator* allocator) {
  const Shape& shape = input.shape();
  if (axis < 0 || axis >= shape.rank() || index < 0 || index >= shape[axis]) {
    return InvalidArgument("cannot take index ", index, " of axis ", axis, " of ", input.TypeAndShape());
  }
  std::vector<int64_t> dims = shape.dims();
  dims.erase(dims.begin() + axis);
  OL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(input.dtype(), Shape(dims), allocator));
  const int64_t outer = shape.SizeTo(axis);
  const int64_t length = shape[axis];
  const int64_t inner = shape.SizeFrom(axis + 1);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(input.dtype(), input.raw_data(), (o * length + index) * inner, out.raw_data(), o * inner, inner);
  }
  return out;
}

StatusOr<Tensor> StackAxis(const std::vector<Tensor>& parts, int axis, DataType type, const Shape& part_shape,
                           Allocator* allocator) {
  for (const Tensor& part : parts) {
    if (part.dtype() != type || part.shape() != part_shape) {
      return InvalidArgument("cannot stack ", part.TypeAndShape(), " with ", DataTypeName(type),
                             part_shape.ToString(), ": every iteration must give the same type and shape");
    }
  }
  if (axis < 0 || axis > part_shape.rank()) {
    return InvalidArgument("cannot stack ", DataTypeName(type), part_shape.ToString(), " along new axis ", axis);
  }
  std::vector<int64_t> dims = part_shape.dims();
  const int64_t length = static_cast<int64_t>(parts.size());
  dims.insert(dims.begin() + axis, length);
  OL_ASSIGN_OR_RETURN(Shape shape, Shape::Create(dims));
  OL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type, shape, allocator));
  const int64_t outer = part_shape.SizeTo(axis);
  const int64_t inner = part_shape.SizeFrom(axis);
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t o = 0; o < outer; ++o) {
      CopyElements(type, parts[i].raw_data(), o * inner, out.raw_data(), (o * length + i) * inner, inner);
    }
  }
  return out;
}

}  // namespace controlflow
}  // namespace onnx_light
