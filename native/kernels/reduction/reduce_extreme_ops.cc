// ReduceMax, ReduceMin (uint8/int8 from opset 12, bool from opset 20).
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

using ExtremeTypeList =
    TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double, BFloat16, uint8_t, int8_t, bool>;

template <ReduceOp Op>
void AddExtremeReduce(KernelRegistry& registry, const char* op) {
  Kernel(op)
      .SinceVersions({1, 11, 12, 13, 18, 20})
      .TypesAt(ExtremeTypes)
      .Tuning(ReductionTuningParams(kExtremeReduceMinimum))
      .Factory(MakeKernel<ReduceKernel<Op, ExtremeTypeList>>())
      .AddTo(registry);
}

}  // namespace

OL_REGISTER_KERNELS(reduction_extreme) {
  AddExtremeReduce<ReduceOp::kMax>(registry, "ReduceMax");
  AddExtremeReduce<ReduceOp::kMin>(registry, "ReduceMin");
}

}  // namespace onnx_light
