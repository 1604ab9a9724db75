// The NCHW <-> NCHW16c reorders (README.md's layout): row primitives per ISA and their
// variant list. A row is `count` consecutive positions of one block of up to 16 channels:
//
//   ToBlocked:   out[p * 16 + l] = l < lanes ? x[l * ld + p] : 0     (p < count, l < 16)
//   FromBlocked: y[l * ld + p]   = in[p * 16 + l]                    (p < count, l < lanes)
//
// i.e. a transpose of lanes x count floats (channel planes `ld` apart) into count x 16 and
// back; pad lanes (l >= lanes) are written +0.0f one way and never read the other. Both
// move floats only, so every variant gives the same bits (the tests compare each with the
// portable one). The variants, best first:
//   "avx512"   16 positions a step: 16 (masked) loads, a 16 x 16 in-register transpose,
//              16 stores; a shorter tail runs the same step under position masks;
//   "avx2"     8 positions a step: two 8 x 8 transposes (lanes 0-7 and 8-15); tail scalar;
//   "neon"     4 positions a step: four 4 x 4 transposes; tail scalar;
//   "portable" scalar loops.
//
// Example (one image, one block of channels c0 .. c0 + lanes - 1, positions [p0, p1)):
//   const ReorderRows& rows = BestReorderRows();
//   rows.to_blocked(x + c0 * plane + p0, plane, lanes, p1 - p0, out + (cb * plane + p0) * 16);
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace nchwc {

// Lanes per block (README.md: 16 on every ISA).
inline constexpr int kBlock = 16;

using ToBlockedFn = void (*)(const float* x, int64_t ld, int lanes, int64_t count, float* out);
using FromBlockedFn = void (*)(const float* in, int lanes, int64_t count, float* y, int64_t ld);

struct ReorderRows {
  ToBlockedFn to_blocked = nullptr;
  FromBlockedFn from_blocked = nullptr;
};

// avx512, avx2 (x86-64), neon (aarch64), then portable.
const std::vector<IsaVariant<ReorderRows>>& ReorderRowsVariants();
// BestVariant(ReorderRowsVariants()), chosen once.
const ReorderRows& BestReorderRows();

}  // namespace nchwc
}  // namespace onnx_light
