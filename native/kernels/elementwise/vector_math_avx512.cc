// vector_math on 16 lanes (AVX-512F), compiled by isa_library(isa = "avx512"). Called only
// after Avx512() has checked the CPU.
#include "native/kernels/elementwise/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include <cstdint>
#include <cstring>

#include "native/kernels/elementwise/vector_math_spans.h"
#include "native/kernels/simd/lanes_avx512.h"

namespace onnx_light {
namespace elementwise {
namespace vector_math {

const SpanKernels& Avx512Kernels() {
  static const SpanKernels kernels = MakeSpanKernels<simd::Lanes16>("avx512");
  return kernels;
}

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light

#endif  // __x86_64__
