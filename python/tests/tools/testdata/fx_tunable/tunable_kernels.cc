// Fixture (text only, never compiled): the inventory reads it as a family source.
#include "python/tests/tools/testdata/fx_tunable/tunable_kernels.h"

namespace fixture {

Status ReluKernel::Compute(KernelContext& ctx) {
  if (n < minimum_elements_) return ComputeSerial(ctx);
  return ParallelFor(ctx.parallel(), n, ParallelPlan{"relu.blocks", 4096},
                     [&](int64_t begin, int64_t end) { return Relu(begin, end); });
}

OL_REGISTER_KERNELS(fx_tunable) {
  registry.Add(KernelDef{"", "Relu", 6, 13, "fx_tunable", {DataType::kFloat, DataType::kDouble}});
  registry.Add(KernelDef{"", "Relu", 14, kOpenEnded, "fx_tunable", {DataType::kFloat, DataType::kDouble}});
  registry.Add(KernelDef{"", "Softmax", 13, kOpenEnded, "fx_tunable", {DataType::kFloat}});
}

}  // namespace fixture
