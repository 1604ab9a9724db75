// The 2-D fast path of MaxPool (without Indices), AveragePool and LpPool on float and
// double, and of MaxPool (without Indices) on int8 and uint8: per output row, the interior columns (every horizontal
// tap inside the input) are computed tap by tap across the whole column range, with no bounds checks and vectorised
// over columns; the border columns fold their in-bounds taps one output at a time. Each output folds its taps in the
// generic path's order (pool_ops.cc), so results are bit-identical to it.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/pooling/pool_geometry.h"
#include "native/kernels/pooling/pool_window.h"

namespace onnx_light {

// Output rows [begin, end) of the flattened [N*C, out rows] space of a 2-D pool.
template <PoolKind K, typename T>
void PoolRows2d(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin, int64_t end);

// The interior-row kernels, best first: "avx512" (x86-64; int8/uint8 MaxPool at column
// strides 1 and 2 in 64-byte registers, everything else as "avx2"), "avx2" (x86-64; AVX2 without FMA, so the folds
// match the generic path bit for bit; float Max/Average at column strides 1 and 2 in
// register blocks; int8/uint8 MaxPool at column strides 1 and 2 in 32-byte registers with
// vpmaxsb/vpmaxub), "neon" (aarch64; int8/uint8 MaxPool at column strides 1 and 2 in
// 16-byte registers, everything else as "portable"), "portable" (the compiler-vectorised
// loops) last. Impl names the
// variant for PoolRows2dVariant. PoolRows2d runs the best enabled one (isa_variants.h).
const std::vector<IsaVariant<Isa>>& PoolRowsVariants();

// PoolRows2d with the kernels of `variant` (one of PoolRowsVariants(), enabled on this
// CPU): for tests.
template <PoolKind K, typename T>
void PoolRows2dVariant(Isa variant, const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t begin,
                       int64_t end);

}  // namespace onnx_light
