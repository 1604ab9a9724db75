#include "native/kernels/quantization/quant_layout.h"

namespace onnx_light {
namespace quantization {

StatusOr<QuantLayout> PlanQuantLayout(const Shape& input, const Tensor& scale, const Tensor* zero_point, int64_t axis,
                                      int64_t block_size, const std::string& where) {
  // One-element parameters of different ranks ([] and [1]) both mean per tensor.
  const bool both_single = zero_point != nullptr && zero_point->num_elements() == 1 && scale.num_elements() == 1;
  if (zero_point != nullptr && zero_point->shape() != scale.shape() && !both_single) {
    return InvalidArgument(where, ": zero point ", zero_point->TypeAndShape(), " must have the shape of scale ",
                           scale.TypeAndShape());
  }
  QuantLayout l;
  if (scale.num_elements() == 1) return l;  // per tensor, whatever the scale's rank
  const int rank = input.rank();
  if (axis < -rank || axis >= rank) {
    return InvalidArgument(where, ": axis ", axis, " is out of range for input shape ", input.ToString());
  }
  const int ax = static_cast<int>(axis < 0 ? axis + rank : axis);
  l.axis_dim = input[ax];
  l.inner = input.SizeFrom(ax + 1);
  const int64_t outer = input.SizeTo(ax);
  if (l.axis_dim == 0 || l.inner == 0 || outer == 0) return l;  // empty input: nothing is read
  if (block_size <= 0) {
    if (scale.shape().rank() != 1 || scale.shape()[0] != l.axis_dim) {
      return InvalidArgument(where, ": per-axis scale ", scale.TypeAndShape(), " must be 1-D of length ", l.axis_dim,
                             " (input ", input.ToString(), ", axis ", axis, ")");
    }
    l.axis_stride = 1;
    l.num_params = l.axis_dim;
    return l;
  }
  const int64_t blocks = (l.axis_dim + block_size - 1) / block_size;
  bool matches = scale.shape().rank() == rank;
  for (int d = 0; matches && d < rank; ++d) matches = scale.shape()[d] == (d == ax ? blocks : input[d]);
  if (!matches) {
    return InvalidArgument(where, ": blocked scale ", scale.TypeAndShape(), " does not fit input ", input.ToString(),
                           " with axis ", axis, " and block_size ", block_size, " (dimension ", ax, " must be ", blocks,
                           ", the others the input's)");
  }
  l.block = block_size;
  l.inner_stride = 1;
  l.axis_stride = l.inner;
  l.outer_stride = blocks * l.inner;
  l.num_params = scale.num_elements();
  return l;
}

}  // namespace quantization
}  // namespace onnx_light
