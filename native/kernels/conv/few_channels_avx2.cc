// The few-input-channel row kernel and staging copy (few_channels_simd.inc) on AVX2's 8
// lanes: 4 output channels x 3 vectors of 8 columns, 12 of the 16 ymm registers
// accumulating, 3 holding the input vectors and one the broadcast weight (per tap 3 loads
// and 4 broadcasts feed 12 FMAs). Compiled by isa_library(isa = "avx2"); reached only through FewChannelsVariants().
#include "native/kernels/conv/few_channels_rows.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/kernels/simd/lanes_avx2.h"

namespace onnx_light {
namespace conv {
namespace {

#include "native/kernels/conv/few_channels_simd.inc"

}  // namespace

void FewChannelsRowAvx2(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                        float* const* y, int64_t width) {
  FewChannelsRow<simd::Lanes8, 4, 3>(taps, offsets, src, w, channels, y, width);
}

void FewChannelsStageAvx2(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out) {
  FewChannelsStageRow(in, in_w, pad, stride, length, out);
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
void FewChannelsRowAvx2(int64_t, const int64_t*, const float*, const float*, int, float* const*, int64_t) {}
void FewChannelsStageAvx2(const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
}  // namespace conv
}  // namespace onnx_light
#endif
