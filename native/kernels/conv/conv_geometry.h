// Shapes of a convolution (Conv, ConvTranspose, ConvInteger, QLinearConv): attributes
// read once at Init, resolved against the input and weight shapes at each run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct ConvAttributes {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> dilations, kernel_shape, pads, strides;  // empty: defaults
  int64_t group = 1;
  // ConvTranspose only.
  std::vector<int64_t> output_padding, output_shape;

  // Reads and validates (Validate) the attributes: at kernel creation, so at session
  // creation for every node whose types are known.
  static StatusOr<ConvAttributes> Read(const KernelInfo& info);
  // Ranges that need no input shape: strides, dilations, kernel_shape >= 1, pads >= 0,
  // group >= 1, 0 <= output_padding < max(stride, dilation); InvalidArgument naming the value.
  Status Validate(const std::string& where) const;
};

// A resolved convolution. For Conv, "input" is X and "output" is Y; ConvTranspose is
// described the same way from Y's side, so that both share im2col/col2im: its
// `image_*` is Y (the col2im target) and `col_spatial` is X's spatial shape.
struct ConvGeometry {
  int rank = 0;  // spatial rank
  int64_t batch = 0, group = 1;
  int64_t in_channels = 0, out_channels = 0;  // of X and Y
  std::vector<int64_t> in_spatial, out_spatial, kernel, strides, dilations, pads_begin, pads_end;
  int64_t in_size = 0, out_size = 0, kernel_size = 0;  // products of the spatial dims
  int64_t in_per_group() const { return in_channels / group; }
  int64_t out_per_group() const { return out_channels / group; }
  Shape output_shape() const;
};

// Conv: X (N, C, spatial...), W (M, C / group, kernel...).
StatusOr<ConvGeometry> ResolveConv(const ConvAttributes& attrs, const Shape& x, const Shape& w,
                                   const std::string& where);
// ConvTranspose: X (N, C, spatial...), W (C, M / group, kernel...).
StatusOr<ConvGeometry> ResolveConvTranspose(const ConvAttributes& attrs, const Shape& x, const Shape& w,
                                            const std::string& where);

}  // namespace conv
}  // namespace onnx_light
