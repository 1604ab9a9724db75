// Einsum equations compiled against input shapes: every label (letters and the
// broadcast dimensions an ellipsis stands for) gets a size and, per input, a stride
// (summed over repeated labels, which is how diagonals are read; 0 where an input lacks
// the label or broadcasts it). Output labels come first, then the contracted ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"

namespace onnx_light {
namespace einsum {

struct EinsumPlan {
  Shape output_shape;
  int num_output_labels = 0;
  std::vector<int64_t> sizes;                 // per label: output labels, then contracted
  std::vector<std::vector<int64_t>> strides;  // [input][label], in elements
  int64_t output_size = 1;
  int64_t contraction_size = 1;  // product of the contracted labels' sizes
};

// Parses `equation` ("ij,jk->ik", "...ii->...i", implicit "ij,jk") for inputs of
// `shapes`. InvalidArgument naming `where` on a malformed equation or mismatched sizes.
StatusOr<EinsumPlan> PlanEinsum(const std::string& equation, const std::vector<Shape>& shapes,
                                const std::string& where);

}  // namespace einsum
}  // namespace onnx_light
