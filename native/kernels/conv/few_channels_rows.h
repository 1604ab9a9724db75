// The row kernels of the few-input-channel convolution (few_channels.h): their contract
// and the per-ISA functions (few_channels_<isa>.cc, isa_library targets, null-bodied off
// their architecture; reach them only through FewChannelsVariants() after IsaEnabled).
#pragma once

#include <cstdint>

namespace onnx_light {
namespace conv {

// One output row of a channel block. For m < channels (<= the kernel's channels) and
// j < width:
//   y[m][j] = sum over t < taps, in t order, of w[t * kernel_channels + m] * src[offsets[t] + j]
// from 0, one fused multiply-add per tap (the portable variant: multiply, add). Reads
// src[offsets[t] + j] for j < RoundUp(width, lanes) (the caller pads its rows so far);
// writes y[m][0, width) only; y[m] for m >= channels is not read.
using FewChannelsRowFn = void (*)(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                                  float* const* y, int64_t width);
// One padded input row of the staging (few_channels.h): `stride` phase rows of `length`
// floats each, out[p * length + i] = in[i * stride + p - pad] where that column lies in
// [0, in_w), else 0 (all 0 when `in` is null: a row of the padding).
using FewChannelsStageFn = void (*)(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length,
                                    float* out);
// The per-ISA functions (few_channels_<isa>.cc; null-bodied off their architecture):
// reach them only through FewChannelsVariants() after IsaEnabled.
void FewChannelsStageAvx512(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out);
void FewChannelsRowAvx512(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                          float* const* y, int64_t width);
void FewChannelsStageAvx2(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out);
void FewChannelsRowAvx2(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                        float* const* y, int64_t width);
void FewChannelsStageNeon(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out);
void FewChannelsRowNeon(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                        float* const* y, int64_t width);

}  // namespace conv
}  // namespace onnx_light
