// Bernoulli (draw 1 with probability p per element) and Multinomial (sample class
// indices from per-row unnormalised log-probabilities). Family random: serial, one
// seeded sequence per run drawn in element order (see random_engine.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "native/kernels/random/random_engine.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace random {
namespace {

using BernoulliOutputs = TypeList<float, double, Float16, BFloat16, uint8_t, uint16_t, uint32_t, uint64_t, int8_t,
                                  int16_t, int32_t, int64_t, bool>;

// Reads element i of a float-typed tensor as double.
StatusOr<std::vector<double>> ReadProbabilities(const Tensor& t, const std::string& where) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  Status s = DispatchType(FloatOutputs{}, t.dtype(), where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_arithmetic_v<T>)
        v[i] = t.data<T>()[i];
      else
        v[i] = t.data<T>()[i].ToDouble();
    }
    return Status::Ok();
  });
  if (!s.ok())
    return InvalidArgument(where, ": input must be float16, bfloat16, float or double, got ", t.TypeAndShape());
  return v;
}

class BernoulliKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t dtype, info.GetInt("dtype", 0));
    dtype_ = static_cast<DataType>(dtype);
    return seed_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(std::vector<double> p, ReadProbabilities(*input, where_));
    const DataType type = dtype_ == DataType::kUndefined ? input->dtype() : dtype_;
    return DispatchType(BernoulliOutputs{}, type, where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, type, input->shape()));
      T* o = out->data<T>();
      std::mt19937 engine = seed_.Engine();
      for (size_t i = 0; i < p.size(); ++i) o[i] = StoreAs<T>(Uniform01(engine) < p[i] ? 1.0 : 0.0);
      return Status::Ok();
    });
  }

 private:
  std::string where_;
  DataType dtype_ = DataType::kUndefined;
  SeedPolicy seed_;
};

class MultinomialKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t dtype, info.GetInt("dtype", static_cast<int64_t>(DataType::kInt32)));
    dtype_ = static_cast<DataType>(dtype);
    if (dtype_ != DataType::kInt32 && dtype_ != DataType::kInt64) {
      return InvalidArgument(where_, ": dtype must be int32 or int64, got ", dtype);
    }
    OL_ASSIGN_OR_RETURN(sample_size_, info.GetInt("sample_size", 1));
    if (sample_size_ < 0) return InvalidArgument(where_, ": sample_size must not be negative, got ", sample_size_);
    return seed_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    if (input->shape().rank() != 2 || input->shape()[1] < 1) {
      return InvalidArgument(where_, ": input must be [batch_size, class_size >= 1], got ", input->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(std::vector<double> logits, ReadProbabilities(*input, where_));
    const int64_t batch = input->shape()[0], classes = input->shape()[1];
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, dtype_, Shape{batch, sample_size_}));
    std::vector<double> cdf(static_cast<size_t>(classes));
    std::mt19937 engine = seed_.Engine();
    for (int64_t b = 0; b < batch; ++b) {
      const double* row = logits.data() + b * classes;
      const double top = *std::max_element(row, row + classes);
      double total = 0.0;
      for (int64_t c = 0; c < classes; ++c) cdf[c] = total += std::exp(row[c] - top);
      for (int64_t s = 0; s < sample_size_; ++s) {
        const double u = Uniform01(engine) * total;
        // First class whose cumulative weight exceeds u (the last one if rounding leaves none).
        const int64_t k = std::min<int64_t>(classes - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        if (dtype_ == DataType::kInt32)
          out->data<int32_t>()[b * sample_size_ + s] = static_cast<int32_t>(k);
        else
          out->data<int64_t>()[b * sample_size_ + s] = k;
      }
    }
    return Status::Ok();
  }

 private:
  std::string where_;
  DataType dtype_ = DataType::kInt32;
  int64_t sample_size_ = 1;
  SeedPolicy seed_;
};

std::vector<DataType> ProbabilityTypesAt(int opset) {
  if (opset >= 22) return {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16};
  return {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
}

OL_REGISTER_KERNELS(bernoulli_multinomial) {
  KernelDef def;
  def.family = OL_KERNEL_FAMILY;
  def.op = "Bernoulli";
  def.factory = MakeKernel<BernoulliKernel>();
  AddForOpsets(registry, def, {15, 22}, ProbabilityTypesAt);
  def.op = "Multinomial";
  def.factory = MakeKernel<MultinomialKernel>();
  AddForOpsets(registry, def, {7, 22}, ProbabilityTypesAt);
}

}  // namespace
}  // namespace random
}  // namespace onnx_light
