// Unary math (family math_unary): Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round,
// Sign, Erf and the trigonometric and hyperbolic functions. Integer Abs and Neg wrap
// (Abs(INT_MIN) = INT_MIN); Round is half to even.
#include <cmath>
#include <type_traits>

#include "native/kernels/elementwise/registration.h"
#include "native/kernels/elementwise/unary_kernel.h"
#include "native/kernels/elementwise/vector_math.h"

namespace onnx_light {
namespace elementwise {
namespace {

struct AbsOp : UnaryOp {
  using Types = NumbersBf;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? WrapNeg(x) : x;
    else
      return std::fabs(x);
  }
};

struct NegOp : UnaryOp {
  using Types = decltype(SignedInts{} + FloatsBf{});
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return WrapNeg(x);
    else
      return -x;
  }
};

struct SignOp : UnaryOp {
  using Types = NumbersBf;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>((x > 0) - (x < 0));
    else
      return x > 0 ? C(1) : x < 0 ? C(-1) : x;  // keeps NaN and signed zero
  }
};

struct ExpOp : UnaryOp {
  using Types = FloatsBf;
  static constexpr bool kHasFloatSpan = true;
  void FloatSpan(const float* in, float* out, int64_t n) const { vector_math::Best().exp(in, out, n); }
  template <class C>
  C operator()(C x) const {
    return std::exp(x);
  }
};

// Erf of an integer (opset 9) is the truncated erf of its value.
struct ErfOp : UnaryOp {
  using Types = NumbersBf;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return SaturatingCast<C>(std::erf(static_cast<double>(x)));
    else
      return std::erf(x);
  }
};

// Float-only functions of one argument, each a libm call on the compute type.
#define OL_FLOAT_FUNCTION(Name, expression) \
  struct Name##Op : UnaryOp {               \
    using Types = FloatsBf;                 \
    template <class C>                      \
    C operator()(C x) const {               \
      return expression;                    \
    }                                       \
  };
OL_FLOAT_FUNCTION(Log, std::log(x))
OL_FLOAT_FUNCTION(Sqrt, std::sqrt(x))
OL_FLOAT_FUNCTION(Reciprocal, C(1) / x)
OL_FLOAT_FUNCTION(Floor, std::floor(x))
OL_FLOAT_FUNCTION(Ceil, std::ceil(x))
OL_FLOAT_FUNCTION(Round, std::nearbyint(x))
OL_FLOAT_FUNCTION(Sin, std::sin(x))
OL_FLOAT_FUNCTION(Cos, std::cos(x))
OL_FLOAT_FUNCTION(Tan, std::tan(x))
OL_FLOAT_FUNCTION(Asin, std::asin(x))
OL_FLOAT_FUNCTION(Acos, std::acos(x))
OL_FLOAT_FUNCTION(Atan, std::atan(x))
OL_FLOAT_FUNCTION(Sinh, std::sinh(x))
OL_FLOAT_FUNCTION(Cosh, std::cosh(x))
OL_FLOAT_FUNCTION(Asinh, std::asinh(x))
OL_FLOAT_FUNCTION(Acosh, std::acosh(x))
OL_FLOAT_FUNCTION(Atanh, std::atanh(x))
#undef OL_FLOAT_FUNCTION

OL_REGISTER_KERNELS(elementwise_unary_math) {
  const int64_t cheap = kCheapMinimumElements;
  const int64_t costly = kTranscendentalMinimumElements;
  RegisterUnary<AbsOp>(registry,
                       Kernel("Abs").Opsets({Since(1, Floats{}), Since(6, Numbers{}), Since(13, NumbersBf{})}), cheap);
  using Neg6 = decltype(SignedInts{} + Floats{});
  RegisterUnary<NegOp>(registry,
                       Kernel("Neg").Opsets({Since(1, Floats{}), Since(6, Neg6{}), Since(13, NegOp::Types{})}), cheap);
  RegisterUnary<ExpOp>(registry, Kernel("Exp").Opsets(ClassicFloatVersions()), costly);
  RegisterUnary<LogOp>(registry, Kernel("Log").Opsets(ClassicFloatVersions()), costly);
  RegisterUnary<SqrtOp>(registry, Kernel("Sqrt").Opsets(ClassicFloatVersions()), cheap);
  RegisterUnary<ReciprocalOp>(registry, Kernel("Reciprocal").Opsets(ClassicFloatVersions()), cheap);
  RegisterUnary<FloorOp>(registry, Kernel("Floor").Opsets(ClassicFloatVersions()), cheap);
  RegisterUnary<CeilOp>(registry, Kernel("Ceil").Opsets(ClassicFloatVersions()), cheap);
  RegisterUnary<RoundOp>(registry, Kernel("Round").Opsets({Since(11, Floats{}), Since(22, FloatsBf{})}), cheap);
  RegisterUnary<SignOp>(registry, Kernel("Sign").Opsets({Since(9, Numbers{}), Since(13, NumbersBf{})}), cheap);
  RegisterUnary<ErfOp>(registry, Kernel("Erf").Opsets({Since(9, Numbers{}), Since(13, FloatsBf{})}), costly);
  auto trig = [] { return std::vector<OpsetTypes>{Since(7, Floats{}), Since(22, FloatsBf{})}; };
  RegisterUnary<SinOp>(registry, Kernel("Sin").Opsets(trig()), costly);
  RegisterUnary<CosOp>(registry, Kernel("Cos").Opsets(trig()), costly);
  RegisterUnary<TanOp>(registry, Kernel("Tan").Opsets(trig()), costly);
  RegisterUnary<AsinOp>(registry, Kernel("Asin").Opsets(trig()), costly);
  RegisterUnary<AcosOp>(registry, Kernel("Acos").Opsets(trig()), costly);
  RegisterUnary<AtanOp>(registry, Kernel("Atan").Opsets(trig()), costly);
  auto hyperbolic = [] { return std::vector<OpsetTypes>{Since(9, Floats{}), Since(22, FloatsBf{})}; };
  RegisterUnary<SinhOp>(registry, Kernel("Sinh").Opsets(hyperbolic()), costly);
  RegisterUnary<CoshOp>(registry, Kernel("Cosh").Opsets(hyperbolic()), costly);
  RegisterUnary<AsinhOp>(registry, Kernel("Asinh").Opsets(hyperbolic()), costly);
  RegisterUnary<AcoshOp>(registry, Kernel("Acosh").Opsets(hyperbolic()), costly);
  RegisterUnary<AtanhOp>(registry, Kernel("Atanh").Opsets(hyperbolic()), costly);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
