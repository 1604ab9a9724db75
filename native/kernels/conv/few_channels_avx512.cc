// The few-input-channel row kernel and staging copy (few_channels_simd.inc) on AVX-512's
// 16 lanes: 8 output channels x 3 vectors of 16 columns, 24 of the 32 zmm registers
// accumulating (per tap 3 input loads and 8 broadcasts feed 24 FMAs). Compiled by isa_library(isa = "avx512");
// reached only through FewChannelsVariants().
#include "native/kernels/conv/few_channels_rows.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include "native/kernels/simd/lanes_avx512.h"

namespace onnx_light {
namespace conv {
namespace {

#include "native/kernels/conv/few_channels_simd.inc"

}  // namespace

void FewChannelsRowAvx512(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                          float* const* y, int64_t width) {
  FewChannelsRow<simd::Lanes16, 8, 3>(taps, offsets, src, w, channels, y, width);
}

void FewChannelsStageAvx512(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out) {
  FewChannelsStageRow(in, in_w, pad, stride, length, out);
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
void FewChannelsRowAvx512(int64_t, const int64_t*, const float*, const float*, int, float* const*, int64_t) {}
void FewChannelsStageAvx512(const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
}  // namespace conv
}  // namespace onnx_light
#endif
