// GEMM for every element type Gemm and MatMul accept: float through the packed engine,
// float16/bfloat16 through it after widening to float (float accumulation, one rounding
// back), double and the integer types through a simple row-parallel loop (integers wrap
// around as two's complement, as numpy does).
#pragma once

#include <cstdint>

#include "native/core/allocator.h"
#include "native/core/data_type.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/kernels/gemm/gemm.h"

namespace onnx_light {
namespace gemm {

struct TypedGemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;  // read when beta != 0
  int64_t ldc = 0;
};

// The element types TypedGemm implements.
using TypedGemmTypes = decltype(FloatsBf{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});

// True for TypedGemmTypes.
bool TypedGemmSupports(DataType type);

// NotImplemented for other types. Scratch (widened copies for 16-bit floats) is taken from
// `allocator` before any worker starts and reported in `stats`.
Status TypedGemm(DataType type, const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning,
                 const TypedGemmArgs& args, GemmStats* stats = nullptr);

}  // namespace gemm
}  // namespace onnx_light
