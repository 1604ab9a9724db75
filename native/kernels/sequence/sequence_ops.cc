// SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength: sequences share their tensors' buffers, so none of these copies data.
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/sequence/sequence_util.h"

namespace onnx_light {
namespace sequence {
namespace {

class SequenceEmpty : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t dtype, info.GetInt("dtype", static_cast<int64_t>(DataType::kFloat)));
    if (dtype <= 0 || !IsValidDataType(static_cast<int32_t>(dtype))) {
      return InvalidArgument(info.Where(), ": dtype ", dtype, " is not an ONNX element type");
    }
    type_ = static_cast<DataType>(dtype);
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override { return ctx.SetOutput(0, Value::Sequence({}, type_)); }

 private:
  DataType type_ = DataType::kFloat;
};

class SequenceConstruct : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    std::vector<Value> items;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(i));
      if (!items.empty() && t->dtype() != items.front().tensor().dtype()) {
        return InvalidArgument(ctx.Where(), ": input ", i, " is ", t->TypeAndShape(), " but input 0 is ",
                               items.front().tensor().TypeAndShape(), ": a sequence holds one element type");
      }
      items.push_back(Value(*t));
    }
    if (items.empty()) return InvalidArgument(ctx.Where(), ": needs at least one input");
    return ctx.SetOutput(0, Value::Sequence(std::move(items)));
  }
};

class SequenceAt : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    OL_ASSIGN_OR_RETURN(const Tensor* position, ctx.RequiredInput(1));
    const int64_t size = static_cast<int64_t>(seq->items().size());
    OL_ASSIGN_OR_RETURN(int64_t p, Position(ctx, *position, size, false));
    return ctx.SetOutput(0, seq->items()[p]);
  }
};

class SequenceInsert : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    OL_ASSIGN_OR_RETURN(const Tensor* tensor, ctx.RequiredInput(1));
    const DataType type = seq->element_type();
    if (type != DataType::kUndefined && tensor->dtype() != type) {
      return InvalidArgument(ctx.Where(), ": cannot insert ", tensor->TypeAndShape(), " into ", seq->Describe());
    }
    std::vector<Value> items = seq->items();
    int64_t p = static_cast<int64_t>(items.size());
    if (const Tensor* position = ctx.input(2); position != nullptr) {
      OL_ASSIGN_OR_RETURN(p, Position(ctx, *position, static_cast<int64_t>(items.size()), true));
    }
    items.insert(items.begin() + p, Value(*tensor));
    return ctx.SetOutput(0, Value::Sequence(std::move(items), tensor->dtype()));
  }
};

class SequenceErase : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    std::vector<Value> items = seq->items();
    const int64_t size = static_cast<int64_t>(items.size());
    if (size == 0) return InvalidArgument(ctx.Where(), ": cannot erase from an empty sequence");
    int64_t p = size - 1;
    if (const Tensor* position = ctx.input(1); position != nullptr) {
      OL_ASSIGN_OR_RETURN(p, Position(ctx, *position, size, false));
    }
    items.erase(items.begin() + p);
    return ctx.SetOutput(0, Value::Sequence(std::move(items), seq->element_type()));
  }
};

class SequenceLength : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, Shape()));
    *out->data<int64_t>() = static_cast<int64_t>(seq->items().size());
    return Status::Ok();
  }
};

}  // namespace

OL_REGISTER_KERNELS(sequence_ops) {
  // Each op has kept its semantics since opset 11; later versions only widen the types.
  Kernel("SequenceEmpty")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SequenceEmpty>())
      .AddTo(registry);
  Kernel("SequenceConstruct")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SequenceConstruct>())
      .AddTo(registry);
  Kernel("SequenceAt").Versions(11, kOpenEnded).DispatchInput(-1).Factory(MakeKernel<SequenceAt>()).AddTo(registry);
  Kernel("SequenceInsert")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SequenceInsert>())
      .AddTo(registry);
  Kernel("SequenceErase")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SequenceErase>())
      .AddTo(registry);
  Kernel("SequenceLength")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SequenceLength>())
      .AddTo(registry);
}

}  // namespace sequence
}  // namespace onnx_light
