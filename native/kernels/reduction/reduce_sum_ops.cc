// ReduceSum, ReduceSumSquare, ReduceMean, ReduceL1, ReduceL2, ReduceProd.
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

template <ReduceOp Op>
void AddArithmeticReduce(KernelRegistry& registry, const char* op) {
  using Kernel = ReduceKernel<Op, ReduceNumericTypes>;
  registry.Add(ReductionDef(op, 1, 10, ReduceTypesOpset1(), MakeKernel<Kernel>(), kCheapReduceMinimum));
  registry.Add(ReductionDef(op, 11, 12, ReduceTypesOpset1(), MakeKernel<Kernel>(), kCheapReduceMinimum));
  if (Op == ReduceOp::kSum) {  // axes became an input at opset 13 for ReduceSum only
    registry.Add(ReductionDef(op, 13, kOpenEnded, ReduceTypesOpset13(), MakeKernel<Kernel>(), kCheapReduceMinimum));
    return;
  }
  registry.Add(ReductionDef(op, 13, 17, ReduceTypesOpset13(), MakeKernel<Kernel>(), kCheapReduceMinimum));
  registry.Add(ReductionDef(op, 18, kOpenEnded, ReduceTypesOpset13(), MakeKernel<Kernel>(), kCheapReduceMinimum));
}

}  // namespace

OL_REGISTER_KERNELS(reduction_arithmetic) {
  AddArithmeticReduce<ReduceOp::kSum>(registry, "ReduceSum");
  AddArithmeticReduce<ReduceOp::kSumSquare>(registry, "ReduceSumSquare");
  AddArithmeticReduce<ReduceOp::kMean>(registry, "ReduceMean");
  AddArithmeticReduce<ReduceOp::kL1>(registry, "ReduceL1");
  AddArithmeticReduce<ReduceOp::kL2>(registry, "ReduceL2");
  AddArithmeticReduce<ReduceOp::kProd>(registry, "ReduceProd");
}

}  // namespace onnx_light
