// Data movement along one axis for any element type (strings included): what Loop and
// Scan need for scan inputs and outputs, and the sequence family for SplitToSequence and
// ConcatFromSequence. Serial copies: these ops move little data per call.
#pragma once

#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {
namespace axis_copy {

// Elements [start, start + length) of `axis` (a copy). keep_axis = false drops the axis
// (length must then be 1).
StatusOr<Tensor> Slice(const Tensor& input, int axis, int64_t start, int64_t length, bool keep_axis,
                       Allocator* allocator);

// Concatenates `parts` (same type, same dims except along `axis`) along `axis`.
StatusOr<Tensor> Concat(const std::vector<Tensor>& parts, int axis, Allocator* allocator);

// Stacks `parts` (equal type and shape) along a new axis `axis`; `type` and `part_shape`
// describe the parts when there are none.
StatusOr<Tensor> Stack(const std::vector<Tensor>& parts, int axis, DataType type, const Shape& part_shape,
                       Allocator* allocator);

}  // namespace axis_copy
}  // namespace onnx_light
