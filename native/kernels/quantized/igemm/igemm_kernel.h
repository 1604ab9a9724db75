// Internal to the integer GEMM engine: the per-ISA microkernels and requantisers.
//
// Packed operands hold 16-bit values (uint8 and int8 both widen exactly), K in pairs:
//   A panel (mr rows):    a[(p * mr + i) * 2 + t] = A(i, 2p + t)
//   B panel (nr columns): b[(p * nr + j) * 2 + t] = B(2p + t, j)
// with zero rows/columns/K past the edges. Products of pairs fit int32 exactly
// (2 * 255 * 255 < 2^31), so vpmaddwd-style pair products never saturate.
//
// A kernel with a byte tile (tile_u8s8, VNNI's vpdpbusd) also takes a signed B as bytes,
// K in quads:
//   A panel: a[(q * mr + i) * 4 + t] = A(i, 4q + t) as uint8 (an int8 A shifted by +128,
//            its zero point shifted alike, so (A - azp) is unchanged)
//   B panel: b[(q * nr + j) * 4 + t] = B(4q + t, j) as int8
// Four u8 x s8 products sum to at most 4 * 255 * 128 < 2^31: exact, then a wrapping add.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace igemm {

// c[i * ldc + j] (+)= sum_{p < kp} sum_t a(i, p, t) * b(p, j, t) for the full mr x nr tile,
// wrapping int32; accumulate == false overwrites c.
using IgemmTileFn = void (*)(int64_t kp, const int16_t* a, const int16_t* b, int32_t* c, int64_t ldc, bool accumulate);
// As IgemmTileFn over byte panels, kq quads of K.
using IgemmByteTileFn = void (*)(int64_t kq, const uint8_t* a, const int8_t* b, int32_t* c, int64_t ldc,
                                 bool accumulate);
// The edge tiles of a kernel: the tile over the first `rows` (1..mr) rows of the A panel
// and at least the first `cols` (1..nr) columns of the B panel (cols rounded up to the
// kernel's column step, 8), storing only those rows and columns of c; the panels keep
// their full mr / nr strides. Same sums as the full tile in the cells it stores, so a
// block whose edge is not a multiple of the tile skips the padding rather than computing it.
using IgemmEdgeTileFn = IgemmTileFn (*)(int rows, int cols);
using IgemmByteEdgeTileFn = IgemmByteTileFn (*)(int rows, int cols);
// The rows of a B block for the packed-A arrangement: row kk at base + kk * ld, or at
// pointers[kk] when given.
struct IgemmRows {
  const uint8_t* base = nullptr;
  int64_t ld = 0;
  const uint8_t* const* pointers = nullptr;
  const uint8_t* at(int64_t kk, int64_t col) const {
    return (pointers != nullptr ? pointers[kk] : base + kk * ld) + col;
  }
};
// Packs one B panel of the packed-A arrangement (IgemmPackBBlock): columns [col0, col0 +
// width) of K rows (width <= nr; the panel's other columns and the K padding stored as 0)
// in the kernel's format, a uint8 B shifted to int8 in the byte format; sums[c] = the sum of
// column c's stored values for c < width. Null: the portable packing in igemm.cc.
using IgemmPackPanelFn = void (*)(const IgemmRows& rows, int64_t col0, int64_t k, int64_t width, bool is_signed,
                                  void* dst, int32_t* sums);
// Requantize (igemm.h).
using RequantizeFn = void (*)(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step,
                              int32_t zp, bool is_signed, void* out);
// The packed-A arrangement's zero-point correction of one row of C (zero_point_terms.h):
// row[j] += row_term - azp * column_sums[j] for j < n, modulo 2^32.
using AddZeroPointTermsFn = void (*)(uint32_t* row, int64_t n, uint32_t row_term, uint32_t azp,
                                     const uint32_t* column_sums);

// The indirect byte tile (IgemmComputeIndirect: a convolution's output positions as rows,
// read in place): c[i * ldc + j] = init[j] + the sum over taps t < taps and quads q < quads
// of the four bytes at rows[i] + offsets[t] + 4q (uint8) times B(t quads + q, j) (the byte
// panel's int8 quads), wrapping, for the tile's rows i < rows and columns j < cols,
// overwriting c; b points to the panel's first quad, init to the panel's nr column values.
using IgemmIndirectTileFn = void (*)(int64_t taps, int64_t quads, const uint8_t* const* rows, const int64_t* offsets,
                                     const int8_t* b, const int32_t* init, int32_t* c, int64_t ldc);
// The indirect tile over the first `rows` (1..mr) rows and at least `cols` (1..nr) columns.
using IgemmIndirectEdgeTileFn = IgemmIndirectTileFn (*)(int rows, int cols);
// As IgemmIndirectTileFn over 16-bit pairs: A's values are int16 (two bytes each) at
// rows[i] + offsets[t] (byte offsets) + 4p for pair p < pairs of tap t, B the pair panel.
using IgemmIndirectPairTileFn = void (*)(int64_t taps, int64_t pairs, const uint8_t* const* rows,
                                         const int64_t* offsets, const int16_t* b, const int32_t* init, int32_t* c,
                                         int64_t ldc);
using IgemmIndirectPairEdgeTileFn = IgemmIndirectPairTileFn (*)(int rows, int cols);

struct IgemmKernel {
  const char* name;
  int mr;
  int nr;
  IgemmTileFn tile;
  RequantizeFn requantize;
  IgemmByteTileFn tile_u8s8;  // null: every B takes the 16-bit pair format
  // Edge tiles for the packed-A arrangement (IgemmMultiplyBlock); null: full tiles only.
  IgemmEdgeTileFn edge_tile = nullptr;
  IgemmByteEdgeTileFn edge_tile_u8s8 = nullptr;
  IgemmPackPanelFn pack_panel = nullptr;                      // in the format its packed A takes (byte if tile_u8s8)
  AddZeroPointTermsFn add_zero_point_terms = nullptr;         // null: the scalar lanes (igemm.cc)
  IgemmIndirectEdgeTileFn indirect_tile_u8s8 = nullptr;       // null: no IgemmComputeIndirect on byte panels
  IgemmIndirectPairEdgeTileFn indirect_tile_pairs = nullptr;  // null: none on pair panels
};

// Per-ISA kernels: null when not compiled for this architecture or not enabled on this CPU.
const IgemmKernel* Avx512VnniKernel();  // also needs AVX512-VNNI (vpdpbusd, vpdpwssd)
const IgemmKernel* Avx512Kernel();
const IgemmKernel* Avx2Kernel();
const IgemmKernel* NeonKernel();
const IgemmKernel& ScalarKernel();

// Every kernel compiled for this architecture with the ISA it needs, best first, scalar
// last. A getter may return null although its ISA is enabled (VNNI on an AVX-512 CPU
// without it): tests report that as not run.
const std::vector<IsaVariant<const IgemmKernel* (*)()>>& IgemmKernelVariants();
// The first variant whose getter returns a kernel (chosen once).
const IgemmKernel& BestIgemmKernel();

}  // namespace igemm
}  // namespace onnx_light
