// Slicing one index out of an axis and stacking equal tensors along a new axis: the data
// movement Loop and Scan need for their scan inputs and outputs (any element type).
#pragma once

#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {
namespace controlflow {

// The sub-tensor at `index` of `axis`, with that axis removed (a copy).
StatusOr<Tensor> SliceAxis(const Tensor& input, int axis, int64_t index, Allocator* allocator);

// Stacks `parts` (equal type and shape) into a tensor with a new axis `axis` of length
// parts.size(); `type` and `part_shape` describe the parts when there are none.
StatusOr<Tensor> StackAxis(const std::vector<Tensor>& parts, int axis, DataType type, const Shape& part_shape,
                           Allocator* allocator);

}  // namespace controlflow
}  // namespace onnx_light
