// Optional, OptionalHasElement, OptionalGetElement. An empty optional is a Value of kind
// kNone; an absent input (empty name) counts as empty too (opset 18 allows it).
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/sequence/sequence_util.h"

namespace onnx_light {
namespace sequence {
namespace {

class Optional : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (const Attribute* type = info.FindAttribute("type"); type != nullptr) {
      element_type_ = type->tp.element_type;
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    const Value* input = ctx.input_value(0);
    if (input == nullptr) return ctx.SetOutput(0, Value::None(element_type_).set_optional(true));
    Value out = *input;
    return ctx.SetOutput(0, std::move(out.set_optional(true)));
  }

 private:
  DataType element_type_ = DataType::kUndefined;
};

class OptionalHasElement : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    const Value* input = ctx.input_value(0);
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kBool, Shape()));
    *out->data<bool>() = input != nullptr && !input->is_none();
    return Status::Ok();
  }
};

class OptionalGetElement : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    const Value* input = ctx.input_value(0);
    if (input == nullptr || input->is_none()) {
      return InvalidArgument(ctx.Where(), ": the optional input is empty");
    }
    Value out = *input;
    return ctx.SetOutput(0, std::move(out.set_optional(false)));
  }
};

}  // namespace

OL_REGISTER_KERNELS(sequence_optional) {
  // Opset 18 made the inputs optional and accepted plain tensors and sequences: a superset
  // that these kernels implement for every version.
  Kernel("Optional").Versions(15, kOpenEnded).DispatchInput(-1).Factory(MakeKernel<Optional>()).AddTo(registry);
  Kernel("OptionalHasElement")
      .Versions(15, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<OptionalHasElement>())
      .AddTo(registry);
  Kernel("OptionalGetElement")
      .Versions(15, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<OptionalGetElement>())
      .AddTo(registry);
}

}  // namespace sequence
}  // namespace onnx_light
