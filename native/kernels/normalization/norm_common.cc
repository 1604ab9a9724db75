#include "native/kernels/normalization/norm_common.h"

namespace onnx_light {

std::vector<ParamSpec> NormTuningParams(int64_t minimum_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the normalization runs serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

KernelDef NormDef(std::string op, int since, int end, std::vector<DataType> types, KernelFactory factory,
                  int64_t minimum_elements) {
  KernelDef def;
  def.op = std::move(op);
  def.since_version = since;
  def.end_version = end;
  def.family = OL_KERNEL_FAMILY;
  def.element_types = std::move(types);
  def.dispatch_input = 0;
  def.tuning = NormTuningParams(minimum_elements);
  def.factory = std::move(factory);
  return def;
}

std::vector<DataType> NormFloatTypes(bool with_bfloat16) {
  std::vector<DataType> types = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  if (with_bfloat16) types.push_back(DataType::kBFloat16);
  return types;
}

}  // namespace onnx_light
