// AVX-512 VNNI integer microkernel: the AVX-512 12 x 32 tile with vpdpwssd (16-bit pair
// products summed into int32, wrapping, one instruction). Compiled by
// isa_library(isa = "avx512") plus -mavx512vnni; reached only when the CPU has VNNI.
#include "native/kernels/quantized/igemm/igemm_kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512BW__) || !defined(__AVX512VNNI__)
#error "build with isa_library(isa = \"avx512\") and -mavx512vnni"
#endif

namespace onnx_light {
namespace igemm {
namespace {

#define OL_IGEMM_MADD(acc, a, b) _mm512_dpwssd_epi32((acc), (a), (b))
#include "native/kernels/quantized/igemm/microkernel_avx512.inc"
#undef OL_IGEMM_MADD

}  // namespace

// Constant-initialized: igemm.cc hands it out only when IsaEnabled(Isa::kAvx512) and the
// CPU has AVX512-VNNI.
extern const IgemmKernel kIgemmAvx512VnniKernel = {"avx512_vnni", kMr, kNr, Tile, Requantize};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __x86_64__
