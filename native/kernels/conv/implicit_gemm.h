// Implicit-GEMM convolution for AVX-512 and AVX2: output tiles of 6 (or 12) consecutive
// output positions x 64 (or 32) output channels (AVX2: 3 positions x 32 channels)
// accumulate over K = (input channel, kh, kw),
// the input pixels broadcast straight from the input (or a zero-padded copy of it when
// the convolution pads) instead of an im2col copy, the weights read as K x 64 (32)
// panels packed once. It takes 2-D convolutions whose output channels per group are a
// multiple of 32; other shapes, and CPUs without AVX2, take im2col + GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

// For i < valid (<= rows), j < cols:
//   y[j * ldy + i] = bias[j] + sum over k < k_count of rows[i][offsets[k]] * w[k * cols + j]
// (bias null: 0), the sum in k order.
using ImplicitTileFn = void (*)(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                const float* bias, int valid, float* y, int64_t ldy);
// A register tile: positions x output channels.
struct ImplicitTile {
  int rows = 0, cols = 0;
  ImplicitTileFn fn = nullptr;
};
inline constexpr int kMaxImplicitRows = 12;
// The register tiles, best first: "avx512_6x64" (6 positions x 64 channels: half the row
// pointers and broadcasts of 12 x 32 per FMA), "avx512_12x32", "avx2_3x32" (12 ymm
// accumulators: 4 weight loads and 3 broadcasts per 12 FMAs). No portable tile: without
// them convolutions take im2col + GEMM; the tests compare each tile with the contract
// above evaluated in k order (every tile sums alike, so all give the same bits).
const std::vector<IsaVariant<ImplicitTile>>& ImplicitTileVariants();
// The best enabled tile whose columns divide `out_per_group`; fn null when none does
// (no AVX2, the ISA capped below it, or channels not a multiple of 32).
ImplicitTile ImplicitTileFor(int64_t out_per_group);

// Whether a convolution takes the implicit GEMM on this CPU: spatial rank 2, output
// channels per group a multiple of 32 (the tile's columns), more than one input channel
// per group (else it is depthwise) and a kernel larger than 1x1 (1x1 kernels read X as
// B without im2col, and their short K cannot amortise this tile's stores). Depends on
// W's shape only, so that weights packed at creation match the path a run takes.
bool ImplicitGemmApplies(int rank, int64_t out_per_group, int64_t in_per_group, int64_t kernel_size);

// Weights of one group (mg x k, row-major) as panels of k x cols, cols the tile's.
void PackImplicitWeights(int64_t mg, int64_t k, const float* w, float* packed);

// Y = conv(X, W) + bias; `packed_w` is PackImplicitWeights of every group (group after
// group), or null to pack W here. Images run one after the other, each padded (when the
// convolution pads) into scratch of one image's size, then split over (group, channel
// block, position tile) tasks.
// `epilogue` runs on each run of up to 48 consecutive positions of one channel block (a
// few tiles, still in L1) right after its tiles' stores.
Status ImplicitGemmConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                        const float* packed_w, const float* bias, float* y, const gemm::GemmTuning& tuning,
                        const gemm::Epilogue& epilogue = {});

}  // namespace conv
}  // namespace onnx_light
