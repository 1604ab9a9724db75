#include "native/kernels/reduce_util/reduce_layout.h"

#include <algorithm>

namespace onnx_light {

StatusOr<ReduceLayout> MakeReduceLayout(const Shape& shape, const std::vector<int>& axes, bool keepdims,
                                        const std::string& where) {
  ReduceLayout layout;
  const int rank = shape.rank();
  std::vector<bool> is_reduced(rank, false);
  for (int a : axes) is_reduced[a] = true;

  std::vector<int64_t> out_dims;
  layout.num_outputs = 1;
  layout.reduce_count = 1;
  for (int d = 0; d < rank; ++d) {
    if (is_reduced[d]) {
      layout.reduce_count *= shape[d];
      if (keepdims) out_dims.push_back(1);
    } else {
      layout.num_outputs *= shape[d];
      out_dims.push_back(shape[d]);
    }
  }
  layout.output_shape = Shape(out_dims);
  if (layout.num_outputs == 0 || layout.reduce_count == 0) return layout;  // nothing to walk

  // Merge dimensions of size > 1 into alternating groups (size-1 dims change no offset).
  struct Group {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Group> groups;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1) {
      if (!groups.empty() && groups.back().reduced == is_reduced[d]) {
        groups.back().size *= shape[d];
      } else {
        groups.push_back({shape[d], stride, is_reduced[d]});
      }
    }
    stride *= shape[d];
  }
  std::reverse(groups.begin(), groups.end());
  if (groups.empty()) groups.push_back({1, 1, true});  // a single element

  const Group& innermost = groups.back();
  layout.inner_reduced = innermost.reduced;
  layout.inner = innermost.size;
  bool fits = true;
  for (size_t g = 0; g + 1 < groups.size(); ++g) {
    // Innermost reduced: outer reduced groups go to `reduced`; innermost kept: outer kept
    // groups go to `outputs`. Either way every other group is walked below.
    StridedWalk& walk = groups[g].reduced ? layout.reduced : layout.outputs;
    fits = fits && walk.Add(groups[g].size, groups[g].stride);
  }
  layout.single_run = layout.inner_reduced && groups.size() <= 2;
  if (!fits) {
    return NotImplemented(where, ": input shape ", shape.ToString(), " has more than ", StridedWalk::kMaxDims,
                          " alternating kept/reduced dimension groups");
  }
  return layout;
}

}  // namespace onnx_light
