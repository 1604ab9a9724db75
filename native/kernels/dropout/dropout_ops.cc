// Dropout as an inference runtime runs it: unless training_mode (opset 12+) is true with a
// non-zero ratio, the output is the input (aliased, no copy) and the optional mask is all
// ones (bool from opset 10, the data type before). Training with a non-zero ratio needs a
// random mask and is reported as not implemented.
#include <algorithm>
#include <cstring>

#include "native/core/narrow_float.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// The scalar at input `index` as double; absent or empty gives `fallback`.
StatusOr<double> ScalarOr(const KernelContext& ctx, int index, double fallback) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr || t->shape().num_elements() == 0) return fallback;
  switch (t->dtype()) {
    case DataType::kBool: return t->data<bool>()[0] ? 1.0 : 0.0;
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return t->data<double>()[0];
    case DataType::kFloat16: return HalfBitsToFloat(t->data<Float16>()[0].bits);
    default:
      return InvalidArgument(ctx.Where(), ": input ", index, " has unsupported type ", DataTypeName(t->dtype()));
  }
}

class DropoutKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    bool_mask_ = info.opset_version() >= 10;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(double ratio, ScalarOr(ctx, 1, 0.5));
    OL_ASSIGN_OR_RETURN(double training, ScalarOr(ctx, 2, 0.0));
    if (ratio < 0 || ratio >= 1) return InvalidArgument(ctx.Where(), ": ratio ", ratio, " is outside [0, 1)");
    if (training != 0 && ratio != 0) {
      return NotImplemented(ctx.Where(), ": training-mode dropout with ratio ", ratio, " (a random mask)");
    }
    OL_RETURN_IF_ERROR(ctx.SetOutput(0, Value(*x)));
    if (ctx.num_outputs() < 2) return Status::Ok();
    const DataType mask_type = bool_mask_ ? DataType::kBool : x->dtype();
    OL_ASSIGN_OR_RETURN(Tensor * mask, ctx.AllocateOutput(1, mask_type, x->shape()));
    if (bool_mask_) {
      std::fill_n(mask->data<bool>(), mask->shape().num_elements(), true);
    } else if (mask_type == DataType::kFloat) {
      std::fill_n(mask->data<float>(), mask->shape().num_elements(), 1.0f);
    } else if (mask_type == DataType::kDouble) {
      std::fill_n(mask->data<double>(), mask->shape().num_elements(), 1.0);
    } else {
      std::fill_n(mask->data<Float16>(), mask->shape().num_elements(), Float16::FromBits(FloatToHalfBits(1.0f)));
    }
    return Status::Ok();
  }

 private:
  bool bool_mask_ = true;
};

}  // namespace

OL_REGISTER_KERNELS(dropout_family) {
  const int spans[][2] = {{7, 9}, {10, 11}, {12, 12}, {13, 21}, {22, kOpenEnded}};
  for (const auto& span : spans) {
    KernelDef def;
    def.op = "Dropout";
    def.since_version = span[0];
    def.end_version = span[1];
    def.family = "dropout";
    def.element_types = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
    if (span[0] >= 13) def.element_types.push_back(DataType::kBFloat16);
    def.factory = MakeKernel<DropoutKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace onnx_light
