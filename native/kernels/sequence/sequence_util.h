// Shared by the sequence and optional kernels: reading sequence and position inputs.
#pragma once

#include "native/registry/kernel.h"

namespace onnx_light {
namespace sequence {

// Input i as a sequence; InvalidArgument naming op, node and what was given otherwise.
StatusOr<const Value*> SequenceInput(const KernelContext& ctx, int i);

// A position tensor (int32/int64, one element) checked against [-size, size - 1], or
// [-size, size] when `allow_end` (insertion); negative positions count from the back.
StatusOr<int64_t> Position(const KernelContext& ctx, const Tensor& position, int64_t size, bool allow_end);

}  // namespace sequence
}  // namespace onnx_light
