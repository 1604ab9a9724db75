// Shape: tensor dimensions with overflow-checked element and byte counts.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"

namespace onnx_light {

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  // Validates that no dimension is negative and the element count fits in int64.
  static StatusOr<Shape> Create(std::vector<int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int axis) const { return dims_[axis]; }
  int64_t operator[](int axis) const { return dims_[axis]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& mutable_dims() { return dims_; }

  // Product of dims; callers rely on Create()/Validate() having checked overflow.
  int64_t num_elements() const;
  // Product of dims [begin, end).
  int64_t SizeFrom(int begin) const { return SizeBetween(begin, rank()); }
  int64_t SizeTo(int end) const { return SizeBetween(0, end); }
  int64_t SizeBetween(int begin, int end) const;

  // Element count, or InvalidArgument if a dim is negative or the product overflows.
  StatusOr<int64_t> CheckedNumElements() const;
  // Bytes for this shape's elements of `type`, overflow-checked.
  StatusOr<size_t> CheckedByteSize(DataType type) const;

  std::string ToString() const;  // "[2,3,4]"; "[]" for a scalar
  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

std::ostream& operator<<(std::ostream& out, const Shape& shape);

// Normalises a possibly negative axis against `rank`; InvalidArgument if out of range.
StatusOr<int> NormalizeAxis(int64_t axis, int rank);

// Overflow-checked arithmetic helpers.
bool MultiplyOverflows(int64_t a, int64_t b, int64_t* out);

}  // namespace onnx_light
