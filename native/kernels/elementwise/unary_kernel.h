// Unary elementwise kernels, generic over an Op functor:
//
//   struct ReluOp : UnaryOp {
//     using Types = FloatsBf;                             // input element types
//     template <class C> C operator()(C x) const { ... }  // C = compute type
//   };
//
// Ops with a vectorised float implementation set kHasFloatSpan and define
// void FloatSpan(const float* in, float* out, int64_t n) const; float16/bfloat16 inputs then
// go through it in chunks converted to float.
#pragma once

#include <string>
#include <type_traits>

#include "native/kernels/elementwise/element_types.h"
#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/kernels/elementwise/registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace elementwise {

struct UnaryOp {
  Status Init(const KernelInfo&) { return Status::Ok(); }
  template <typename T>
  using Out = T;
  static constexpr bool kHasFloatSpan = false;
  void FloatSpan(const float*, float*, int64_t) const {}
};

// Narrow floats converted per chunk for FloatSpan (stack buffers, no allocation).
inline constexpr int64_t kConvertChunk = 256;

template <typename Op, typename T>
void UnarySpan(const Op& op, const T* in, typename Op::template Out<T>* out, int64_t n) {
  using O = typename Op::template Out<T>;
  if constexpr (Op::kHasFloatSpan && std::is_same_v<T, float>) {
    op.FloatSpan(in, out, n);
  } else if constexpr (Op::kHasFloatSpan && kComputesInFloat<T> && std::is_same_v<O, T>) {
    float buffer[kConvertChunk];
    for (int64_t start = 0; start < n; start += kConvertChunk) {
      const int64_t m = std::min(kConvertChunk, n - start);
      for (int64_t i = 0; i < m; ++i) buffer[i] = Load(in[start + i]);
      op.FloatSpan(buffer, buffer, m);
      for (int64_t i = 0; i < m; ++i) out[start + i] = Store<O>(buffer[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Store<O>(op(Load(in[i])));
  }
}

template <typename Op>
class UnaryKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    label_ = info.op();
    OL_RETURN_IF_ERROR(policy_.Init(info));
    return op_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    return DispatchType(typename Op::Types{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using O = typename Op::template Out<T>;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, kDataTypeOf<O>, x->shape()));
      const T* in = x->data<T>();
      O* out = y->data<O>();
      const bool stream = policy_.Streams<O>(x->num_elements());
      return policy_.Run(ctx, label_.c_str(), x->num_elements(), [&](int64_t begin, int64_t end) {
        if (stream) {
          WriteStreaming(out + begin, end - begin,
                         [&](O* buffer, int64_t k, int64_t count) { UnarySpan(op_, in + begin + k, buffer, count); });
        } else {
          UnarySpan(op_, in + begin, out + begin, end - begin);
        }
      });
    });
  }

 private:
  std::string where_, label_;
  ElementwisePolicy policy_;
  Op op_;
};

// Registers UnaryKernel<Op> for `r` (Kernel(op) with its opset history), with what every
// elementwise op shares (registration.h).
template <typename Op>
void RegisterUnary(KernelRegistry& registry, KernelRegistration r, int64_t minimum_elements) {
  Elementwise(std::move(r), minimum_elements).Factory(MakeKernel<UnaryKernel<Op>>()).AddTo(registry);
}

// The opset history most float functions share: 1 (consumed_inputs), 6, 13 (+bfloat16).
inline std::vector<OpsetTypes> ClassicFloatVersions() {
  return {Since(1, Floats{}), Since(6, Floats{}), Since(13, FloatsBf{})};
}

}  // namespace elementwise
}  // namespace onnx_light
