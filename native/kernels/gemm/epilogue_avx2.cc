// The epilogue's Sigmoid/Tanh spans on the avx2 lane type (Lanes8), compiled by
// isa_library(isa = "avx2"); reached only through EpilogueSpanVariants().
#include "native/kernels/gemm/epilogue.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/kernels/gemm/epilogue_spans.h"
#include "native/kernels/simd/lanes_avx2.h"

namespace onnx_light {
namespace gemm {

EpilogueSpans EpilogueSpansAvx2() { return MakeEpilogueSpans<simd::Lanes8>(); }

}  // namespace gemm
}  // namespace onnx_light

#endif  // __x86_64__
