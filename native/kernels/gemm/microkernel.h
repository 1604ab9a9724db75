// Internal to the GEMM engine: the per-ISA microkernels and their cache blocking.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace gemm {

// c[i * ldc + j] = alpha * sum_k a[k * mr + i] * b[k * nr + j] + beta * c[i * ldc + j]
// for a full mr x nr tile; beta == 0 does not read c.
using TileFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta);
// The partial tile at the edges of C: rows <= mr, cols <= nr (not both full) of the same
// panels (A zero-padded past `rows`, B past `cols`), writing only those rows and columns of c
// (directly: no copy through a full tile) and each of them with TileFn's arithmetic, so
// bit for bit what the full tile gives on a copy of c. A kernel computes no more than a
// vector of columns past `cols` and no row past `rows`: N not a multiple of nr (49 or 196
// output positions of a late 1x1 convolution) and M below mr (MatMul with 2..8 rows) cost
// the vectors they fill. Where the columns past the last whole vector are fewer than the
// rows (x86: cols % lanes < mr), they run in column form: the A panel's rows as the vector
// lanes, one accumulator per column, inside the same K loop as the whole vectors.
using EdgeTileFn = void (*)(int64_t kc, const float* a, const float* b, int rows, int cols, float* c, int64_t ldc,
                            float alpha, float beta);
// GEMV building blocks, y[j] for j < n (y is written, not accumulated):
//   rows form: y[j] = sum_k x[k] * m[k * ld + j]   (matrix rows run along k)
//   dots form: y[j] = sum_k x[k] * M(j, k)         (each y is one dot product)
// Each y[j] has one summation order whatever n, the position of j or the layout.
using GemvFn = void (*)(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y);
// The rows form accumulating: y[j] += sum_k x[k] * m[k * ld + j], each k added to y[j] in
// k order exactly as the rows form adds it, so that the rows form over K gives the bits of
// zeroing y and then this over K split anywhere (PrepackedB's K blocks, read in place).
using GemvAddFn = GemvFn;

// The dots form reads columns in groups of kDotsGroup (its kernels run one group at a
// time) and K in blocks of the kernel's dots_block (one step of its loop), element M(j, k) at
//   m + (j / kDotsGroup) * group + (j % kDotsGroup) * row + (k / dots_block) * block + k % dots_block.
// Dense (one K-vector per column, ld apart): {row = ld, block = dots_block, group = kDotsGroup * ld}.
// Interleaved (PrepackedB's GEMV copy: the matrix read as one forward stream, a group's
// columns side by side block by block): {row = dots_block, block = kDotsGroup * dots_block,
// group = kDotsGroup * K rounded up to dots_block}. The layout moves no arithmetic: a column
// gives the same bits in either.
constexpr int kDotsGroup = 4;
struct DotsLayout {
  int64_t row = 0, block = 0, group = 0;
};
// Calls start at a column that is a multiple of kDotsGroup (m points at its group).
using GemvDotsFn = void (*)(int64_t k, int64_t n, const float* x, const float* m, const DotsLayout& layout, float* y);

// Internal linkage (an unnamed namespace in this header): the per-ISA files are compiled
// with their ISA's flags, and an inline member with external linkage emitted there could be
// the copy the linker keeps for the scalar kernel too.
namespace {

// Software prefetch of the GEMV rows form, one step per 16 columns (a cache line) of a
// pass of `rows` matrix rows over columns [0, n): the address `distance` floats ahead,
// continuing into the next pass's rows past column n. So the streams run on across passes
// and never fetch columns outside [0, n) (another participant's, or the next chunk's).
class GemvRowsPrefetch {
 public:
  GemvRowsPrefetch(const float* m, int64_t ld, int64_t n, int rows, int64_t distance)
      : base_(m + (n > 0 ? distance / n : 0) * rows * ld), column_(n > 0 ? distance % n : 0), n_(n), pass_(rows * ld) {}
  // The address for row 0 of this step; row i is at + i * ld.
  const float* Next() {
    const float* p = base_ + column_;
    column_ += 16;
    while (column_ >= n_) {
      column_ -= n_;
      base_ += pass_;
    }
    return p;
  }

 private:
  const float* base_;
  int64_t column_, n_, pass_;
};

}  // namespace

struct MicroKernel {
  const char* name;
  int mr;      // rows of the register tile (A, broadcast)
  int nr;      // columns of the register tile (B, vector loads)
  int64_t kc;  // K block: an A micro-panel (mr x kc) stays in L1
  int64_t nc;  // N block: the packed B block (kc x nc) stays in L2
  TileFn tile;
  EdgeTileFn edge;  // partial tiles (EdgeTileFn)
  GemvFn gemv_rows;
  GemvAddFn gemv_rows_add;  // the rows form accumulating into y
  GemvDotsFn gemv_dots;
  int dots_block;  // K block of gemv_dots (DotsLayout)
};

// Per-ISA kernels; each returns null when not compiled for this architecture or not
// enabled on this CPU (IsaEnabled: the CPU has the ISA and the ISA cap allows it).
const MicroKernel* Avx512Kernel();
const MicroKernel* Avx512Tile8x48Kernel();  // the alternative tile, for tests and benchmarks
const MicroKernel* Avx2Kernel();
const MicroKernel* NeonKernel();
const MicroKernel& ScalarKernel();

// The fastest kernel this CPU supports (chosen once).
const MicroKernel& BestKernel();
// Every kernel this CPU supports, best first (tests run them all).
std::vector<const MicroKernel*> SupportedKernels();
// Every kernel compiled for this architecture with the ISA it needs, best first, the
// scalar one last (isa_variants.h): the list tests iterate to report the ones not run.
const std::vector<IsaVariant<const MicroKernel* (*)()>>& KernelVariants();

}  // namespace gemm
}  // namespace onnx_light
