// AVX-512BW integer microkernel: 12 x 32 tile, vpmaddwd + vpaddd on 16-bit pairs (exact).
// Compiled by isa_library(isa = "avx512") with -ffp-contract=off.
#include "native/kernels/quantized/igemm/igemm_kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512BW__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace igemm {
namespace {

#define OL_IGEMM_MADD(acc, a, b) _mm512_add_epi32((acc), _mm512_madd_epi16((a), (b)))
#include "native/kernels/quantized/igemm/microkernel_avx512.inc"
#undef OL_IGEMM_MADD

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512).
extern const IgemmKernel kIgemmAvx512Kernel = {"avx512", kMr, kNr, Tile, Requantize, nullptr};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
