#include "native/kernels/controlflow/subgraph_util.h"

namespace onnx_light {
namespace controlflow {

StatusOr<SubgraphRunner*> Runner(KernelContext& ctx) {
  if (ctx.subgraphs() == nullptr) return Internal(ctx.Where(), ": needs a session to run its subgraphs");
  return ctx.subgraphs();
}

StatusOr<std::vector<Value>> RunBody(KernelContext& ctx, const Graph& body, const std::vector<Value>& inputs,
                                     size_t expected_outputs) {
  OL_ASSIGN_OR_RETURN(SubgraphRunner * runner, Runner(ctx));
  OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, runner->Run(body, inputs));
  if (outputs.size() != expected_outputs) {
    return InvalidArgument(ctx.Where(), ": subgraph '", body.name, "' returned ", outputs.size(), " values, expected ",
                           expected_outputs);
  }
  return outputs;
}

StatusOr<bool> ScalarBool(const KernelContext& ctx, const Value& value, const char* what) {
  if (!value.is_tensor() || value.tensor().dtype() != DataType::kBool || value.tensor().num_elements() != 1) {
    return InvalidArgument(ctx.Where(), ": ", what, " must be a bool tensor of one element, got ", value.Describe());
  }
  return *value.tensor().data<bool>();
}

StatusOr<int64_t> ScalarInt64(const KernelContext& ctx, const Value& value, const char* what) {
  if (!value.is_tensor() || value.tensor().num_elements() != 1 ||
      (value.tensor().dtype() != DataType::kInt64 && value.tensor().dtype() != DataType::kInt32)) {
    return InvalidArgument(ctx.Where(), ": ", what, " must be an int64 tensor of one element, got ", value.Describe());
  }
  const Tensor& t = value.tensor();
  return t.dtype() == DataType::kInt64 ? *t.data<int64_t>() : int64_t{*t.data<int32_t>()};
}

Status CheckCancelled(const KernelContext& ctx, int64_t iteration) {
  const CancellationToken* token = ctx.parallel().cancellation;
  if (token == nullptr || !token->IsCancelled()) return Status::Ok();
  return Cancelled(ctx.Where(), ": stopped at iteration ", iteration, ": ",
                   token->deadline_passed() ? "the run's timeout expired" : "the run was terminated");
}

StatusOr<Tensor> EmptyScanOutput(const KernelContext& ctx, const Graph& body, size_t output) {
  const std::string name = output < body.outputs.size() ? body.outputs[output].name : "";
  const DataType type = body.ElementTypeOf(name);
  if (type == DataType::kUndefined) {
    return InvalidArgument(ctx.Where(), ": ran no iteration and subgraph '", body.name,
                           "' does not declare the type of ", "its output ", output, " ('", name,
                           "'), so the empty scan output has no type");
  }
  std::vector<int64_t> dims = {0};
  const ValueInfo* info = body.FindValueInfo(name);
  if (info != nullptr && info->has_shape) {
    bool known = true;
    for (int64_t d : info->dims) known = known && d >= 0;
    if (known) dims.insert(dims.end(), info->dims.begin(), info->dims.end());
  }
  return Tensor::Allocate(type, Shape(dims), ctx.allocator());
}

}  // namespace controlflow
}  // namespace onnx_light
