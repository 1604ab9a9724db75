// ReduceLogSum, ReduceLogSumExp (integer types dropped at opset 28).
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

template <ReduceOp Op>
void AddLogReduce(KernelRegistry& registry, const char* op) {
  const int64_t minimum = Op == ReduceOp::kLogSumExp ? kLogSumExpMinimum : kCheapReduceMinimum;
  Kernel(op)
      .SinceVersions({1, 11, 13, 18})
      .Until(27)
      .TypesAt([](int v) { return v >= 13 ? ReduceTypesOpset13() : ReduceTypesOpset1(); })
      .Tuning(ReductionTuningParams(minimum))
      .Factory(MakeKernel<ReduceKernel<Op, ReduceNumericTypes>>())
      .AddTo(registry);
  Kernel(op)
      .Versions(28, kOpenEnded)
      .Types({DataType::kBFloat16, DataType::kFloat16, DataType::kFloat, DataType::kDouble})
      .Tuning(ReductionTuningParams(minimum))
      .Factory(MakeKernel<ReduceKernel<Op, FloatTypes>>())
      .AddTo(registry);
}

}  // namespace

OL_REGISTER_KERNELS(reduction_log) {
  AddLogReduce<ReduceOp::kLogSum>(registry, "ReduceLogSum");
  AddLogReduce<ReduceOp::kLogSumExp>(registry, "ReduceLogSumExp");
}

}  // namespace onnx_light
