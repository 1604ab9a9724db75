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
