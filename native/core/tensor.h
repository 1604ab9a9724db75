// Tensor: an element type, a shape and a buffer. Copies share the buffer (like ONNX
// Runtime's OrtValue); a view borrows memory it does not own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "native/core/allocator.h"
#include "native/core/data_type.h"
#include "native/core/shape.h"
#include "native/core/status.h"

namespace onnx_light {

class Tensor {
 public:
  Tensor() = default;

  // A new buffer from `allocator`; strings are default-constructed, other types are
  // left uninitialised unless `zero` is set. Overflowing shapes give InvalidArgument,
  // refused memory ResourceExhausted.
  static StatusOr<Tensor> Allocate(DataType type, Shape shape, Allocator* allocator, bool zero = false);
  // Borrows `data`; `keep_alive` (may be null) is held as long as any copy of the tensor.
  static Tensor Borrow(DataType type, Shape shape, void* data, std::shared_ptr<void> keep_alive = nullptr);

  bool defined() const { return type_ != DataType::kUndefined; }
  DataType dtype() const { return type_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return static_cast<size_t>(num_elements_) * ElementSize(type_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }

  // Same buffer under another shape with the same element count (Reshape, Flatten...).
  StatusOr<Tensor> Reshaped(Shape shape) const;

  // A deep copy into a new buffer from `allocator`.
  StatusOr<Tensor> Clone(Allocator* allocator) const;

  // True when this tensor is the only holder of its buffer (no other tensor, view or
  // keep-alive owner shares it), so the buffer can be handed on without a copy. A pure
  // view (no holder) is never exclusive.
  bool OwnsBufferExclusively() const { return holder_ != nullptr && holder_.use_count() == 1; }

  // How many holders share this tensor's buffer when the buffer came from Allocate (this
  // tensor and its copies, views and reshapes included), 0 for a borrowed buffer (its
  // keep-alive owner may be read by others this count cannot see). A caller that knows
  // every holder can tell that no one else reads the bytes (the session, before a kernel
  // consumes an initializer's storage: registry/kernel.h, ConstantConsumer).
  long allocated_buffer_holders() const { return allocated_ ? holder_.use_count() : 0; }

  // True when both tensors may touch the same bytes.
  bool Overlaps(const Tensor& other) const;

  // "float[2,3]".
  std::string TypeAndShape() const;

 private:
  DataType type_ = DataType::kUndefined;
  Shape shape_;
  int64_t num_elements_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> holder_;  // owns or keeps alive the buffer; null for pure views
  bool allocated_ = false;        // holder_ is the Buffer that Allocate made (not a keep-alive)
};

}  // namespace onnx_light
