// Internal to the GEMM engine: the driver entry points with an explicit microkernel, so
// that tests and benchmarks can run every kernel the CPU supports.
#pragma once

#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/gemm/microkernel.h"

namespace onnx_light {
namespace gemm {

struct GemmProblem {
  bool trans_a = false;
  bool trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
  // Applied to each block of C once its K reduction is complete (FusedGemm); null: none.
  const Epilogue* epilogue = nullptr;
  // Index in the epilogue's output of c[0] (where its residual elements are): a product
  // writing part of a larger output (a convolution's channel plane and column tile).
  int64_t epilogue_offset = 0;
  // row_bias[i] added to row i of C once its K reduction is complete, before the epilogue
  // (a convolution's per-channel bias); null: none.
  const float* row_bias = nullptr;
  // With m == 1 and a transposed B: the layout (microkernel.h) in which p.b holds B's
  // columns for the dots-form GEMV (PrepackedB's GEMV copy); null: K-vectors ldb apart.
  const DotsLayout* b_dots = nullptr;
};

// `b_source` (optional) supplies B's panels instead of p.b for the tiled path; the GEMV
// path always reads p.b.
Status SgemmWith(const MicroKernel& kernel, const ParallelContext& parallel, Allocator* allocator,
                 const GemmTuning& tuning, const GemmProblem& p, GemmStats* stats,
                 const PackedBSource* b_source = nullptr);
size_t SerialScratchBytesWith(const MicroKernel& kernel, int64_t m, int64_t n, int64_t k);
void SgemmSerialWith(const MicroKernel& kernel, const GemmProblem& p, float* scratch);

}  // namespace gemm
}  // namespace onnx_light
