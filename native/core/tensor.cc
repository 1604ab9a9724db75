#include "native/core/tensor.h"

#include <cstring>
#include <new>

namespace onnx_light {
namespace {

// Owns an allocator buffer; destroys string elements before freeing.
struct Buffer {
  Buffer(Allocator* a, void* d, size_t b) : allocator(a), data(d), bytes(b) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Allocator* allocator;
  void* data;
  size_t bytes;
  int64_t strings = 0;  // number of constructed std::string elements (0 for other types)
  ~Buffer() {
    auto* s = static_cast<std::string*>(data);
    for (int64_t i = 0; i < strings; ++i) s[i].~basic_string();
    allocator->Free(data, bytes);
  }
};

}  // namespace

StatusOr<Tensor> Tensor::Allocate(DataType type, Shape shape, Allocator* allocator, bool zero) {
  if (!IsValidDataType(static_cast<int32_t>(type))) {
    return InvalidArgument("cannot allocate a tensor of undefined element type ", static_cast<int>(type));
  }
  OL_ASSIGN_OR_RETURN(int64_t n, shape.CheckedNumElements());
  OL_ASSIGN_OR_RETURN(size_t bytes, shape.CheckedByteSize(type));
  OL_ASSIGN_OR_RETURN(void* data, allocator->Allocate(bytes));
  auto buffer = std::make_shared<Buffer>(allocator, data, bytes);
  if (type == DataType::kString) {
    auto* s = static_cast<std::string*>(data);
    for (int64_t i = 0; i < n; ++i) new (s + i) std::string();
    buffer->strings = n;
  } else if (zero && bytes > 0) {
    std::memset(data, 0, bytes);
  }
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.num_elements_ = n;
  t.data_ = data;
  t.holder_ = std::move(buffer);
  t.allocated_ = true;
  return t;
}

Tensor Tensor::Borrow(DataType type, Shape shape, void* data, std::shared_ptr<void> keep_alive) {
  Tensor t;
  t.type_ = type;
  t.num_elements_ = shape.num_elements();
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.holder_ = std::move(keep_alive);
  return t;
}

StatusOr<Tensor> Tensor::Reshaped(Shape shape) const {
  OL_ASSIGN_OR_RETURN(int64_t n, shape.CheckedNumElements());
  if (n != num_elements_) {
    return InvalidArgument("cannot view ", TypeAndShape(), " as shape ", shape.ToString(), ": element counts differ (",
                           num_elements_, " vs ", n, ")");
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

StatusOr<Tensor> Tensor::Clone(Allocator* allocator) const {
  OL_ASSIGN_OR_RETURN(Tensor copy, Allocate(type_, shape_, allocator));
  if (type_ == DataType::kString) {
    const auto* src = data<std::string>();
    auto* dst = copy.data<std::string>();
    for (int64_t i = 0; i < num_elements_; ++i) dst[i] = src[i];
  } else if (byte_size() > 0) {
    std::memcpy(copy.raw_data(), data_, byte_size());
  }
  return copy;
}

bool Tensor::Overlaps(const Tensor& other) const {
  if (byte_size() == 0 || other.byte_size() == 0) return false;
  const auto* a = static_cast<const char*>(data_);
  const auto* b = static_cast<const char*>(other.data_);
  return a < b + other.byte_size() && b < a + byte_size();
}

std::string Tensor::TypeAndShape() const { return StrCat(DataTypeName(type_), shape_.ToString()); }

}  // namespace onnx_light
