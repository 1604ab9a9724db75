// ReduceLayout: the input's dimensions merged into alternating kept/reduced groups, so
// that each reduction runs either over contiguous runs (innermost group reduced) or over
// contiguous rows of kept elements accumulated across reduced positions (innermost kept).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"
#include "native/kernels/reduce_util/axes.h"

namespace onnx_light {

struct ReduceLayout {
  Shape output_shape;
  int64_t num_outputs = 0;
  int64_t reduce_count = 0;  // input elements per output
  // Innermost group: reduced (contiguous runs of `inner`) or kept (rows of `inner` outputs).
  bool inner_reduced = true;
  int64_t inner = 1;
  // Innermost reduced: `outputs` walks the kept groups (one step per output) and
  // `reduced` the reduced groups outside the innermost run. Innermost kept: `outputs`
  // walks the kept groups outside the innermost row and `reduced` every reduced group.
  StridedWalk outputs, reduced;
  // True when the input is [outputs, inner] with the inner run reduced: each output's
  // elements are one contiguous run, so a run may be split into deterministic chunks.
  bool single_run = false;
};

// `axes` normalised and sorted; `keepdims` as ONNX defines it. Fails (InvalidArgument
// naming `where`) only when the shape has too many alternating groups.
StatusOr<ReduceLayout> MakeReduceLayout(const Shape& shape, const std::vector<int>& axes, bool keepdims,
                                        const std::string& where);

}  // namespace onnx_light
