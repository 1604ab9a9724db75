// Dropout (opsets 1-22). Inference (the default) passes the data through unchanged (the
// output aliases the input) with an all-kept mask. Training (training_mode input from
// opset 12, is_test = 0 before 7) keeps each element with probability 1 - ratio, drawn in
// element order from the node's seeded sequence, and scales kept ones by 1 / (1 - ratio).
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/random/random_engine.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace random {
namespace {

using DataTypes = TypeList<float, double, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ>;

template <typename T>
double AsDouble(const T& v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(v);
  else
    return v.ToDouble();
}

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(v);
  else
    return T::FromDouble(v);
}

class DropoutKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    opset_ = info.opset_version();
    OL_ASSIGN_OR_RETURN(float ratio, info.GetFloat("ratio", 0.5f));
    ratio_ = ratio;
    OL_ASSIGN_OR_RETURN(int64_t is_test, info.GetInt("is_test", 0));
    training_attr_ = opset_ < 7 && is_test == 0;
    float_mask_ = opset_ < 10;
    return seed_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    double ratio = ratio_;
    bool training = training_attr_;
    if (opset_ >= 12) {
      OL_RETURN_IF_ERROR(ReadRatio(ctx.input(1), &ratio));
      if (const Tensor* mode = ctx.input(2)) {
        if (mode->dtype() != DataType::kBool || mode->num_elements() != 1) {
          return InvalidArgument(where_, ": training_mode must be a bool scalar, got ", mode->TypeAndShape());
        }
        training = *mode->data<bool>();
      }
    }
    if (training && !(ratio >= 0.0 && ratio < 1.0)) {
      return InvalidArgument(where_, ": ratio must be in [0, 1) in training mode, got ", ratio);
    }
    const bool want_mask = ctx.num_outputs() > 1;
    if (!training) {
      OL_RETURN_IF_ERROR(ctx.SetOutput(0, Value(*x)));
      return want_mask ? WriteMask(ctx, x->shape(), x->dtype(), nullptr) : Status::Ok();
    }
    std::vector<uint8_t> kept(static_cast<size_t>(x->num_elements()));
    std::mt19937 engine = seed_.Engine();
    for (uint8_t& k : kept) k = Uniform01(engine) >= ratio;
    const double scale = 1.0 / (1.0 - ratio);
    OL_RETURN_IF_ERROR(DispatchType(DataTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      for (size_t i = 0; i < kept.size(); ++i) out[i] = FromDouble<T>(kept[i] ? AsDouble(in[i]) * scale : 0.0);
      return Status::Ok();
    }));
    return want_mask ? WriteMask(ctx, x->shape(), x->dtype(), kept.data()) : Status::Ok();
  }

 private:
  // Output 1: bool from opset 10, the data type before (1 = kept); `kept` null = all kept.
  Status WriteMask(KernelContext& ctx, const Shape& shape, DataType data_type, const uint8_t* kept) const {
    const DataType type = float_mask_ ? data_type : DataType::kBool;
    OL_ASSIGN_OR_RETURN(Tensor * mask, ctx.AllocateOutput(1, type, shape));
    const int64_t n = mask->num_elements();
    if (!float_mask_) {
      for (int64_t i = 0; i < n; ++i) mask->data<bool>()[i] = kept == nullptr || kept[i];
      return Status::Ok();
    }
    return DispatchType(DataTypes{}, type, where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < n; ++i) mask->data<T>()[i] = FromDouble<T>(kept == nullptr || kept[i] ? 1.0 : 0.0);
      return Status::Ok();
    });
  }

  Status ReadRatio(const Tensor* t, double* ratio) const {
    if (t == nullptr) return Status::Ok();
    if (t->num_elements() != 1) return InvalidArgument(where_, ": ratio must be a scalar, got ", t->TypeAndShape());
    return DispatchType(DataTypes{}, t->dtype(), where_, [&](auto tag) -> Status {
      *ratio = AsDouble(t->data<typename decltype(tag)::type>()[0]);
      return Status::Ok();
    });
  }

  std::string where_;
  int opset_ = 0;
  double ratio_ = 0.5;
  bool training_attr_ = false, float_mask_ = false;
  SeedPolicy seed_;
};

std::vector<DataType> DataTypesAt(int opset) {
  using D = DataType;
  std::vector<DataType> types = {D::kFloat, D::kDouble, D::kFloat16};
  if (opset >= 13) types.push_back(D::kBFloat16);
  if (opset >= 22)
    types.insert(types.end(), {D::kFloat8E4M3FN, D::kFloat8E4M3FNUZ, D::kFloat8E5M2, D::kFloat8E5M2FNUZ});
  return types;
}

OL_REGISTER_KERNELS(dropout) {
  KernelDef def;
  def.op = "Dropout";
  def.family = OL_KERNEL_FAMILY;
  def.factory = MakeKernel<DropoutKernel>();
  AddForOpsets(registry, def, {1, 6, 7, 10, 12, 13, 22}, DataTypesAt);
}

}  // namespace
}  // namespace random
}  // namespace onnx_light
