// LRN (opsets 1, 13): y = x / (bias + alpha / size * sum of x^2 over the channel window
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta, in double. Output elements
// are split across participants (thresholded_parallel.h), each summing its own window in order.
#include <algorithm>
#include <cmath>
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/lrn_det/float_types.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace lrn_det {
namespace {

class LrnKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(size_, info.GetInt("size"));
    if (size_ < 1) return InvalidArgument(where_, ": size must be positive, got ", size_);
    OL_ASSIGN_OR_RETURN(float alpha, info.GetFloat("alpha", 1e-4f));
    OL_ASSIGN_OR_RETURN(float beta, info.GetFloat("beta", 0.75f));
    OL_ASSIGN_OR_RETURN(float bias, info.GetFloat("bias", 1.0f));
    alpha_ = alpha;
    beta_ = beta;
    bias_ = bias;
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->shape().rank() < 3) {
      return InvalidArgument(where_, ": input must be [N, C, D1, ...], got ", x->TypeAndShape());
    }
    const int64_t channels = x->shape()[1], inner = x->shape().SizeFrom(2);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    return DispatchType(FloatTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return policy_.Run(ctx.parallel(), "LRN", x->num_elements(), size_, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) {
          const int64_t c = (e / inner) % channels;
          const int64_t first = std::max<int64_t>(0, c - before), last = std::min(channels - 1, c + after);
          double square_sum = 0.0;
          for (int64_t k = first; k <= last; ++k) {
            const double v = Load(in[e + (k - c) * inner]);
            square_sum += v * v;
          }
          out[e] = Store<T>(Load(in[e]) / std::pow(bias_ + alpha_ / size_ * square_sum, beta_));
        }
      });
    });
  }

 private:
  std::string where_;
  int64_t size_ = 1;
  double alpha_ = 1e-4, beta_ = 0.75, bias_ = 1.0;
  ThresholdedParallel policy_;
};

OL_REGISTER_KERNELS(lrn) {
  Kernel("LRN")
      .SinceVersions({1, 13})
      .TypesAt([](int opset) { return FloatTypesAt(opset, 13); })
      .Tuning(WorkUnitTuning(65536, "output element"))
      .Calibratable()
      .Factory(MakeKernel<LrnKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace lrn_det
}  // namespace onnx_light
