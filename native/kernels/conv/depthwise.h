// Depthwise (one input channel per output channel) convolution of one output plane: every
// output element is act(bias + the sum over its taps inside the input in one fixed order
// (kd, kh, kw)). 2-D planes with stride 1 or 2 take a SIMD kernel chosen at run time
// (AVX-512, AVX2); square 3x3 and 5x5 kernels also have the portable variant's row strips
// over 4-lane GCC vectors (SSE2 on x86-64, Advanced SIMD on aarch64); the rest a portable
// loop (interior columns without bounds checks). Where measured faster (AVX2 stride 2 on
// rows of 3 or more vectors of outputs; the portable strips always) the strips read padded
// input rows (depthwise_plane_simd.inc: each row copied once per plane, zero-padded, split
// into even and odd columns on stride 2) so that every tap is one plain load.
// The activation (FusedConv's, gemm/epilogue.h) runs inside the plane kernel on SIMD
// vectors: the 3x3/5x5 row strips put each strip's rows (4 x out_w outputs, just stored,
// in L1) through it, one activation's loop with its constants in registers; the general
// loop, whose column vectors run outer, its finished plane. (Applying it to each
// accumulator before the store was measured too, with callgrind at AVX2 on 3x3 stride 1
// 32x112x112 + Swish: 50.7M instructions per 11 runs against 41.2M for the strip rows and
// 53.8M for the former epilogue pass; with 9 weights and 4 accumulators live, Sigmoid's
// constants do not stay in the 16 ymm registers.)
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/conv/geometry3d.h"

namespace onnx_light {
namespace conv {

// The activations a plane applies to its outputs, each in the arithmetic order of its
// ONNX kernel (as gemm/epilogue.h's: Relu max(x, 0) NaN kept; Clip(alpha = min, beta = max);
// Sigmoid and Swish(alpha) x sigmoid(alpha x) through simd/math.h's Sigmoid on the plane's
// lanes; HardSwish x clamp(x / 6 + 1/2, 0, 1)), so that a fused plane gives the bits of the
// plane followed by the separate activation kernel on the same ISA. The others
// (LeakyRelu, Tanh, HardSigmoid) and residuals stay in the caller's epilogue pass.
enum class PlaneActivationKind { kNone, kRelu, kClip, kSigmoid, kHardSwish, kSwish };
struct PlaneActivation {
  PlaneActivationKind kind = PlaneActivationKind::kNone;
  float alpha = 0.0f, beta = 0.0f;
};

// y (out plane) = act(bias + conv(x (one input plane), w (one kernel))).
using DepthwisePlaneFn = void (*)(const Geometry3d& g, const float* x, const float* w, float bias,
                                  const PlaneActivation& act, float* y);

// The plane function for g on this CPU: chosen once per convolution, called per plane.
DepthwisePlaneFn SelectDepthwisePlane(const Geometry3d& g);
// The portable loop (the portable variant's plane for all but square 3x3 / 5x5 kernels,
// and the tests' reference): applies `act` after the plane through gemm::Epilogue (the
// epilogue's values on this CPU, its widest enabled lanes). The portable variant's strips
// give its bits (the same products and sums in the same order) and apply `act` the same way.
void DepthwisePlanePortable(const Geometry3d& g, const float* x, const float* w, float bias, const PlaneActivation& act,
                            float* y);

// Per-ISA selectors: null on other architectures, or when g is not a shape they take
// (2-D, stride 1 or 2, kernel_w <= kMaxVectorKernelW). Call one only when IsaEnabled(its
// ISA); the functions they return run that ISA's instructions.
inline constexpr int64_t kMaxVectorKernelW = 16;
// A width's kPaddedMinVectors entry for "never" (depthwise_plane_simd.inc's padded rows).
inline constexpr int64_t kPaddedRowsNever = int64_t{1} << 40;
DepthwisePlaneFn SelectDepthwisePlaneAvx512(const Geometry3d& g);
DepthwisePlaneFn SelectDepthwisePlaneAvx2(const Geometry3d& g);

// The selectors, best first, the portable one (always DepthwisePlanePortable) last.
// SelectDepthwisePlane takes the first enabled one that returns a function.
using DepthwiseSelectFn = DepthwisePlaneFn (*)(const Geometry3d& g);
const std::vector<IsaVariant<DepthwiseSelectFn>>& DepthwisePlaneVariants();

// Channel-blocked depthwise (depthwise_channels_simd.inc): `channels` (<= the variant's
// lanes) consecutive output channels of one image at once, one per vector lane, for planes
// too narrow for the plane kernels. x: the channels' input planes (a pointer each: with a
// channel multiplier several read one plane); w: their kernels, kernel_size apart; bias:
// their biases or null; y: their output planes, out_size apart; scratch:
// DepthwiseChannelsScratch floats. Per output the same sums in the same order as the SIMD
// plane kernels (from 0, one fused multiply-add per tap inside the input in (kh, kw) order,
// then + bias; a tap in the padding adds w x 0), then `act` as the plane kernels apply it,
// so the bits do not depend on the path.
using DepthwiseChannelsFn = void (*)(const Geometry3d& g, const float* const* x, const float* w, const float* bias,
                                     int channels, const PlaneActivation& act, float* y, float* scratch);
struct DepthwiseChannels {
  int lanes = 0;  // channels per call
  DepthwiseChannelsFn fn = nullptr;
  // The widest output rows (columns) with which square 3x3 and 5x5 kernels (dilation 1,
  // equal strides 1 or 2) take the blocks, [kernel 3, 5][stride 1, 2] (DepthwiseChannelsTake).
  int64_t square_max_cols[2][2] = {};
};
// The variants, best first: "avx512" (16 channels), "avx2" (8). No portable one: without
// them every depthwise convolution takes the plane kernels.
const std::vector<IsaVariant<DepthwiseChannels>>& DepthwiseChannelsVariants();
// Whether a variant takes g (the rule, stated once), in a convolution with at least
// `lanes` output channels (so that the channel blocks are mostly full), 2-D (or 1-D):
//  - output rows that fill at most half of the variant's vector (2 x out_w <= lanes): there
//    the plane kernels spend at least twice the FMAs the channel blocks do (one vector per
//    row and tap, half of it or more empty), which pays for the blocks' interleaving
//    (register transposes, depthwise_channels_simd.inc);
//  - square 3x3 and 5x5 kernels (dilation 1, equal strides 1 or 2) with output rows of up
//    to the variant's square_max_cols[kernel][stride] columns: there the plane kernels'
//    partly empty vectors, masked edge loads (every vector is an edge vector at 14 or 28
//    columns), stride-2 shuffles per tap and per-strip activation calls of a few vectors
//    cost more than the transposes. Measured (depthwise_profile, alternating processes, 5
//    rounds, medians of 200 convolutions in us, load 1.9-2.6, planes -> blocks):
//      AVX-512: 5x5/1 240@14 37.5 -> 27, 672@14 + Swish 166 -> 104, 240@28 + Swish 192 ->
//      137; 5x5/2 96@28 + HardSwish 31 -> 21.5, 144@56 151 -> 119; 3x3/2 240@28 + Swish
//      55 -> 41, but rows of 28: 144@56 +7%, 72@56 + Relu +16%; 3x3/1 576@14 43 -> 45.5,
//      192@28 42 -> 57 (the planes' 3x3 strips are the better there): 3x3 {8, 16}, 5x5
//      {32, 32};
//      AVX2: 5x5/1 240@14 53 -> 33.5; 5x5/2 96@28 + HardSwish 38 -> 22.6; 3x3/1 576@14
//      55 -> 41; 3x3/2 240@28 + Swish 68.5 -> 57.5: {16, 16} for both (two vectors).
// MobileNetV3's and EfficientNet's 7x7 planes take it on both; their 14x14 and 28x28 5x5
// planes and 14x14 3x3 stride-2 ones on AVX-512, and on AVX2 every 3x3 / 5x5 plane up to
// 16 columns.
bool DepthwiseChannelsTake(const Geometry3d& g, int64_t out_channels, const DepthwiseChannels& variant);
// The first enabled variant that takes g, else {0, null} (then the plane kernels run).
DepthwiseChannels SelectDepthwiseChannels(const Geometry3d& g, int64_t out_channels);
// Scratch floats of one call of a `lanes`-channel variant on g.
int64_t DepthwiseChannelsScratch(const Geometry3d& g, int lanes);
// The per-ISA functions (null-bodied off x86-64); call one only when IsaEnabled(its ISA).
void DepthwiseChannelsAvx512(const Geometry3d& g, const float* const* x, const float* w, const float* bias,
                             int channels, const PlaneActivation& act, float* y, float* scratch);
void DepthwiseChannelsAvx2(const Geometry3d& g, const float* const* x, const float* w, const float* bias, int channels,
                           const PlaneActivation& act, float* y, float* scratch);

}  // namespace conv
}  // namespace onnx_light
