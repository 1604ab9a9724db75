// fp32 convolution engines shared by Conv, ConvTranspose and the quantized convolutions.
#pragma once

#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

// Y = conv(X, W) + bias (bias may be null). Depthwise-style convolutions (one input channel
// per group) run a direct loop parallel over output planes; the rest run one GEMM per
// (image, group, tile of output positions) with im2col generated straight into the GEMM's
// packed panels, parallel over those tiles with per-participant packing scratch.
Status ConvForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   float* y, const gemm::GemmTuning& tuning);

// ConvTranspose: per (image, group, block of output channels) a GEMM W^T X into a bounded
// column buffer, then col2im into those channels only (disjoint outputs per task).
Status ConvTransposeForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                            const float* bias, float* y, const gemm::GemmTuning& tuning);

}  // namespace conv
}  // namespace onnx_light
