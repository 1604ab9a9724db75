// The few-input-channel row kernel and staging copy (few_channels_simd.inc) on AArch64
// Advanced SIMD's 4 lanes: 8 output channels x 3 vectors of 4 columns (32 registers, as
// AVX-512: 24 accumulators). Compiled by isa_library(isa = "neon"); reached only through
// FewChannelsVariants().
#include "native/kernels/conv/few_channels_rows.h"

#include <algorithm>

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/simd/lanes_neon.h"

namespace onnx_light {
namespace conv {
namespace {

#include "native/kernels/conv/few_channels_simd.inc"

}  // namespace

void FewChannelsRowNeon(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                        float* const* y, int64_t width) {
  FewChannelsRow<simd::Lanes4, 8, 3>(taps, offsets, src, w, channels, y, width);
}

void FewChannelsStageNeon(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out) {
  FewChannelsStageRow(in, in_w, pad, stride, length, out);
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
void FewChannelsRowNeon(int64_t, const int64_t*, const float*, const float*, int, float* const*, int64_t) {}
void FewChannelsStageNeon(const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
}  // namespace conv
}  // namespace onnx_light
#endif
