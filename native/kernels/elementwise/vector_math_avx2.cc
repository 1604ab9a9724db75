// vector_math on 8 lanes (AVX2 + FMA), compiled by isa_library(isa = "avx2"). Called only
// after Avx2() has checked the CPU.
#include "native/kernels/elementwise/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include <cstdint>
#include <cstring>

#include "native/kernels/elementwise/vector_math_spans.h"
#include "native/kernels/simd/lanes_avx2.h"

namespace onnx_light {
namespace elementwise {
namespace vector_math {

const SpanKernels& Avx2Kernels() {
  static const SpanKernels kernels = MakeSpanKernels<simd::Lanes8>("avx2");
  return kernels;
}

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light

#endif  // __x86_64__
