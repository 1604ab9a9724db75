// Implicit-GEMM convolution for AVX-512 and AVX2: output tiles of a few consecutive output
// positions x 16 to 64 output channels (ImplicitTileVariants) accumulate over K = (input
// channel, kh, kw), the input pixels broadcast straight from the input (or a zero-padded
// copy of it when the convolution pads) instead of an im2col copy, the weights read as
// K x cols panels packed once. It takes 2-D convolutions of any output-channel count per
// group that its tiles pad by less than half (ImplicitGemmApplies); the last channel block
// of a group is padded with zero weights and only its real channels are stored. Other
// shapes, and CPUs without AVX2, take im2col + GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace conv {

// For i < valid (<= rows), j < cols, with acc = carry_in[i * cols + j] (carry_in null: 0):
//   acc = fma(rows[i][offsets[k]], w[k * cols + j], acc) for k = 0 .. k_count - 1 in order;
//   carry_out null: y[j * ldy + i] = acc + bias[j] (bias null: + 0) for j < channels (1 ..
//                   cols: a group's last, padded block stores only its real channels, straight
//                   into Y), nothing else written (bias is read for all cols);
//   carry_out set:  carry_out[i * cols + j] = acc (raw sums, no bias; y untouched).
// A K chunk that is not the last passes carry_out, the chunks after it pass its carry as
// carry_in with offsets and w advanced to their first k: the same fused multiply-adds in
// the same k order, so a chunked sum has the bits of the unchunked one.
using ImplicitTileFn = void (*)(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                const float* bias, int valid, int channels, float* y, int64_t ldy,
                                const float* carry_in, float* carry_out);
// A tile storing Y in the blocked-channel layout (nchwc/README.md): the same sums, carries
// and bits as ImplicitTileFn, but with carry_out null, for i < valid and j < RoundUp(channels, 16)
//   v = acc + bias[j]                              (bias null: + 0)
//   v = v + residual[(j / 16) * ldy + i * 16 + j % 16]   (residual null: no add)
//   v = relu && !(v > 0) && v == v ? +0 : v        (the epilogue's Relu: NaN kept)
//   y[(j / 16) * ldy + i * 16 + j % 16] = v
// (ldy: floats between channel blocks, the output plane x 16): whole 16-lane vectors, one
// per position and block, nothing else written; each step one rounding, as Epilogue::Apply
// on y = acc + bias gives. Lanes past the real channels get their columns' values (zero
// weights: 0 + bias ...); the caller zeroes them (nchwc_conv.cc).
using ImplicitBlockedTileFn = void (*)(int64_t k_count, const int64_t* offsets, const float* const* rows,
                                       const float* w, const float* bias, int valid, int channels, float* y,
                                       int64_t ldy, const float* carry_in, float* carry_out, const float* residual,
                                       bool relu);
// A register tile: positions x output channels; `blocked_fn` the same tile storing blocked Y.
struct ImplicitTile {
  int rows = 0, cols = 0;
  ImplicitTileFn fn = nullptr;
  ImplicitBlockedTileFn blocked_fn = nullptr;
};
inline constexpr int kMaxImplicitRows = 12, kMaxImplicitCols = 64;
// The register tiles, best first (the order breaks ties of ImplicitTileFor's rule below):
//   "avx512_6x64"  6 positions x 64 channels, 24 zmm accumulators: 4 weight loads and 6
//                  broadcasts per 24 FMAs (half the row pointers and broadcasts of 12 x 32);
//   "avx512_12x32" 12 x 32, 24 accumulators: 2 loads, 12 broadcasts per 24 FMAs;
//   "avx512_8x48"  8 x 48, 24 accumulators: 3 loads, 8 broadcasts per 24 FMAs; for 40, 48,
//                  144 ... channels, which 32 and 64 pad to 64 and 160 (40: 48 columns, not
//                  64; before it, they took avx2_6x16's 8-lane FMAs);
//   "avx512_12x16" 12 x 16, 12 accumulators: 1 load, 12 broadcasts per 12 FMAs; for 16, 80,
//                  112 ... channels, which every wider tile pads more;
//   "avx2_3x32"    12 ymm accumulators: 4 weight loads and 3 broadcasts per 12 FMAs;
//   "avx2_6x16"    2 weight loads and 6 broadcasts per 12 FMAs; for 16, 48, 80, 112 ...
//                  channels under the AVX2 cap.
// No portable tile: without them convolutions take im2col + GEMM. Every tile sums each
// output in k order with one fused multiply-add per tap (ImplicitTileFn), so all give the
// same bits; the tests compare each with that contract evaluated in k order.
const std::vector<IsaVariant<ImplicitTile>>& ImplicitTileVariants();
// The rule: among the enabled tiles, the one that pads `out_per_group` to the fewest
// columns (RoundUp(out_per_group, cols)), ties to the earlier listed, i.e. the better FMA
// efficiency (e.g. on AVX-512: 64 -> 6x64, 96 and 672 -> 12x32, 40, 48 and 240 -> 8x48, 16
// and 80 -> 12x16, 24 -> 12x32; under the AVX2 cap: 40, 48 -> avx2_6x16, 24 -> 3x32); fn null when no
// tile is enabled (no AVX2, or the ISA capped below it) or out_per_group <= 0.
ImplicitTile ImplicitTileFor(int64_t out_per_group);

// Whether a convolution takes the implicit GEMM on this CPU: spatial rank 2, output
// channels per group padded by ImplicitTileFor's tile to fewer than twice their count
// (padded columns cost FMAs like real ones: 9 channels and up with a 16-column tile,
// avx512_12x16 or avx2_6x16; 8 or fewer take im2col + GEMM), more than one input channel
// per group (else it is depthwise) and a kernel larger than 1x1 (1x1 kernels read X as
// B without im2col, and their short K cannot amortise this tile's stores). Depends on
// W's shape only, so that weights packed at creation match the path a run takes.
bool ImplicitGemmApplies(int rank, int64_t out_per_group, int64_t in_per_group, int64_t kernel_size);

// Floats of one group's packed weights: RoundUp(mg, cols) x k, cols ImplicitTileFor(mg)'s.
int64_t ImplicitPackedSize(int64_t mg, int64_t k);
// Weights of one group (mg x k, row-major) as CeilDiv(mg, cols) panels of k x cols, cols
// the tile's; the last panel's columns past mg are zero.
// `rows_read`, when given, is called after each block of channels with r meaning: rows
// [0, r) of w (M rows of k floats) are never read again (as PrepackA's).
void PackImplicitWeights(int64_t mg, int64_t k, const float* w, float* packed,
                         const std::function<void(int64_t)>& rows_read = nullptr);

// Y = conv(X, W) + bias; `packed_w` is PackImplicitWeights of every group (group after
// group, ImplicitPackedSize apart), or null to pack W here. Images run one after the other, each padded (when the
// convolution pads) into scratch of one image's size, then split over (group, channel
// block, position tile) tasks.
// `epilogue` runs on each run of up to 48 consecutive positions of one channel block (a
// few tiles, still in L1) right after its tiles' stores.
// K blocking: when the K x cols weight panel of a channel block is larger than
// `chunk_panel_bytes` (> 0; k_chunk = max(1, chunk_panel_bytes / (4 cols)) k), a task is a
// channel block x up to `chunk_tiles` (>= 1) position tiles, and K runs in
// CeilDiv(K, k_chunk) equal chunks over all its tiles, so one chunk's weight panel is
// reused from L2 by every tile instead of the whole K x cols panel streamed once per tile
// (1.18 MB for 3x3 over 512 channels, 64 columns). The tiles' raw sums wait in
// per-participant scratch between chunks (ImplicitTileFn's carry); bias, stores and the
// epilogue follow the last chunk. Same bits as chunk_panel_bytes = 0 (no blocking), for
// every chunk_tiles (each tile's sums run in k order whichever task holds it).
Status ImplicitGemmConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                        const float* packed_w, const float* bias, float* y, const gemm::GemmTuning& tuning,
                        const gemm::Epilogue& epilogue, int64_t chunk_panel_bytes, int64_t chunk_tiles);

}  // namespace conv
}  // namespace onnx_light
