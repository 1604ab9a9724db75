// Loop: body(iteration, cond, carried...) -> (cond, carried..., scan outputs...), while
// iteration < M and cond. Scan outputs are stacked along a new first axis.
#include "native/kernels/controlflow/axis_copy.h"
#include "native/kernels/controlflow/subgraph_util.h"

namespace onnx_light {
namespace controlflow {
namespace {

class Loop : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(body_, info.GetGraph("body"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const int num_carried = ctx.num_inputs() - 2;
    const int num_scans = ctx.num_outputs() - num_carried;
    if (num_carried < 0 || num_scans < 0) {
      return InvalidArgument(ctx.Where(), ": has ", ctx.num_inputs(), " inputs and ", ctx.num_outputs(),
                             " outputs; expected M, cond, N carried values and at least N outputs");
    }
    int64_t trip_count = INT64_MAX;
    if (const Value* m = ctx.input_value(0); m != nullptr && !m->is_none()) {
      OL_ASSIGN_OR_RETURN(trip_count, ScalarInt64(ctx, *m, "M (trip count)"));
    }
    bool cond = true;
    if (const Value* c = ctx.input_value(1); c != nullptr && !c->is_none()) {
      OL_ASSIGN_OR_RETURN(cond, ScalarBool(ctx, *c, "cond"));
    }
    std::vector<Value> carried(num_carried);
    for (int i = 0; i < num_carried; ++i) {
      if (ctx.input_value(2 + i) != nullptr) carried[i] = *ctx.input_value(2 + i);
    }
    std::vector<std::vector<Tensor>> scans(num_scans);
    int64_t iteration = 0;
    std::vector<Value> inputs(2 + num_carried);
    for (; iteration < trip_count && cond; ++iteration) {
      OL_RETURN_IF_ERROR(CheckCancelled(ctx, iteration));
      OL_ASSIGN_OR_RETURN(Tensor iteration_tensor, MakeScalar<int64_t>(iteration, ctx.allocator()));
      OL_ASSIGN_OR_RETURN(Tensor cond_tensor, MakeScalar<bool>(cond, ctx.allocator()));
      inputs[0] = Value(std::move(iteration_tensor));
      inputs[1] = Value(std::move(cond_tensor));
      for (int i = 0; i < num_carried; ++i) inputs[2 + i] = std::move(carried[i]);
      OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, RunBody(ctx, *body_, inputs, 1 + num_carried + num_scans));
      OL_ASSIGN_OR_RETURN(cond, ScalarBool(ctx, outputs[0], "the body's cond output"));
      for (int i = 0; i < num_carried; ++i) carried[i] = std::move(outputs[1 + i]);
      for (int k = 0; k < num_scans; ++k) {
        const Value& v = outputs[1 + num_carried + k];
        if (!v.is_tensor()) {
          return InvalidArgument(ctx.Where(), ": scan output ", k, " must be a tensor, got ", v.Describe());
        }
        scans[k].push_back(v.tensor());
      }
    }
    for (int i = 0; i < num_carried; ++i) OL_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(carried[i])));
    for (int k = 0; k < num_scans; ++k) {
      Tensor stacked;
      if (scans[k].empty()) {
        OL_ASSIGN_OR_RETURN(stacked, EmptyScanOutput(ctx, *body_, 1 + num_carried + k));
      } else {
        const Tensor& first = scans[k].front();
        auto result = axis_copy::Stack(scans[k], 0, first.dtype(), first.shape(), ctx.allocator());
        if (!result.ok()) return result.status().WithContext(StrCat(ctx.Where(), ": scan output ", k, ": "));
        stacked = std::move(result).value();
        ctx.RecordCopy();
      }
      OL_RETURN_IF_ERROR(ctx.SetOutput(num_carried + k, Value(std::move(stacked))));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> body_;
};

}  // namespace

OL_REGISTER_KERNELS(controlflow_loop) {
  // One def for every opset: M and cond were optional from the start; later versions add
  // sequence and optional carried values, which the kernel passes through untouched.
  KernelDef def;
  def.op = "Loop";
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = -1;
  def.factory = MakeKernel<Loop>();
  registry.Add(std::move(def));
}

}  // namespace controlflow
}  // namespace onnx_light
