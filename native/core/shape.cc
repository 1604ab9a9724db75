#include "native/core/shape.h"

#include <ostream>

namespace onnx_light {

bool MultiplyOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

StatusOr<Shape> Shape::Create(std::vector<int64_t> dims) {
  Shape shape(std::move(dims));
  OL_RETURN_IF_ERROR(shape.CheckedNumElements().status());
  return shape;
}

int64_t Shape::num_elements() const { return SizeBetween(0, rank()); }

int64_t Shape::SizeBetween(int begin, int end) const {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims_[i];
  return n;
}

StatusOr<int64_t> Shape::CheckedNumElements() const {
  int64_t n = 1;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] < 0) return InvalidArgument("shape ", ToString(), " has negative dimension at axis ", i);
  }
  for (int64_t d : dims_) {
    if (MultiplyOverflows(n, d, &n))
      return InvalidArgument("shape ", ToString(), " has more elements than int64 can count");
  }
  return n;
}

StatusOr<size_t> Shape::CheckedByteSize(DataType type) const {
  OL_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements());
  int64_t bytes;
  if (MultiplyOverflows(n, static_cast<int64_t>(ElementSize(type)), &bytes)) {
    return InvalidArgument("shape ", ToString(), " of ", DataTypeName(type), " needs more bytes than can be addressed");
  }
  return static_cast<size_t>(bytes);
}

std::string Shape::ToString() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) { return out << shape.ToString(); }

StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  const int64_t r = rank;
  if (axis < -r || axis >= r) {
    return InvalidArgument("axis ", axis, " is out of range for rank ", rank);
  }
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace onnx_light
