// Reading the small integer tensors that shape-like ops take as inputs (shapes, axes,
// repeats, starts...), with errors that name the op, node and offending input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {

// The values of a 1-D (or scalar) int64 tensor; int32 too when `allow_int32`.
StatusOr<std::vector<int64_t>> ReadIndexList(const Tensor& t, const std::string& where, const char* what,
                                             bool allow_int32 = false);

// Normalises each axis against `rank` (negative counts from the end) and rejects
// out-of-range or repeated axes.
StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank, const std::string& where);

}  // namespace onnx_light
