// Direct convolution for few input channels per group (the stems of CNNs: 3 -> 16/32 3x3
// stride 2 in MobileNetV3 and EfficientNet, 3 -> 64 7x7 stride 2 in ResNet). There
// K = channels x kernel area is 27 or 147: the GEMM paths spend as long packing (im2col
// columns of K floats per output position, or padded weight panels) and transposing as
// multiplying. This path multiplies straight from the input, output row by output row.
//
// Layout: output positions across vector lanes, a block of output channels across
// registers. For one output row, a register tile holds `channels` output channels x
// `vectors` vectors of consecutive output columns; per tap (input channel, kh, kw) it loads
// `vectors` input vectors once and broadcasts each channel's weight, so one load feeds
// `channels` fused multiply-adds (AVX-512: 8 channels x 3 vectors of 16 columns, 24
// accumulators, 11 loads per 24 FMAs). Results are rows of Y (NCHW) as they are: plain
// stores, no transpose (output channels across lanes, the implicit GEMM's layout, needs an
// in-register transpose per tile, and a stem's 16 or 32 channels fill only one or two
// vectors: one broadcast input per one or two FMAs). Stride 2 is why the input is staged:
// a task copies the rows its output strip reads into scratch, each padded row split into
// its column phases (stride_w phase rows: even columns, odd columns), zero where the
// convolution pads, so that every tap of every output row reads consecutive floats (one
// plain load per vector, no gathers or shuffles in the inner loop; the copy's loops are
// compiled with each variant's ISA flags, so stride 2 splits a row with vector permutes).
// The copy touches each input element about once per strip (a strip of 8 output rows at
// stride 2 stages 17 input rows); the multiply-adds reuse each staged element
// kernel_h x kernel_w / stride^2 x out_channels times.
//
// Per output: from 0, one fused multiply-add per tap in (input channel, kh, kw) order
// (taps in the padding add w x 0), then FinishRows (gemm/epilogue.h): + bias, then the
// FusedConv epilogue (residual, activation) on each strip of a channel block while it is
// in cache. The portable variant multiplies and adds in two roundings where the compiler
// does not contract them (x86-64's baseline); a result does not depend on the participant
// count or on which task staged its rows.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/conv/few_channels_rows.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

struct FewChannelsKernel {
  int channels = 0;  // output channels per call (the register tile's rows)
  int lanes = 0;     // floats per vector
  FewChannelsRowFn row = nullptr;
  FewChannelsStageFn stage = nullptr;  // the staging copy, vectorised alike
};
inline constexpr int kFewChannelsMaxBlock = 8;  // the largest `channels`

// The variants, best first, portable last: "avx512" (8 channels x 3 vectors of 16 columns),
// "avx2" (4 x 3 of 8: 12 of the 16 ymm registers accumulate), "neon" (8 x 3 of 4, 32
// registers as AVX-512) and "portable" (4 channels x 4 columns in scalars). One algorithm
// (few_channels_simd.inc) over simd/math.h's lane types; the tests compare every variant
// with FewChannelsRowFn's contract (few_channels_rows.h).
const std::vector<IsaVariant<FewChannelsKernel>>& FewChannelsVariants();

// The rule (stated once, on W's shape only, so that weights packed at kernel creation
// match the path a run takes): a 2-D convolution with at most kFewChannelsMaxInputs input
// channels per group, at least kFewChannelsMinOutputs output channels per group, and a
// kernel of 2 to kFewChannelsMaxKernelArea taps. Fewer output channels leave most of a
// register tile's rows empty (depthwise convolutions, with one, keep their plane kernels);
// more input channels or a larger kernel (a ViT's 16x16 patches) make K long enough for the
// GEMM paths' packing to pay; 1x1 kernels read X as the GEMM's B without packing.
// Not a tuning parameter: the paths sum in different orders, and a tuning value may move
// only where regions open, never a result.
inline constexpr int64_t kFewChannelsMaxInputs = 4, kFewChannelsMinOutputs = 4, kFewChannelsMaxKernelArea = 49;
bool FewChannelsApplies(int rank, int64_t out_per_group, int64_t in_per_group, int64_t kernel_size);

// Y = conv(X, W) + bias with FewChannelsVariants()'s best enabled kernel. Tasks are
// (image, group, strip of kFewChannelsStripRows output rows, block of kernel.channels
// output channels), blocks innermost, parallel through ParallelFor from Conv's
// parallel.minimum_tasks on (work units of gemm::GemmWorkUnits per image, as the implicit
// GEMM counts them); a participant stages a strip's input rows once for its consecutive
// blocks. W is packed per run (taps x channels per block: 9 KB for ResNet's stem), so a
// constant W is not absorbed at kernel creation (PackedConvWeights leaves it unpacked).
inline constexpr int64_t kFewChannelsStripRows = 8;
Status FewChannelsConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y, const gemm::GemmTuning& tuning, const gemm::Epilogue& epilogue = {});

}  // namespace conv
}  // namespace onnx_light
