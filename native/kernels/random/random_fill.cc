// RandomNormal, RandomUniform and their *Like forms: fill a tensor with draws in element
// order from one seeded sequence (family random: serial, see random_engine.h).
#include <string>
#include <vector>

#include "native/kernels/random/random_engine.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace random {
namespace {

enum class Distribution { kNormal, kUniform };

template <Distribution D>
class RandomFillKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    like_ = info.op().size() > 4 && info.op().compare(info.op().size() - 4, 4, "Like") == 0;
    OL_RETURN_IF_ERROR(seed_.Init(info));
    if (D == Distribution::kNormal) {
      OL_ASSIGN_OR_RETURN(a_, info.GetFloat("mean", 0.0f));
      OL_ASSIGN_OR_RETURN(b_, info.GetFloat("scale", 1.0f));
    } else {
      OL_ASSIGN_OR_RETURN(a_, info.GetFloat("low", 0.0f));
      OL_ASSIGN_OR_RETURN(b_, info.GetFloat("high", 1.0f));
    }
    OL_ASSIGN_OR_RETURN(int64_t dtype, info.GetInt("dtype", like_ ? 0 : static_cast<int64_t>(DataType::kFloat)));
    if (dtype != 0 && !IsValidDataType(static_cast<int32_t>(dtype))) {
      return InvalidArgument(where_, ": dtype ", dtype, " is not an ONNX element type");
    }
    dtype_ = static_cast<DataType>(dtype);
    if (!like_) {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, info.GetInts("shape"));
      auto shape = Shape::Create(dims);
      if (!shape.ok()) return InvalidArgument(where_, ": bad shape attribute: ", shape.status().ToString());
      shape_ = *shape;
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    Shape shape = shape_;
    DataType type = dtype_;
    if (like_) {
      OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
      shape = input->shape();
      if (type == DataType::kUndefined) type = input->dtype();
    }
    return DispatchType(FloatOutputs{}, type, where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, type, shape));
      T* o = out->data<T>();
      std::mt19937 engine = seed_.Engine();
      NormalSource normal;
      for (int64_t i = 0; i < out->num_elements(); ++i) {
        const double v =
            D == Distribution::kNormal ? a_ + b_ * normal.Next(engine) : a_ + (b_ - a_) * Uniform01(engine);
        o[i] = StoreAs<T>(v);
      }
      return Status::Ok();
    });
  }

 private:
  std::string where_;
  bool like_ = false;
  SeedPolicy seed_;
  double a_ = 0, b_ = 1;
  DataType dtype_ = DataType::kFloat;
  Shape shape_;
};

// T1 of the *Like ops: any numeric, bool, string or complex tensor.
std::vector<DataType> LikeInputTypesAt(int opset) {
  return TensorTypesAt(opset, TensorTypeSet{true, true, true, /*float8=*/false, /*sub_byte=*/false});
}

void RegisterFill(KernelRegistry& registry, const char* op, KernelFactory factory, bool like) {
  KernelDef def;
  def.op = op;
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = like ? 0 : -1;
  def.factory = std::move(factory);
  AddForOpsets(registry, def, {1, 22}, like ? LikeInputTypesAt : std::function<std::vector<DataType>(int)>());
}

OL_REGISTER_KERNELS(random_fill) {
  RegisterFill(registry, "RandomNormal", MakeKernel<RandomFillKernel<Distribution::kNormal>>(), false);
  RegisterFill(registry, "RandomUniform", MakeKernel<RandomFillKernel<Distribution::kUniform>>(), false);
  RegisterFill(registry, "RandomNormalLike", MakeKernel<RandomFillKernel<Distribution::kNormal>>(), true);
  RegisterFill(registry, "RandomUniformLike", MakeKernel<RandomFillKernel<Distribution::kUniform>>(), true);
}

}  // namespace
}  // namespace random
}  // namespace onnx_light
