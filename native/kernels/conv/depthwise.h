// Depthwise (one input channel per output channel) convolution of one output plane: every
// output element is bias + the sum over its taps inside the input in one fixed order
// (kd, kh, kw). 2-D planes with stride 1 or 2 take a SIMD kernel chosen at run time
// (AVX-512, AVX2); the rest a portable loop (interior columns without bounds checks).
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/conv/geometry3d.h"

namespace onnx_light {
namespace conv {

// y (out plane) = bias + conv(x (one input plane), w (one kernel)).
using DepthwisePlaneFn = void (*)(const Geometry3d& g, const float* x, const float* w, float bias, float* y);

// The plane function for g on this CPU: chosen once per convolution, called per plane.
DepthwisePlaneFn SelectDepthwisePlane(const Geometry3d& g);
void DepthwisePlanePortable(const Geometry3d& g, const float* x, const float* w, float bias, float* y);

// Per-ISA selectors: null on other architectures, or when g is not a shape they take
// (2-D, stride 1 or 2, kernel_w <= kMaxVectorKernelW). Call one only when IsaEnabled(its
// ISA); the functions they return run that ISA's instructions.
inline constexpr int64_t kMaxVectorKernelW = 16;
DepthwisePlaneFn SelectDepthwisePlaneAvx512(const Geometry3d& g);
DepthwisePlaneFn SelectDepthwisePlaneAvx2(const Geometry3d& g);

// The selectors, best first, the portable one (always DepthwisePlanePortable) last.
// SelectDepthwisePlane takes the first enabled one that returns a function.
using DepthwiseSelectFn = DepthwisePlaneFn (*)(const Geometry3d& g);
const std::vector<IsaVariant<DepthwiseSelectFn>>& DepthwisePlaneVariants();

}  // namespace conv
}  // namespace onnx_light
