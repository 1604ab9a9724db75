// ReduceSum, ReduceSumSquare, ReduceMean, ReduceL1, ReduceL2, ReduceProd.
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

template <ReduceOp Op>
void AddArithmeticReduce(KernelRegistry& registry, const char* op) {
  // axes became an input at opset 13 for ReduceSum, at 18 for the others.
  Kernel(op)
      .SinceVersions(Op == ReduceOp::kSum ? std::vector<int>{1, 11, 13} : std::vector<int>{1, 11, 13, 18})
      .TypesAt([](int v) { return v >= 13 ? ReduceTypesOpset13() : ReduceTypesOpset1(); })
      .Tuning(ReductionTuningParams(kCheapReduceMinimum))
      .Factory(MakeKernel<ReduceKernel<Op, ReduceNumericTypes>>())
      .AddTo(registry);
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
