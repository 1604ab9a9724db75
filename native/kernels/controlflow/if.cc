// If: runs then_branch or else_branch (no inputs; they read outer-scope values).
#include "native/kernels/controlflow/subgraph_util.h"

namespace onnx_light {
namespace controlflow {
namespace {

class If : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(then_branch_, info.GetGraph("then_branch"));
    OL_ASSIGN_OR_RETURN(else_branch_, info.GetGraph("else_branch"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    if (ctx.input_value(0) == nullptr) return InvalidArgument(ctx.Where(), ": input 'cond' is required");
    OL_ASSIGN_OR_RETURN(bool cond, ScalarBool(ctx, *ctx.input_value(0), "cond"));
    const Graph& branch = cond ? *then_branch_ : *else_branch_;
    OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, RunBody(ctx, branch, {}, ctx.num_outputs()));
    for (int i = 0; i < ctx.num_outputs(); ++i) OL_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(outputs[i])));
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> then_branch_, else_branch_;
};

}  // namespace

OL_REGISTER_KERNELS(controlflow_if) {
  // One def for every opset: later versions only widen the types a branch may return.
  KernelDef def;
  def.op = "If";
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = -1;
  def.factory = MakeKernel<If>();
  registry.Add(std::move(def));
}

}  // namespace controlflow
}  // namespace onnx_light
