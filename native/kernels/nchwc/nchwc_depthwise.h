// The blocked-channel (NCHW16c, README.md) depthwise convolution and squeeze-and-excitation
// primitives, one algorithm (nchwc_depthwise_simd.inc) over each ISA's 16-lane block
// vector: AVX-512 (one zmm), AVX2 (two ymm), NEON (four q), portable (16 scalars).
//
//   const NchwcBlockKernels& k = BestVariant(NchwcBlockVariants()).impl;
//   for (int64_t oh = 0; oh < g.out_h; ++oh)           // any subset of rows, any order
//     k.depthwise_row(g, x_block, w_block, bias_block, oh, y_block + oh * g.out_w * 16);
//
// Contract:
//   - depthwise_row writes output row `oh` of one channel block: out_w vectors of 16 lanes.
//     x_block is the block's input plane [in_h][in_w][16], w_block its taps packed
//     [kernel_h][kernel_w][16] (PackDepthwiseWeights), bias_block 16 floats (zeros without
//     a bias). Positions go by runs of V::kCols (8 on AVX-512, or 7 on rows of 7, 14 and
//     28; 4 elsewhere: independent accumulation chains sharing each weight load, so that
//     the FMA latency is hidden);
//     runs whose taps all fall inside the input read without checks, the edge runs (left
//     and right padding) read a block of zeros for a tap column outside the input, with no
//     padded copy of X; a last partial run is a full run ending at out_w (positions
//     computed twice, to the same bits). Square 3x3 and 5x5 kernels with strides 1 and 2
//     have their taps unrolled; other kernels, strides and dilations take the same loop
//     with run-time bounds. Every lane of every output is, whichever the ISA or the path:
//       acc = +0; for each tap row inside the input, for each tap column, in (kh, kw)
//       order: acc = fma(w, x, acc) (x = 0 for a column in the padding); y = acc + bias
//     (one fused multiply-add per tap: the same sums, in the same order, as the NCHW
//     depthwise kernels of conv/depthwise.h, which skip padding taps; adding w x 0 leaves
//     a sum unchanged unless it underflowed to -0). All variants give the same bits. No
//     activation: the caller applies FusedConv's epilogue to the row just written, in L1.
//   - depthwise_row_pair writes rows oh and oh + 1 (only oh when oh + 1 == out_h), the
//     second right after the first: for square 3x3 / 5x5 kernels at stride 1 whose two rows
//     have every tap row inside the input it loads each input vector once for both rows
//     (AVX-512 only, V::kPairRows: two rows of accumulators need its 32 registers), else it
//     is two depthwise_row calls. The same bits as depthwise_row.
//   - block_sums: sums[l] = the sum over the plane's `positions` vectors of lane l, as
//     four running sums over positions p = 0, 4, 8, ... / 1, 5, ... / 2, ... / 3, ...,
//     then (s0 + s1) + (s2 + s3): one fixed order on every ISA.
//   - block_scale: y[p][l] = gate[l] * x[p][l] for p < positions (one rounding each).
//   - Each call writes only its own outputs; no state: serial and parallel calls give the
//     same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace nchwc {

inline constexpr int64_t kBlock = 16;  // lanes per channel block (README.md)

// One channel block's 2-D depthwise geometry (pads: the top and left ones; the bottom and
// right ones only bound out_h / out_w, which the caller resolved).
struct DepthwiseGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

using DepthwiseRowFn = void (*)(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                                const float* bias_block, int64_t oh, float* y_row);
// Rows oh and oh + 1 (only oh when oh + 1 == out_h) into y_rows and y_rows + out_w x 16.
using DepthwiseRowPairFn = void (*)(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                                    const float* bias_block, int64_t oh, float* y_rows);
using BlockSumsFn = void (*)(const float* x_block, int64_t positions, float* sums);
using BlockScaleFn = void (*)(const float* x_block, const float* gate, int64_t positions, float* y_block);

struct NchwcBlockKernels {
  DepthwiseRowFn depthwise_row = nullptr;
  DepthwiseRowPairFn depthwise_row_pair = nullptr;
  BlockSumsFn block_sums = nullptr;
  BlockScaleFn block_scale = nullptr;
};

// avx512, avx2 (x86-64), neon (aarch64), then portable.
const std::vector<IsaVariant<NchwcBlockKernels>>& NchwcBlockVariants();
// BestVariant(NchwcBlockVariants()), chosen once.
const NchwcBlockKernels& BestNchwcBlockKernels();

// W [C, 1, kh, kw] (ONNX) -> [CeilDiv(C, 16)][kh][kw][16], pad lanes 0.
std::vector<float> PackDepthwiseWeights(const float* w, int64_t channels, int64_t kernel_h, int64_t kernel_w);

// The per-ISA variants (null-bodied off their architecture); call one only when
// IsaEnabled(its ISA).
void NchwcDepthwiseRowAvx512(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                             const float* bias_block, int64_t oh, float* y_row);
void NchwcDepthwiseRowPairAvx512(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                                 const float* bias_block, int64_t oh, float* y_rows);
void NchwcBlockSumsAvx512(const float* x_block, int64_t positions, float* sums);
void NchwcBlockScaleAvx512(const float* x_block, const float* gate, int64_t positions, float* y_block);
void NchwcDepthwiseRowAvx2(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                           const float* bias_block, int64_t oh, float* y_row);
void NchwcDepthwiseRowPairAvx2(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                               const float* bias_block, int64_t oh, float* y_rows);
void NchwcBlockSumsAvx2(const float* x_block, int64_t positions, float* sums);
void NchwcBlockScaleAvx2(const float* x_block, const float* gate, int64_t positions, float* y_block);
void NchwcDepthwiseRowNeon(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                           const float* bias_block, int64_t oh, float* y_row);
void NchwcDepthwiseRowPairNeon(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                               const float* bias_block, int64_t oh, float* y_rows);
void NchwcBlockSumsNeon(const float* x_block, int64_t positions, float* sums);
void NchwcBlockScaleNeon(const float* x_block, const float* gate, int64_t positions, float* y_block);

}  // namespace nchwc
}  // namespace onnx_light
