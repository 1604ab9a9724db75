// Pow with mixed base and exponent types (family math_binary).
//
// Both integer: exact repeated squaring, wrapping on overflow; a negative exponent gives
// 1 / base^-e truncated (1 for base 1, +-1 for base -1, else 0; 0^-e = 0, documented).
// Otherwise the power is computed in double when the base is an integer or either side
// is double, else in float; integer results convert with SaturatingCast.
#include <cmath>
#include <type_traits>

#include "native/kernels/elementwise/binary_kernel.h"
#include "native/kernels/elementwise/registration.h"

namespace onnx_light {
namespace elementwise {
namespace {

template <class B, class E>
B IntegerPower(B base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<B>) {
        if (base == -1) return (exponent & 1) ? B(-1) : B(1);
      }
      return 0;
    }
  }
  uint64_t e = static_cast<uint64_t>(exponent);
  B result = 1;
  while (e != 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

struct PowOp : NoAttributes {
  template <class B, class E>
  B operator()(B base, E exponent) const {
    if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
      return IntegerPower(base, exponent);
    } else if constexpr (std::is_integral_v<B>) {
      return SaturatingCast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    } else if constexpr (std::is_same_v<B, double> || std::is_same_v<E, double>) {
      return static_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    } else {
      return std::pow(base, static_cast<float>(exponent));
    }
  }
};

using BaseTypes = TypeList<int32_t, int64_t, Float16, float, double, BFloat16>;

class PowKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_RETURN_IF_ERROR(legacy_.Init(info));
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(BroadcastPlan plan, legacy_.Plan(*a, *b, where_));
    return DispatchType(BaseTypes{}, a->dtype(), where_, [&](auto base_tag) -> Status {
      using B = typename decltype(base_tag)::type;
      return DispatchType(NumbersBf{}, b->dtype(), where_, [&](auto exponent_tag) -> Status {
        using E = typename decltype(exponent_tag)::type;
        OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, kDataTypeOf<B>, plan.output_shape));
        return RunBinary(ctx, policy_, "Pow", PowOp{}, plan, a->data<B>(), b->data<E>(), out->data<B>());
      });
    });
  }

 private:
  std::string where_;
  LegacyBroadcast legacy_;
  ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(elementwise_pow) {
  using Base12 = TypeList<int32_t, int64_t, Float16, float, double>;
  Elementwise(Kernel("Pow").Opsets({Since(1, Floats{}), Since(7, Floats{}), Since(12, Base12{}), Since(13, BaseTypes{}),
                                    Since(15, BaseTypes{})}),
              kTranscendentalMinimumElements)
      .Factory(MakeKernel<PowKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
