// NchwcConv's engine (README.md): a 2-D convolution (group 1) whose output is blocked
// ([N, CeilDiv(M, 16), OH, OW, 16]) and whose input is blocked (rank 5) or plain NCHW (the
// few-channel stems), run by the implicit GEMM's register tiles (conv/implicit_gemm.h)
// storing blocked Y (ImplicitTile::blocked_fn): each output is the NCHW implicit GEMM's
// sum, k = (c, kh, kw) in W's order with one fused multiply-add per tap, then + bias, so
// a convolution the NCHW path runs on the implicit GEMM (3x3 and larger kernels) gets the
// same bits here, only stored blocked. The input is read through per-row pointers plus
// per-k offsets:
//   blocked X: row (oh, ow) at image + (oh sh cols + ow sw) 16,
//              k = (c, kh, kw) at (c / 16) plane 16 + c % 16 + (kh dh cols + kw dw) 16
//   NCHW X:    row at image + oh sh cols + ow sw, k at c plane + kh dh cols + kw dw
// (plane = rows x cols of the source: X itself, or a zero-padded copy of one image in
// scratch when the convolution pads, as the NCHW driver does). A 1x1 stride-1 unpadded
// convolution over blocked X reads X in place: row pointers X + position x 16, offsets
// (c / 16) plane 16 + c % 16. Pad lanes of X are never read (K covers the real channels).
// Without an enabled tile (ISA capped below AVX2, or aarch64) a scalar 4 x 16 tile with
// the same contract and sums gives the same bits.
//
// Tasks: per image, (channel block of the tile's columns, run of position tiles), over
// ParallelForWithParticipant when the product's work (gemm::GemmWorkUnits of M, OH x OW,
// K) reaches parallel.minimum_tasks; K blocking (conv.implicit_chunk_panel_bytes,
// conv.implicit_chunk_tiles) as ImplicitGemmConv's. Each output is summed by one tile in
// k order whichever task holds it, so every participant count gives the same bits.
// The epilogue (Z blocked of Y's shape, activation): with no activation or Relu, Z and Relu
// are applied by the tiles in registers before their stores (ImplicitBlockedTileFn); any
// other activation runs as Epilogue::Apply on runs of up to 48 positions of one 16-channel
// block right after their tiles' stores (in L1). Either way the same roundings as the NCHW
// FusedConv's epilogue. Then the pad lanes of the last block (channels M .. RoundUp(M, 16))
// are written +0.0f whatever the activation. Task order: position-major (runs of ~48
// positions, every channel block of a run in a row) when the image is larger than the
// packed weights, else block-major; it changes no bits.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "native/kernels/conv/conv_float.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/conv/implicit_gemm.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace nchwc {

// W [M, C, kh, kw] packed once for this process's ISA: the enabled tile's K x cols panels
// (conv::PackImplicitWeights), or the scalar tile's K x 16 panels. `rows_read`, when
// given, is called with r after each block of output channels: rows [0, r) of w (M rows of
// K floats) are never read again (as PackImplicitWeights's), so a session may release them.
struct PackedNchwcWeights {
  int64_t m = 0, c = 0, kh = 0, kw = 0;
  conv::ImplicitTile tile;  // blocked_fn set
  std::vector<float> panels;

  int64_t k() const { return c * kh * kw; }
  static PackedNchwcWeights Pack(int64_t m, int64_t c, int64_t kh, int64_t kw, const float* w,
                                 const std::function<void(int64_t)>& rows_read = nullptr);
};

// The scalar tile (4 positions x 16 channels) with ImplicitTileFn's blocked contract:
// the fallback when no SIMD tile is enabled. Exposed for the tests.
conv::ImplicitTile ScalarBlockedTile();

// Y (blocked) = conv(X, W) + bias, then `epilogue` (its residual: Z blocked of Y's shape).
// `g` describes the logical NCHW convolution (in_channels = C); `x_blocked`: X is
// [N, CeilDiv(C, 16), H, W, 16], else [N, C, H, W].
Status NchwcConvForward(KernelContext& ctx, const conv::ConvGeometry& g, bool x_blocked, const float* x,
                        const PackedNchwcWeights& w, const float* bias, float* y, const conv::ConvTuning& tuning,
                        const gemm::Epilogue& epilogue);

}  // namespace nchwc
}  // namespace onnx_light
