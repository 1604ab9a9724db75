// vector_math on 4 lanes (AArch64 Advanced SIMD, which every AArch64 CPU has).
#include "native/kernels/elementwise/vector_math.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/elementwise/vector_math_spans.h"
#include "native/kernels/simd/lanes_neon.h"

namespace onnx_light {
namespace elementwise {
namespace vector_math {

const SpanKernels& NeonKernels() {
  static const SpanKernels kernels = MakeSpanKernels<simd::Lanes4>("neon");
  return kernels;
}

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light

#endif  // __aarch64__
