// AVX-512BW integer microkernel: 12 x 32 tile and its edge tiles, vpmaddwd + vpaddd on
// 16-bit pairs (exact).
// Compiled by isa_library(isa = "avx512") with -ffp-contract=off.
#include "native/kernels/quantized/igemm/igemm_kernel.h"
#include "native/kernels/quantized/igemm/zero_point_terms.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <utility>

#if !defined(__AVX512BW__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace igemm {
namespace {

#define OL_IGEMM_MADD(acc, a, b) _mm512_add_epi32((acc), _mm512_madd_epi16((a), (b)))
#define OL_IGEMM_MADD256(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "native/kernels/quantized/igemm/microkernel_avx512.inc"
#undef OL_IGEMM_MADD256
#undef OL_IGEMM_MADD

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512).
extern const IgemmKernel kIgemmAvx512Kernel = {
    "avx512", kMr, kNr, Tile, Requantize, nullptr, EdgeTile<PairFormat>, nullptr, nullptr, AddZeroPointTerms};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
