// Where(condition, X, Y) with three-way broadcasting (family where).
#include <complex>
#include <string>
#include <type_traits>

#include "native/kernels/elementwise/broadcast.h"
#include "native/kernels/elementwise/registration.h"

namespace onnx_light {
namespace elementwise {
namespace {

using Where9Types = decltype(Numbers{} + TypeList<std::string, bool, std::complex<float>, std::complex<double>>{});
using Where16Types = decltype(Where9Types{} + TypeList<BFloat16>{});

// out[i] = c[i] ? x[i] : y[i] over one run; strides are 0 or 1. The all-contiguous case
// is a separate loop so that it vectorises (as a blend) for arithmetic T.
template <typename T>
void WhereSpan(const bool* c, int64_t sc, const T* x, int64_t sx, const T* y, int64_t sy, T* out, int64_t n) {
  if (sc == 1 && sx == 1 && sy == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
  } else if (sc == 1 && sx == 0 && sy == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? *x : *y;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

class WhereKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* condition, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequiredInput(2));
    if (condition->dtype() != DataType::kBool) {
      return InvalidArgument(where_, ": condition must be bool, got ", condition->TypeAndShape());
    }
    if (x->dtype() != y->dtype()) {
      return InvalidArgument(where_, ": X and Y must have one element type, got ", x->TypeAndShape(), " and ",
                             y->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast({condition->shape(), x->shape(), y->shape()}, where_));
    return DispatchType(Where16Types{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, kDataTypeOf<T>, plan.output_shape));
      const bool* c = condition->data<bool>();
      const T* xs = x->data<T>();
      const T* ys = y->data<T>();
      T* o = out->data<T>();
      return policy_.Run(ctx, "Where", plan.output_size, [&](int64_t begin, int64_t end) {
        ForEachRun(plan, begin, end, [&](int64_t at, const int64_t* offset, const int64_t* stride, int64_t n) {
          WhereSpan(c + offset[0], stride[0], xs + offset[1], stride[1], ys + offset[2], stride[2], o + at, n);
        });
      });
    });
  }

 private:
  std::string where_;
  ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(elementwise_where) {
  Elementwise(Kernel("Where").Opsets({Since(9, Where9Types{}), Since(16, Where16Types{})}), kCheapMinimumElements)
      .DispatchInput(1)
      .OutputMayOverwriteInput(1)
      .Calibratable(false)
      .Factory(MakeKernel<WhereKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
