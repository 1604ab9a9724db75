// Activations (family math_unary): Sigmoid, HardSigmoid, Tanh, Relu, LeakyRelu, Elu, Selu,
// Celu, Gelu, HardSwish, Softplus, Softsign, Mish, Swish, ThresholdedRelu, Shrink; and ONNX
// Runtime's contrib Gelu and FastGelu (com.microsoft, opset 1: what graph_rewrites emits for
// a decomposed Gelu under opsets older than 20), served by the same Gelu paths.
// Formulas are the ONNX schemas', written in their overflow-free forms (Softplus(x) = x +
// log1p(e^-x) for x > 0, Sigmoid via e^-|x|).
#include <cmath>
#include <string>
#include <type_traits>

#include "native/kernels/elementwise/registration.h"
#include "native/kernels/elementwise/unary_kernel.h"
#include "native/kernels/elementwise/vector_math.h"

namespace onnx_light {
namespace elementwise {
namespace {

template <class C>
C StableSigmoid(C x) {
  const C e = std::exp(-std::fabs(x));
  return x >= 0 ? C(1) / (C(1) + e) : e / (C(1) + e);
}

template <class C>
C Softplus(C x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Clamps to [0, 1]; NaN stays NaN.
template <class C>
C UnitClamp(C v) {
  return v < C(0) ? C(0) : v > C(1) ? C(1) : v;
}

// An activation with one float attribute `alpha`.
template <int kDefaultNumerator, int kDefaultDenominator>
struct AlphaOp : UnaryOp {
  float alpha = static_cast<float>(kDefaultNumerator) / kDefaultDenominator;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(alpha, info.GetFloat("alpha", alpha));
    return Status::Ok();
  }
};

struct SigmoidOp : UnaryOp {
  using Types = FloatsBf;
  static constexpr bool kHasFloatSpan = true;
  void FloatSpan(const float* in, float* out, int64_t n) const { vector_math::Best().sigmoid(in, out, n); }
  template <class C>
  C operator()(C x) const {
    return StableSigmoid(x);
  }
};

struct TanhOp : UnaryOp {
  using Types = FloatsBf;
  static constexpr bool kHasFloatSpan = true;
  void FloatSpan(const float* in, float* out, int64_t n) const { vector_math::Best().tanh(in, out, n); }
  template <class C>
  C operator()(C x) const {
    return std::tanh(x);
  }
};

struct GeluOp : UnaryOp {
  using Types = FloatsBf;
  static constexpr bool kHasFloatSpan = true;
  bool tanh_approximation = false;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string approximate, info.GetString("approximate", "none"));
    if (approximate != "none" && approximate != "tanh") {
      return InvalidArgument(info.Where(), ": attribute approximate must be 'none' or 'tanh', got '", approximate, "'");
    }
    tanh_approximation = approximate == "tanh";
    return Status::Ok();
  }
  void FloatSpan(const float* in, float* out, int64_t n) const {
    const auto& kernels = vector_math::Best();
    (tanh_approximation ? kernels.gelu_tanh : kernels.gelu_erf)(in, out, n);
  }
  template <class C>
  C operator()(C x) const {
    if (tanh_approximation) {
      const C u = std::sqrt(C(2) / C(M_PI)) * (x + C(0.044715) * x * x * x);
      return x * StableSigmoid(2 * u);
    }
    return C(0.5) * x * std::erfc(-x * C(M_SQRT1_2));
  }
};

// com.microsoft FastGelu: Y = Gelu_tanh(X + bias), bias optional and 1-D of X's last
// dimension. Float only, as ONNX Runtime's CPU kernel. Each block adds the bias into the
// output and applies the tanh form in place (the same span ai.onnx Gelu's tanh form uses),
// so any split gives the same bits.
class FastGeluKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument(where_, ": input X must be float, got ", DataTypeName(x->dtype()));
    }
    const Tensor* bias = ctx.input(1);
    const int64_t width = x->shape().rank() > 0 ? x->shape()[x->shape().rank() - 1] : 1;
    if (bias != nullptr) {
      if (bias->dtype() != DataType::kFloat) {
        return InvalidArgument(where_, ": input bias must be float, got ", DataTypeName(bias->dtype()));
      }
      if (bias->shape().rank() != 1 || bias->shape()[0] != width || x->shape().rank() == 0) {
        return InvalidArgument(where_, ": bias must be 1-D of X's last dimension; X has shape ", x->shape().ToString(),
                               ", bias ", bias->shape().ToString());
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, x->shape()));
    const float* in = x->data<float>();
    const float* b = bias != nullptr ? bias->data<float>() : nullptr;
    float* out = y->data<float>();
    const auto gelu_tanh = vector_math::Best().gelu_tanh;
    return policy_.Run(ctx, "FastGelu", x->num_elements(), [&](int64_t begin, int64_t end) {
      if (b == nullptr) {
        gelu_tanh(in + begin, out + begin, end - begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) out[i] = in[i] + b[i % width];
      gelu_tanh(out + begin, out + begin, end - begin);
    });
  }

 private:
  std::string where_;
  ElementwisePolicy policy_;
};

struct ReluOp : UnaryOp {
  using Types = decltype(SignedInts{} + FloatsBf{});
  template <class C>
  C operator()(C x) const {
    return x > 0 ? x : (x != x ? x : C(0));
  }
};

struct LeakyReluOp : AlphaOp<1, 100> {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x < 0 ? C(alpha) * x : x;
  }
};

struct EluOp : AlphaOp<1, 1> {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x < 0 ? C(alpha) * std::expm1(x) : x;
  }
};

struct CeluOp : AlphaOp<1, 1> {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x > 0 ? x : C(alpha) * std::expm1(x / C(alpha));
  }
};

struct ThresholdedReluOp : AlphaOp<1, 1> {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x > C(alpha) ? x : C(0);
  }
};

struct SeluOp : UnaryOp {
  using Types = FloatsBf;
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(alpha, info.GetFloat("alpha", alpha));
    OL_ASSIGN_OR_RETURN(gamma, info.GetFloat("gamma", gamma));
    return Status::Ok();
  }
  template <class C>
  C operator()(C x) const {
    return x > 0 ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  }
};

struct HardSigmoidOp : UnaryOp {
  using Types = FloatsBf;
  float alpha = 0.2f;
  float beta = 0.5f;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(alpha, info.GetFloat("alpha", alpha));
    OL_ASSIGN_OR_RETURN(beta, info.GetFloat("beta", beta));
    return Status::Ok();
  }
  template <class C>
  C operator()(C x) const {
    return UnitClamp(C(alpha) * x + C(beta));
  }
};

struct HardSwishOp : UnaryOp {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x * UnitClamp(x / C(6) + C(0.5));
  }
};

struct SoftplusOp : UnaryOp {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return Softplus(x);
  }
};

struct SoftsignOp : UnaryOp {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x / (C(1) + std::fabs(x));
  }
};

struct MishOp : UnaryOp {
  using Types = FloatsBf;
  template <class C>
  C operator()(C x) const {
    return x * std::tanh(Softplus(x));
  }
};

struct SwishOp : AlphaOp<1, 1> {
  using Types = FloatsBf;
  static constexpr bool kHasFloatSpan = true;
  void FloatSpan(const float* in, float* out, int64_t n) const {
    float scaled[kConvertChunk];
    for (int64_t start = 0; start < n; start += kConvertChunk) {
      const int64_t m = std::min(kConvertChunk, n - start);
      for (int64_t i = 0; i < m; ++i) scaled[i] = alpha * in[start + i];
      vector_math::Best().sigmoid(scaled, scaled, m);
      for (int64_t i = 0; i < m; ++i) out[start + i] = in[start + i] * scaled[i];
    }
  }
  template <class C>
  C operator()(C x) const {
    return x * StableSigmoid(C(alpha) * x);
  }
};

// Integers (and floats) computed in double, converted back: x < -lambd ? x + bias :
// x > lambd ? x - bias : 0.
struct ShrinkOp : UnaryOp {
  using Types = Numbers;
  float bias = 0.0f;
  float lambd = 0.5f;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(bias, info.GetFloat("bias", bias));
    OL_ASSIGN_OR_RETURN(lambd, info.GetFloat("lambd", lambd));
    return Status::Ok();
  }
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      const double v = static_cast<double>(x);
      return SaturatingCast<C>(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
    } else {
      return x < C(-lambd) ? x + C(bias) : x > C(lambd) ? x - C(bias) : C(0);
    }
  }
};

OL_REGISTER_KERNELS(elementwise_activations) {
  const int64_t cheap = kCheapMinimumElements;
  const int64_t costly = kTranscendentalMinimumElements;
  auto classic22 = [] {
    return std::vector<OpsetTypes>{Since(1, Floats{}), Since(6, Floats{}), Since(22, FloatsBf{})};
  };
  auto since1_22 = [] { return std::vector<OpsetTypes>{Since(1, Floats{}), Since(22, FloatsBf{})}; };
  RegisterUnary<SigmoidOp>(registry, Kernel("Sigmoid").Opsets(ClassicFloatVersions()), costly);
  RegisterUnary<TanhOp>(registry, Kernel("Tanh").Opsets(ClassicFloatVersions()), costly);
  RegisterUnary<HardSigmoidOp>(registry, Kernel("HardSigmoid").Opsets(classic22()), cheap);
  auto relu = ClassicFloatVersions();
  relu.push_back(Since(14, ReluOp::Types{}));
  RegisterUnary<ReluOp>(registry, Kernel("Relu").Opsets(std::move(relu)), cheap);
  RegisterUnary<LeakyReluOp>(
      registry, Kernel("LeakyRelu").Opsets({Since(1, Floats{}), Since(6, Floats{}), Since(16, FloatsBf{})}), cheap);
  RegisterUnary<EluOp>(registry, Kernel("Elu").Opsets(classic22()), costly);
  RegisterUnary<SeluOp>(registry, Kernel("Selu").Opsets(classic22()), costly);
  RegisterUnary<CeluOp>(registry, Kernel("Celu").Opsets({Since(12, TypeList<float>{}), Since(28, FloatsBf{})}), costly);
  RegisterUnary<GeluOp>(registry, Kernel("Gelu").Opsets({Since(20, FloatsBf{})}), costly);
  // ONNX Runtime's contrib ops (no attributes: GeluOp's `approximate` keeps its default, erf).
  RegisterUnary<GeluOp>(registry, Kernel("Gelu").Domain("com.microsoft").Types(TypeList<float>{}), costly);
  Elementwise(Kernel("FastGelu").Domain("com.microsoft").Types(TypeList<float>{}), costly)
      .Factory(MakeKernel<FastGeluKernel>())
      .AddTo(registry);
  RegisterUnary<HardSwishOp>(registry, Kernel("HardSwish").Opsets({Since(14, Floats{}), Since(22, FloatsBf{})}), cheap);
  RegisterUnary<SoftplusOp>(registry, Kernel("Softplus").Opsets(since1_22()), costly);
  RegisterUnary<SoftsignOp>(registry, Kernel("Softsign").Opsets(since1_22()), cheap);
  RegisterUnary<MishOp>(registry, Kernel("Mish").Opsets({Since(18, Floats{}), Since(22, FloatsBf{})}), costly);
  RegisterUnary<SwishOp>(registry, Kernel("Swish").Opsets({Since(24, FloatsBf{})}), costly);
  RegisterUnary<ThresholdedReluOp>(
      registry, Kernel("ThresholdedRelu").Opsets({Since(10, Floats{}), Since(22, FloatsBf{})}), cheap);
  RegisterUnary<ShrinkOp>(registry, Kernel("Shrink").Opsets({Since(9, Numbers{})}), cheap);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
