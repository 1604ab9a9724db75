// Binarizer and ArrayFeatureExtractor (ai.onnx.ml, opset 1): single passes over small
// feature tensors, serial (family ml_simple: no ParallelFor).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace ml {
namespace {

constexpr char kDomain[] = "ai.onnx.ml";

// Y = X > threshold ? 1 : 0, in X's type.
class BinarizerKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(threshold_, info.GetFloat("threshold", 0.0f));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    return DispatchType(TypeList<float, double, int64_t, int32_t>{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        y->data<T>()[i] = static_cast<double>(x->data<T>()[i]) > static_cast<double>(threshold_) ? T(1) : T(0);
      }
      return Status::Ok();
    });
  }

 private:
  std::string where_;
  float threshold_ = 0;
};

// Y[..., j] = X[..., indices[j]] over X's last axis; a 1-D X gives [1, len(indices)].
class ArrayFeatureExtractorKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    if (indices->dtype() != DataType::kInt64) {
      return InvalidArgument(where_, ": indices must be int64, got ", indices->TypeAndShape());
    }
    if (x->shape().rank() < 1) return InvalidArgument(where_, ": X must have rank >= 1, got ", x->TypeAndShape());
    const int64_t features = x->shape().dim(x->shape().rank() - 1);
    const int64_t picks = indices->num_elements();
    const int64_t* index = indices->data<int64_t>();
    for (int64_t j = 0; j < picks; ++j) {
      if (index[j] < 0 || index[j] >= features) {
        return InvalidArgument(where_, ": index ", index[j], " is outside the last axis of ", x->TypeAndShape());
      }
    }
    std::vector<int64_t> dims = x->shape().dims();
    if (dims.size() == 1) dims.insert(dims.begin(), 1);
    dims.back() = picks;
    const int64_t rows = features == 0 ? 0 : x->num_elements() / features;
    return DispatchType(TypeList<float, double, int64_t, int32_t, std::string>{}, x->dtype(), where_,
                        [&](auto tag) -> Status {
                          using T = typename decltype(tag)::type;
                          OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(dims)));
                          for (int64_t r = 0; r < rows; ++r) {
                            for (int64_t j = 0; j < picks; ++j)
                              y->data<T>()[r * picks + j] = x->data<T>()[r * features + index[j]];
                          }
                          return Status::Ok();
                        });
  }

 private:
  std::string where_;
};

OL_REGISTER_KERNELS(ml_feature_ops) {
  Kernel("Binarizer")
      .Domain(kDomain)
      .Types({DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32})
      .Factory(MakeKernel<BinarizerKernel>())
      .AddTo(registry);
  Kernel("ArrayFeatureExtractor")
      .Domain(kDomain)
      .Types({DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32, DataType::kString})
      .Factory(MakeKernel<ArrayFeatureExtractorKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
