// ReduceLogSum, ReduceLogSumExp (integer types dropped at opset 28).
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

template <ReduceOp Op>
void AddLogReduce(KernelRegistry& registry, const char* op) {
  using Kernel = ReduceKernel<Op, ReduceNumericTypes>;
  const int64_t minimum = Op == ReduceOp::kLogSumExp ? kLogSumExpMinimum : kCheapReduceMinimum;
  registry.Add(ReductionDef(op, 1, 10, ReduceTypesOpset1(), MakeKernel<Kernel>(), minimum));
  registry.Add(ReductionDef(op, 11, 12, ReduceTypesOpset1(), MakeKernel<Kernel>(), minimum));
  registry.Add(ReductionDef(op, 13, 17, ReduceTypesOpset13(), MakeKernel<Kernel>(), minimum));
  registry.Add(ReductionDef(op, 18, 27, ReduceTypesOpset13(), MakeKernel<Kernel>(), minimum));
  registry.Add(ReductionDef(op, 28, kOpenEnded,
                            {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat, DataType::kDouble},
                            MakeKernel<ReduceKernel<Op, FloatTypes>>(), minimum));
}

}  // namespace

OL_REGISTER_KERNELS(reduction_log) {
  AddLogReduce<ReduceOp::kLogSum>(registry, "ReduceLogSum");
  AddLogReduce<ReduceOp::kLogSumExp>(registry, "ReduceLogSumExp");
}

}  // namespace onnx_light
