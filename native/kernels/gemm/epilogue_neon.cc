// The epilogue's Sigmoid/Tanh spans on the neon lane type (Lanes4), compiled by
// isa_library(isa = "neon"); reached only through EpilogueSpanVariants().
#include "native/kernels/gemm/epilogue.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/gemm/epilogue_spans.h"
#include "native/kernels/simd/lanes_neon.h"

namespace onnx_light {
namespace gemm {

EpilogueSpans EpilogueSpansNeon() { return MakeEpilogueSpans<simd::Lanes4>(); }

}  // namespace gemm
}  // namespace onnx_light

#endif  // __aarch64__
