// ReduceMax, ReduceMin (uint8/int8 from opset 12, bool from opset 20).
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

using ExtremeTypeList =
    TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double, BFloat16, uint8_t, int8_t, bool>;

template <ReduceOp Op>
void AddExtremeReduce(KernelRegistry& registry, const char* op) {
  using Kernel = ReduceKernel<Op, ExtremeTypeList>;
  const int spans[][2] = {{1, 10}, {11, 11}, {12, 12}, {13, 17}, {18, 19}, {20, kOpenEnded}};
  for (const auto& span : spans) {
    registry.Add(
        ReductionDef(op, span[0], span[1], ExtremeTypes(span[0]), MakeKernel<Kernel>(), kExtremeReduceMinimum));
  }
}

}  // namespace

OL_REGISTER_KERNELS(reduction_extreme) {
  AddExtremeReduce<ReduceOp::kMax>(registry, "ReduceMax");
  AddExtremeReduce<ReduceOp::kMin>(registry, "ReduceMin");
}

}  // namespace onnx_light
