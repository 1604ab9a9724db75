#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {

std::vector<ParamSpec> ReductionTuningParams(int64_t minimum_elements) {
  return {
      MinimumElementsParam(minimum_elements, "input elements below which the reduction runs serially"),
      ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                       "smallest parallel block, in input elements read"),
      ParamSpec::Int64("algorithm.partial_chunk_elements", 8192, 64, int64_t{1} << 40,
                       "contiguous elements reduced per partial; fixes the summation order"),
  };
}

StatusOr<ReduceTuning> ReadReductionTuning(const KernelInfo& info) {
  ReduceTuning t{};
  OL_RETURN_IF_ERROR(t.parallel.Init(info));
  OL_ASSIGN_OR_RETURN(t.chunk_elements, info.tuning().Int64("algorithm.partial_chunk_elements"));
  return t;
}

Status ReduceAxesSource::Init(const KernelInfo& info, int axes_input_since) {
  from_input = info.opset_version() >= axes_input_since;
  if (from_input) {
    OL_ASSIGN_OR_RETURN(int64_t noop, info.GetInt("noop_with_empty_axes", 0));
    noop_with_empty_axes = noop != 0;
  } else {
    OL_ASSIGN_OR_RETURN(attribute, info.GetInts("axes", {}));
  }
  return Status::Ok();
}

StatusOr<std::vector<int>> ReduceAxesSource::Resolve(const KernelContext& ctx, const Shape& shape, bool* noop) const {
  std::vector<int64_t> raw = attribute;
  if (from_input) {
    OL_ASSIGN_OR_RETURN(raw, ReadInt64Input(ctx, 1, "axes"));
  }
  *noop = raw.empty() && noop_with_empty_axes;
  if (raw.empty()) {
    std::vector<int> all(shape.rank());
    for (int d = 0; d < shape.rank(); ++d) all[d] = d;
    return all;
  }
  return NormalizeAxes(raw, shape, ctx.Where());
}

std::vector<DataType> ReduceTypesOpset1() {
  return {DataType::kUint32,  DataType::kUint64, DataType::kInt32, DataType::kInt64,
          DataType::kFloat16, DataType::kFloat,  DataType::kDouble};
}

std::vector<DataType> ReduceTypesOpset13() {
  auto types = ReduceTypesOpset1();
  types.push_back(DataType::kBFloat16);
  return types;
}

std::vector<DataType> ExtremeTypes(int opset) {
  auto types = opset >= 13 ? ReduceTypesOpset13() : ReduceTypesOpset1();
  if (opset >= 12) {
    types.push_back(DataType::kUint8);
    types.push_back(DataType::kInt8);
  }
  if (opset >= 20) types.push_back(DataType::kBool);
  return types;
}

}  // namespace onnx_light
