// fp32 convolution engines shared by Conv, ConvTranspose and the quantized convolutions.
#pragma once

#include <functional>
#include <vector>

#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

// The portable defaults of Conv's and FusedConv's parallel thresholds, set here and nowhere
// else (the schema and ConvTuning read them). A convolution below its minimum runs on the
// calling thread, at or above it splits over the participants:
// - kConvMinimumTasks: GEMM-path convolutions (implicit GEMM, im2col + GEMM, 1x1), in
//   parallel.minimum_tasks units of 64^3 multiply-adds (gemm::GemmWorkUnits of
//   batch x out_channels, out_size, in_channels/group x kernel_size); Conv's own default,
//   no longer the Gemm op's (Gemm keeps 16).
// - kConvDepthwiseMinimumMultiplyAdds: depthwise-style convolutions (one input channel per
//   group), in multiply-adds (planes x out_size x kernel_size).
// Moving a value changes only when a region opens, never a result (every path is
// bit-identical across participant counts). //benchmarks:cnn_thresholds times candidate
// values on whole models, interleaved, to choose them: at 4 and 2^18 (were 16 and 2^20)
// MobileNetV3-small ran 0.75x the old defaults' time at 2 threads (95% interval 0.71-0.83)
// and EfficientNet-B0 0.88x (0.84-1.00), session 8, benchmarks/reports/session8/.
inline constexpr int64_t kConvMinimumTasks = 4;
inline constexpr int64_t kConvDepthwiseMinimumMultiplyAdds = int64_t{1} << 18;
// The implicit GEMM's K blocking (ImplicitGemmConv's chunk_panel_bytes): a convolution
// whose weight panel (K x the tile's columns x 4 bytes) is larger runs K in equal chunks of
// at most this many bytes of panel. 576 KiB = 3x3 over 256 channels at 64 columns, within
// Zen 4's 1 MB L2: on AVX-512 ResNet-50's 3x3 over 512 channels (K = 4608, 1.18 MB at 64
// columns) runs two chunks; AVX2's 32-column tiles reach it only at K > 4608. Moving it
// changes no result (the chunks continue each sum in k order).
inline constexpr int64_t kConvImplicitChunkPanelBytes = 2304 * 64 * 4;
inline constexpr char kImplicitChunkPanelBytesParam[] = "conv.implicit_chunk_panel_bytes";
// Position tiles per task when K is blocked (ImplicitGemmConv's chunk_tiles): each chunk's
// weight panel is read from L2 by this many tiles in a row, and a participant keeps their
// raw sums (tiles x rows x cols floats, 24 KiB for 16 tiles of 6 x 64) between chunks.
// 16 (h111, session 11) was not tuned; bounded to 256 tiles (384 KiB of sums at 6 x 64).
// Moving it changes no result.
inline constexpr int64_t kConvImplicitChunkTiles = 16;
inline constexpr char kImplicitChunkTilesParam[] = "conv.implicit_chunk_tiles";

// Tuning values of Conv (float), read once at Init.
struct ConvTuning {
  gemm::GemmTuning gemm{kConvMinimumTasks};  // the GEMM paths' parallel.minimum_tasks
  // Depthwise-style convolutions (one input channel per group) below this many
  // multiply-adds run serially.
  int64_t depthwise_minimum_multiply_adds = kConvDepthwiseMinimumMultiplyAdds;
  int64_t implicit_chunk_panel_bytes = kConvImplicitChunkPanelBytes;  // conv.implicit_chunk_panel_bytes
  int64_t implicit_chunk_tiles = kConvImplicitChunkTiles;             // conv.implicit_chunk_tiles
};
// Conv's schema: the GEMM parameters (parallel.minimum_tasks defaulting to
// kConvMinimumTasks) plus parallel.depthwise_minimum_multiply_adds and the implicit GEMM's
// conv.implicit_chunk_panel_bytes and conv.implicit_chunk_tiles.
std::vector<ParamSpec> ConvTuningParams();
StatusOr<ConvTuning> ReadConvTuning(const ResolvedTuning& tuning);

// Conv weights (M x C/group x kernel...) in the GEMM engine's packed layout, one block per
// group, prepared once when W is constant so that a run packs only its im2col columns.
// The buffer comes from the default allocator and lives as long as the object.
class PackedConvWeights {
 public:
  // Packs `w` for `group` groups; leaves the object empty when W does not take the GEMM
  // path (not float, depthwise, empty) or its shape is invalid (Compute reports that).
  // Keeps nothing of `w` but its shape: a kernel that packed it may absorb it.
  // `rows_read`, when given, is called only when `w` is packed, as it is read, with r
  // meaning: rows [0, r) of w (its M output channels, num_elements / M floats each) are
  // never read again (PrepackA's promise, group after group), so that a kernel may consume
  // w (registry/kernel.h, ConstantConsumer). The packed bytes are the same either way.
  static StatusOr<PackedConvWeights> Pack(const Tensor& w, int64_t group,
                                          const std::function<void(int64_t)>& rows_read = nullptr);
  // Whether W was packed (the GEMM paths then read only the packed form).
  bool packed() const { return packed_.num_elements() > 0; }
  size_t bytes() const { return packed_.byte_size(); }
  // The packed weights for this run's W (the constant they were packed from, whose data
  // the session may have released: matched by type and shape), else null.
  const float* Find(const Tensor& w) const;

 private:
  Shape source_shape_;
  Tensor packed_;
};

// Y = conv(X, W) + bias (bias may be null). 2-D convolutions with at most 4 input and at
// least 4 output channels per group and 2 to 49 taps (the CNN stems; FewChannelsApplies)
// run the direct row kernels of few_channels.h, parallel over (image, group, strip of output
// rows, block of output channels). Other depthwise-style convolutions (one input channel
// per group) run SIMD plane kernels parallel over output planes, or, where
// DepthwiseChannelsTake (output rows of at most half a vector; square 3x3 / 5x5 kernels with
// rows of up to two vectors), channel-blocked kernels parallel over blocks of a vector's
// worth of channels; 2-D convolutions whose
// output channels per group are a multiple of 32 run the implicit GEMM on AVX-512
// (implicit_gemm.h); the rest run one GEMM per (image, group, block of output channels,
// tile of output positions) with im2col generated straight into the GEMM's packed panels,
// parallel over those tasks with per-participant packing scratch. `packed_w` (nullable)
// is W already packed (PackedConvWeights); otherwise the weights are packed for this run.
// `epilogue` (FusedConv: residual Z of Y's layout, then an activation) is applied by every
// path to each block of Y right after the block is computed: a depthwise plane (without a
// residual, its Relu/Clip/Sigmoid/HardSwish/Swish inside the plane kernel on each strip
// of rows while it is in L1, depthwise.h's PlaneActivation), a few-channel block's strip
// of output rows, a run
// of implicit-GEMM register tiles (<= 48 positions), a GEMM task's tile, row by row after
// its bias. Not conv_direct.h's loops: they serve double, and FusedConv is float.
Status ConvForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* packed_w,
                   const float* bias, float* y, const ConvTuning& tuning, const gemm::Epilogue& epilogue = {});

// ConvTranspose: per (image, group, block of output channels) a GEMM W^T X into a bounded
// column buffer, then col2im into those channels only (disjoint outputs per task).
Status ConvTransposeForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                            const float* bias, float* y, const gemm::GemmTuning& tuning);

}  // namespace conv
}  // namespace onnx_light
