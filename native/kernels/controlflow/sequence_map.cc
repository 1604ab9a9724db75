// SequenceMap: applies its body to each element of a sequence (and the matching element
// of every additional sequence input; tensor inputs are passed whole to every iteration),
// collecting each body output into a sequence.
#include "native/kernels/controlflow/subgraph_util.h"

namespace onnx_light {
namespace controlflow {
namespace {

class SequenceMap : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(body_, info.GetGraph("body"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const Value* sequence = ctx.input_value(0);
    if (sequence == nullptr || !sequence->is_sequence()) {
      return InvalidArgument(ctx.Where(), ": input 0 must be a sequence, got ",
                             sequence ? sequence->Describe() : "nothing");
    }
    const size_t length = sequence->items().size();
    for (int j = 1; j < ctx.num_inputs(); ++j) {
      const Value* extra = ctx.input_value(j);
      if (extra == nullptr) return InvalidArgument(ctx.Where(), ": input ", j, " is absent");
      if (extra->is_sequence() && extra->items().size() != length) {
        return InvalidArgument(ctx.Where(), ": input ", j, " is a sequence of ", extra->items().size(),
                               " tensors, input 0 of ", length);
      }
    }
    std::vector<std::vector<Value>> collected(ctx.num_outputs());
    std::vector<Value> inputs(ctx.num_inputs());
    for (size_t i = 0; i < length; ++i) {
      OL_RETURN_IF_ERROR(CheckCancelled(ctx, static_cast<int64_t>(i)));
      inputs[0] = sequence->items()[i];
      for (int j = 1; j < ctx.num_inputs(); ++j) {
        const Value& extra = *ctx.input_value(j);
        inputs[j] = extra.is_sequence() ? extra.items()[i] : extra;
      }
      OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, RunBody(ctx, *body_, inputs, ctx.num_outputs()));
      for (int k = 0; k < ctx.num_outputs(); ++k) {
        if (!outputs[k].is_tensor()) {
          return InvalidArgument(ctx.Where(), ": body output ", k, " must be a tensor, got ", outputs[k].Describe());
        }
        collected[k].push_back(std::move(outputs[k]));
      }
    }
    for (int k = 0; k < ctx.num_outputs(); ++k) {
      DataType type = DataType::kUndefined;
      if (static_cast<size_t>(k) < body_->outputs.size()) type = body_->ElementTypeOf(body_->outputs[k].name);
      OL_RETURN_IF_ERROR(ctx.SetOutput(k, Value::Sequence(std::move(collected[k]), type)));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> body_;
};

}  // namespace

OL_REGISTER_KERNELS(controlflow_sequence_map) {
  KernelDef def;
  def.op = "SequenceMap";
  def.since_version = 17;
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = -1;
  def.factory = MakeKernel<SequenceMap>();
  registry.Add(std::move(def));
}

}  // namespace controlflow
}  // namespace onnx_light
