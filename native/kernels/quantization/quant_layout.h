// How QuantizeLinear / DequantizeLinear map each element to its scale and zero point:
// per tensor (scalar scale), per axis (1-D scale along `axis`) or blocked (scale shaped
// like the input with dimension `axis` divided into blocks of `block_size`).
#pragma once

#include <cstdint>
#include <string>

#include "native/core/shape.h"
#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {
namespace quantization {

// The input viewed as [outer, axis_dim, inner]; the parameter of element (o, a, i) is
// o * outer_stride + (a / block) * axis_stride + i * inner_stride.
struct QuantLayout {
  int64_t axis_dim = 1;
  int64_t inner = 1;
  int64_t block = 1;
  int64_t outer_stride = 0;
  int64_t axis_stride = 0;
  int64_t inner_stride = 0;  // 0 or 1
  int64_t num_params = 1;
};

// Validates scale (and zero point, when given: same shape) against the input and the
// attributes; errors name `where` and the offending shapes.
StatusOr<QuantLayout> PlanQuantLayout(const Shape& input, const Tensor& scale, const Tensor* zero_point, int64_t axis,
                                      int64_t block_size, const std::string& where);

// Calls fn(at, param, param_stride, n) for consecutive runs of elements [begin, end) that
// share (outer, axis) coordinates (all of them per tensor): element at + k uses parameter
// param + k * param_stride.
template <typename Fn>
void ForEachParamRun(const QuantLayout& l, int64_t begin, int64_t end, Fn&& fn) {
  if (l.num_params == 1) {  // per tensor: one run (the loop below would make runs of 1)
    if (begin < end) fn(begin, int64_t{0}, int64_t{0}, end - begin);
    return;
  }
  int64_t inner_pos = begin % l.inner;
  int64_t row = begin / l.inner;  // = outer * axis_dim + axis position
  while (begin < end) {
    const int64_t n = std::min(end - begin, l.inner - inner_pos);
    const int64_t outer = row / l.axis_dim, a = row % l.axis_dim;
    fn(begin, outer * l.outer_stride + (a / l.block) * l.axis_stride + inner_pos * l.inner_stride, l.inner_stride, n);
    begin += n;
    inner_pos = 0;
    ++row;
  }
}

}  // namespace quantization
}  // namespace onnx_light
