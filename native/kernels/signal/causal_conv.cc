// CausalConvWithState (opset 27): a depthwise causal 1-D convolution that carries its last
// k-1 inputs as state for incremental decoding (Mamba, Gated DeltaNet). Each (batch,
// channel) row is independent and computed whole by one participant, in float for
// float16/bfloat16, so results never depend on the participant count.
#include <cmath>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/signal/signal_args.h"

namespace onnx_light {
namespace signal {
namespace {

template <typename T>
float LoadFloat(const T& v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return v.ToFloat();
}
template <typename T>
T StoreFloat(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return T::FromFloat(v);
}

class CausalConvWithStateKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string activation, info.GetString("activation", "none"));
    if (activation != "none" && activation != "silu" && activation != "swish") {
      return InvalidArgument(info.Where(), ": activation must be 'none', 'silu' or 'swish', got '", activation, "'");
    }
    silu_ = activation != "none";
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequiredInput(1));
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    if (x->shape().rank() != 3) {
      return InvalidArgument(ctx.Where(), ": input must be (batch, channels, length), got ", x->TypeAndShape());
    }
    const int64_t batch = x->shape().dim(0), channels = x->shape().dim(1), length = x->shape().dim(2);
    if (w->shape().rank() != 3 || w->shape().dim(0) != channels || w->shape().dim(1) != 1 || w->shape().dim(2) < 1) {
      return InvalidArgument(ctx.Where(), ": weight must be (", channels, ", 1, k) with k >= 1, got ",
                             w->TypeAndShape());
    }
    const int64_t k = w->shape().dim(2), carry = k - 1;
    for (const Tensor* t : {w, bias, past}) {
      if (t != nullptr && t->dtype() != x->dtype()) {
        return InvalidArgument(ctx.Where(), ": ", t->TypeAndShape(), " must have the input's type ",
                               DataTypeName(x->dtype()));
      }
    }
    if (bias != nullptr && bias->shape() != Shape({channels})) {
      return InvalidArgument(ctx.Where(), ": bias must be (", channels, "), got ", bias->TypeAndShape());
    }
    if (past != nullptr && past->shape() != Shape({batch, channels, carry})) {
      return InvalidArgument(ctx.Where(), ": past_state must be (", batch, ", ", channels, ", ", carry, "), got ",
                             past->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    OL_ASSIGN_OR_RETURN(Tensor * state, ctx.AllocateOutput(1, x->dtype(), Shape({batch, channels, carry})));
    return DispatchType(TypeList<float, Float16, BFloat16>{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x->data<T>();
      const T* weights = w->data<T>();
      const T* b = bias != nullptr ? bias->data<T>() : nullptr;
      const T* carried = past != nullptr ? past->data<T>() : nullptr;
      T* out = y->data<T>();
      T* present = state->data<T>();
      return policy_.Run(ctx.parallel(), "causal_conv.rows", batch * channels, length * k,
                         [&](int64_t begin, int64_t end) {
                           std::vector<float> padded(carry + length);  // this row's [past_state, input]
                           for (int64_t row = begin; row < end; ++row) {
                             const int64_t c = row % channels;
                             for (int64_t j = 0; j < carry; ++j)
                               padded[j] = carried != nullptr ? LoadFloat(carried[row * carry + j]) : 0.0f;
                             for (int64_t t = 0; t < length; ++t) padded[carry + t] = LoadFloat(in[row * length + t]);
                             const T* wc = weights + c * k;
                             const float shift = b != nullptr ? LoadFloat(b[c]) : 0.0f;
                             for (int64_t t = 0; t < length; ++t) {
                               float sum = shift;
                               for (int64_t j = 0; j < k; ++j) sum += LoadFloat(wc[j]) * padded[t + j];
                               if (silu_) sum = sum / (1.0f + std::exp(-sum));
                               out[row * length + t] = StoreFloat<T>(sum);
                             }
                             for (int64_t j = 0; j < carry; ++j)
                               present[row * carry + j] = StoreFloat<T>(padded[length + j]);
                           }
                         });
    });
  }

 private:
  bool silu_ = false;
  ThresholdedParallel policy_;
};

OL_REGISTER_KERNELS(causal_conv_with_state) {
  Kernel("CausalConvWithState")
      .Versions(27, kOpenEnded)
      .Types({DataType::kFloat, DataType::kFloat16, DataType::kBFloat16})
      .Tuning(WorkUnitTuning(32768, "output row"))
      .Factory(MakeKernel<CausalConvWithStateKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace signal
}  // namespace onnx_light
