// A convolution geometry padded to three spatial axes (leading unit axes), so that 1-D,
// 2-D and 3-D convolutions share one set of loops.
#pragma once

#include <cstdint>

#include "native/kernels/conv/conv_geometry.h"

namespace onnx_light {
namespace conv {

struct Geometry3d {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
  int64_t in_size, out_size, kernel_size;

  explicit Geometry3d(const ConvGeometry& g) {
    const int lead = 3 - g.rank;
    for (int i = 0; i < 3; ++i) {
      const bool unit = i < lead;
      in[i] = unit ? 1 : g.in_spatial[i - lead];
      out[i] = unit ? 1 : g.out_spatial[i - lead];
      kernel[i] = unit ? 1 : g.kernel[i - lead];
      stride[i] = unit ? 1 : g.strides[i - lead];
      dilation[i] = unit ? 1 : g.dilations[i - lead];
      pad[i] = unit ? 0 : g.pads_begin[i - lead];
    }
    in_size = in[0] * in[1] * in[2];
    out_size = out[0] * out[1] * out[2];
    kernel_size = kernel[0] * kernel[1] * kernel[2];
  }
};

}  // namespace conv
}  // namespace onnx_light
