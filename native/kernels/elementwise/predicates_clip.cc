// IsNaN, IsInf, Not, BitwiseNot and Clip (family math_unary).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "native/kernels/elementwise/registration.h"
#include "native/kernels/elementwise/unary_kernel.h"

namespace onnx_light {
namespace elementwise {
namespace {

struct Predicate : UnaryOp {
  template <typename T>
  using Out = bool;
};

// Float8 formats decode to float: the fn/fnuz formats have no infinities, so IsInf is false.
struct IsNaNOp : Predicate {
  using Types = decltype(FloatsBf{} + Float8s{});
  template <class C>
  bool operator()(C x) const {
    return x != x;
  }
};

struct IsInfOp : Predicate {
  using Types = decltype(FloatsBf{} + Float8s{});
  bool positive = true;
  bool negative = true;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t p, info.GetInt("detect_positive", 1));
    OL_ASSIGN_OR_RETURN(int64_t n, info.GetInt("detect_negative", 1));
    positive = p != 0;
    negative = n != 0;
    return Status::Ok();
  }
  template <class C>
  bool operator()(C x) const {
    return (positive && x == std::numeric_limits<C>::infinity()) ||
           (negative && x == -std::numeric_limits<C>::infinity());
  }
};

struct NotOp : UnaryOp {
  using Types = TypeList<bool>;
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNotOp : UnaryOp {
  using Types = Ints;
  template <class C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

// Clip: bounds from attributes min/max before opset 11, from optional scalar inputs 1 and
// 2 since. y = min(max(x, lo), hi), so lo > hi gives hi everywhere (as the spec says) and
// NaN stays NaN.
using ClipTypes = NumbersBf;

class ClipKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    bounds_from_attributes_ = info.opset_version() < 11;
    if (bounds_from_attributes_) {
      OL_ASSIGN_OR_RETURN(attribute_min_, info.GetFloat("min", std::numeric_limits<float>::lowest()));
      OL_ASSIGN_OR_RETURN(attribute_max_, info.GetFloat("max", std::numeric_limits<float>::max()));
    }
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    return DispatchType(ClipTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      C lo = std::numeric_limits<C>::lowest();
      C hi = std::numeric_limits<C>::max();
      if (bounds_from_attributes_) {
        lo = static_cast<C>(attribute_min_);
        hi = static_cast<C>(attribute_max_);
      } else {
        OL_RETURN_IF_ERROR(ReadBound<T>(ctx, 1, &lo));
        OL_RETURN_IF_ERROR(ReadBound<T>(ctx, 2, &hi));
      }
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, kDataTypeOf<T>, x->shape()));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return policy_.Run(ctx, "Clip", x->num_elements(), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const C v = Load(in[i]);
          const C low = v < lo ? lo : v;
          out[i] = Store<T>(low > hi ? hi : low);
        }
      });
    });
  }

 private:
  // An optional bound input: absent or empty-named leaves the default; otherwise it must
  // be one element of x's type.
  template <typename T, typename C>
  Status ReadBound(const KernelContext& ctx, int index, C* bound) const {
    const Tensor* t = ctx.input(index);
    if (t == nullptr) return Status::Ok();
    if (t->dtype() != kDataTypeOf<T>) {
      return InvalidArgument(where_, ": bound ", index, " must have the input's element type ",
                             DataTypeName(kDataTypeOf<T>), ", got ", t->TypeAndShape());
    }
    if (t->num_elements() != 1) {
      return InvalidArgument(where_, ": bound ", index, " must be a scalar, got ", t->TypeAndShape());
    }
    *bound = Load(t->data<T>()[0]);
    return Status::Ok();
  }

  std::string where_;
  bool bounds_from_attributes_ = false;
  float attribute_min_ = 0, attribute_max_ = 0;
  ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(elementwise_predicates_clip) {
  const int64_t cheap = kCheapMinimumElements;
  RegisterUnary<IsNaNOp>(
      registry, Kernel("IsNaN").Opsets({Since(9, Floats{}), Since(13, FloatsBf{}), Since(20, IsNaNOp::Types{})}),
      cheap);
  RegisterUnary<IsInfOp>(
      registry, Kernel("IsInf").Opsets({Since(10, TypeList<float, double>{}), Since(20, IsInfOp::Types{})}), cheap);
  RegisterUnary<NotOp>(registry, Kernel("Not").Opsets({Since(1, TypeList<bool>{})}), cheap);
  RegisterUnary<BitwiseNotOp>(registry, Kernel("BitwiseNot").Opsets({Since(18, Ints{})}), cheap);
  Elementwise(Kernel("Clip").Opsets({Since(1, Floats{}), Since(6, Floats{}), Since(11, Floats{}), Since(12, Numbers{}),
                                     Since(13, NumbersBf{})}),
              cheap)
      .Factory(MakeKernel<ClipKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
