// Axis handling shared by the axis-wise kernels: normalisation with the error messages
// the code base promises, and the strided walks that visit groups of dimensions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// Wraps negative axes; InvalidArgument naming `where`, the axis and the shape when an
// axis is out of range or repeated. The result is sorted.
StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, const Shape& shape,
                                         const std::string& where);

// One axis: NormalizeAxis with a message naming `where` and the shape.
StatusOr<int> NormalizeAxisFor(int64_t axis, const Shape& shape, const std::string& where);

// The values of a 1-D (or scalar) int64 input; empty when the input is absent.
StatusOr<std::vector<int64_t>> ReadInt64Input(const KernelContext& ctx, int index, const char* name);

// Visits the offsets of a multi-index over (size, stride) dimensions in row-major order.
// Fixed capacity so that workers can build one without allocating.
class StridedWalk {
 public:
  static constexpr int kMaxDims = 32;

  StridedWalk() = default;
  // False when there are more than kMaxDims dimensions.
  bool Add(int64_t size, int64_t stride);
  int64_t count() const;

  // Positions the walk at the linear index `linear` (0 <= linear < count()).
  void Seek(int64_t linear);
  int64_t offset() const { return offset_; }
  void Next() {
    for (int d = rank_ - 1; d >= 0; --d) {
      offset_ += strides_[d];
      if (++index_[d] < sizes_[d]) return;
      offset_ -= strides_[d] * sizes_[d];
      index_[d] = 0;
    }
  }

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxDims> sizes_{}, strides_{}, index_{};
  int64_t offset_ = 0;
};

}  // namespace onnx_light
