// The element loops of QLinearAdd and QLinearMul (com.microsoft), one per ISA variant:
//
//   c[e] = Quantize(Apply(sa * float(a[e * a_step] - za), sb * float(b[e * b_step] - zb)))
//   Quantize(v) = saturate(round_half_even(clamp(v / sc, +-2^16)) + zc), NaN -> Q's minimum
//
// with Apply = + (Add) or * (Mul) and steps 0 (a broadcast scalar) or 1. Every variant runs
// the same float operations per element (an exact integer subtraction and conversion, one
// rounded product per input, the rounded sum or product, one correctly rounded division, no
// FMA), so every variant gives the same bytes as the portable one and as qlinear_util.h's
// Dequantize/Quantize: bit-identical across ISA caps. (ONNX Runtime's MLAS QLinearAdd uses
// fixed-point multipliers for most scale ratios instead, so its bytes can differ by one.)
//
// Variants, best first (qlinear_binary_test runs every one against a scalar oracle):
//   avx512    16 elements per vector (AVX-512F/BW)
//   avx2       8 elements per vector (AVX2)
//   sse2       4 elements per vector (x86-64's baseline; needs no more than Isa::kPortable)
//   neon       4 elements per vector (AArch64's Advanced SIMD)
//   portable   one element at a time: the reference
// Each handles its tail with one padded vector, so no element depends on where a block ends.
// Four vectors per step are narrowed together (packs + one permutation), then single vectors,
// then the padded one.
//
// The division is not the bottleneck: a reciprocal form (v * (1/sc) corrected by one FMA
// residual, used only for scales checked exact over all 65536 value pairs) measured 9%
// (AVX-512) and 17% (AVX2) slower on 64x56x56 uint8 (session 11, h108), so it is not here.
//
// Example:
//   const QLinearBinarySpans& spans = BestQLinearBinarySpans();
//   spans.u8(a, 1, b, 0, c, n, {sa, sb, sc, za, zb, zc, /*mul=*/false});  // c = a + b[0]
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace qlinear_ms {

struct QLinearBinaryParams {
  float sa, sb, sc;    // scales of A, B, C (finite, > 0)
  int32_t za, zb, zc;  // zero points (in Q's range)
  bool mul;            // QLinearMul, else QLinearAdd
};

// c[e] for e < n; a_step and b_step are each 0 or 1.
template <typename Q>
using QLinearBinarySpanFn = void (*)(const Q* a, int64_t a_step, const Q* b, int64_t b_step, Q* c, int64_t n,
                                     const QLinearBinaryParams& p);

struct QLinearBinarySpans {
  QLinearBinarySpanFn<uint8_t> u8;
  QLinearBinarySpanFn<int8_t> s8;
};

// Every variant compiled for this architecture, best first, portable last (isa_variants.h).
const std::vector<IsaVariant<QLinearBinarySpans>>& QLinearBinarySpanVariants();
// The best variant under the ISA cap, chosen once.
const QLinearBinarySpans& BestQLinearBinarySpans();

}  // namespace qlinear_ms
}  // namespace onnx_light
