// The epilogue's Sigmoid/Tanh spans on the avx512 lane type (Lanes16), compiled by
// isa_library(isa = "avx512"); reached only through EpilogueSpanVariants().
#include "native/kernels/gemm/epilogue.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include "native/kernels/gemm/epilogue_spans.h"
#include "native/kernels/simd/lanes_avx512.h"

namespace onnx_light {
namespace gemm {

EpilogueSpans EpilogueSpansAvx512() { return MakeEpilogueSpans<simd::Lanes16>(); }

}  // namespace gemm
}  // namespace onnx_light

#endif  // __x86_64__
