// Axis handling shared by the axis-wise kernels: normalisation with the error messages
// the code base promises, and the strided walks that visit groups of dimensions.
#pragma once

#include <algorithm>
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

// An axis-wise op over a tensor viewed as [outer, length, inner]: the element (lane, k) of
// lane (o, i) sits at o * length * inner + k * inner + i. Lanes [begin, end) of the
// outer * inner lane space are visited as tiles of up to `tile` adjacent lanes of one
// outer row, so that each step along the axis reads `lanes` contiguous elements:
//   fn(int64_t offset_of_first_lane, int64_t first_lane, int64_t lanes).
template <typename F>
void ForEachLaneTile(int64_t length, int64_t inner, int64_t tile, int64_t begin, int64_t end, F&& fn) {
  for (int64_t lane = begin; lane < end;) {
    const int64_t row = lane / inner;
    const int64_t row_end = std::min(end, (row + 1) * inner);
    for (int64_t t = lane; t < row_end; t += tile) {
      fn(row * length * inner + (t - row * inner), t, std::min(tile, row_end - t));
    }
    lane = row_end;
  }
}

}  // namespace onnx_light
