// Binary and variadic elementwise kernels with multidirectional broadcasting, generic over
// an Op functor:
//
//   struct AddOp : NoAttributes {
//     using Types = NumbersBf;                       // input element types (union of opsets)
//     template <class T> using Out = T;              // output element type
//     template <class C> C operator()(C a, C b) const { return a + b; }  // C = compute type
//   };
//
// Ops with attributes define Status Init(const KernelInfo&) instead of inheriting it.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "native/kernels/elementwise/broadcast.h"
#include "native/kernels/elementwise/element_types.h"
#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/kernels/elementwise/registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace elementwise {

struct NoAttributes {
  Status Init(const KernelInfo&) { return Status::Ok(); }
  template <typename T>
  using Out = T;
  // True for ops whose second input broadcasts to the first's shape only (PRelu's slope).
  static constexpr bool kBroadcastToFirst = false;
};

// out[i] = op(a[i * a_stride], b[i * b_stride]) for strides 0 or 1; each branch is a plain
// loop that the compiler vectorises for arithmetic types.
template <typename Op, typename A, typename B, typename O>
void BinarySpan(const Op& op, const A* a, int64_t a_stride, const B* b, int64_t b_stride, O* out, int64_t n) {
  if (a_stride != 0 && b_stride != 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = Store<O>(op(Load(a[i]), Load(b[i])));
  } else if (a_stride != 0) {
    const auto bv = Load(*b);
    for (int64_t i = 0; i < n; ++i) out[i] = Store<O>(op(Load(a[i]), bv));
  } else if (b_stride != 0) {
    const auto av = Load(*a);
    for (int64_t i = 0; i < n; ++i) out[i] = Store<O>(op(av, Load(b[i])));
  } else {
    const O v = Store<O>(op(Load(*a), Load(*b)));
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

// Writes op(a, b) broadcast by `plan` (two inputs) into out, in blocks.
template <typename Op, typename A, typename B, typename O>
Status RunBinary(const KernelContext& ctx, const ElementwisePolicy& policy, const char* label, const Op& op,
                 const BroadcastPlan& plan, const A* a, const B* b, O* out) {
  const bool stream = policy.Streams<O>(plan.output_size);
  return policy.Run(ctx, label, plan.output_size, [&](int64_t begin, int64_t end) {
    ForEachRun(plan, begin, end, [&](int64_t o, const int64_t* offset, const int64_t* stride, int64_t n) {
      if constexpr (std::is_trivially_copyable_v<O>) {
        if (stream) {
          WriteStreaming(out + o, n, [&](O* buffer, int64_t k, int64_t count) {
            BinarySpan(op, a + offset[0] + k * stride[0], stride[0], b + offset[1] + k * stride[1], stride[1], buffer,
                       count);
          });
          return;
        }
      }
      BinarySpan(op, a + offset[0], stride[0], b + offset[1], stride[1], out + o, n);
    });
  });
}

// Before opset 7 the arithmetic and comparison ops broadcast only B, as attributes say.
struct LegacyBroadcast {
  bool active = false;  // opset < 7
  bool broadcast = false;
  bool has_axis = false;
  int64_t axis = 0;

  Status Init(const KernelInfo& info) {
    active = info.opset_version() < 7;
    if (!active) return Status::Ok();
    OL_ASSIGN_OR_RETURN(int64_t b, info.GetInt("broadcast", 0));
    broadcast = b != 0;
    has_axis = info.HasAttribute("axis");
    OL_ASSIGN_OR_RETURN(axis, info.GetInt("axis", 0));
    return Status::Ok();
  }

  StatusOr<BroadcastPlan> Plan(const Tensor& a, const Tensor& b, const std::string& where) const {
    if (!active && a.shape() == b.shape()) return SameShapePlan(a.shape(), 2);
    if (!active) return PlanBroadcast({a.shape(), b.shape()}, where);
    const int64_t normalized_axis = axis < 0 ? axis + a.shape().rank() : axis;
    OL_ASSIGN_OR_RETURN(Shape b_shape, LegacyBroadcastShape(a.shape(), b.shape(), broadcast,
                                                            has_axis ? &normalized_axis : nullptr, where));
    return PlanBroadcast({a.shape(), b_shape}, where, &a.shape());
  }
};

template <typename Op>
class BinaryKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    label_ = info.op();
    OL_RETURN_IF_ERROR(legacy_.Init(info));
    OL_RETURN_IF_ERROR(policy_.Init(info));
    return op_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    if (a->dtype() != b->dtype()) {
      return InvalidArgument(where_, ": inputs must have one element type, got ", a->TypeAndShape(), " and ",
                             b->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(BroadcastPlan plan, Op::kBroadcastToFirst
                                                ? PlanBroadcast({a->shape(), b->shape()}, where_, &a->shape())
                                                : legacy_.Plan(*a, *b, where_));
    return DispatchType(typename Op::Types{}, a->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using O = typename Op::template Out<T>;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, kDataTypeOf<O>, plan.output_shape));
      return RunBinary(ctx, policy_, label_.c_str(), op_, plan, a->data<T>(), b->data<T>(), out->data<O>());
    });
  }

 private:
  std::string where_, label_;
  LegacyBroadcast legacy_;
  ElementwisePolicy policy_;
  Op op_;
};

// Sum, Mean, Min, Max: folds the inputs left to right into the output, (x0 op x1) op x2...,
// each step one broadcast pass; Op::Finish(value, count) maps the result (Mean divides).
template <typename Op>
class VariadicKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    label_ = info.op();
    // Before opset 8 the inputs had to have one shape.
    same_shape_required_ = info.opset_version() < 8;
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    const int n = ctx.num_inputs();
    if (n < 1) return InvalidArgument(where_, ": needs at least one input");
    std::vector<const Tensor*> inputs(n);
    for (int i = 0; i < n; ++i) {
      OL_ASSIGN_OR_RETURN(inputs[i], ctx.RequiredInput(i));
      if (inputs[i]->dtype() != inputs[0]->dtype()) {
        return InvalidArgument(where_, ": inputs must have one element type, got ", inputs[0]->TypeAndShape(), " and ",
                               inputs[i]->TypeAndShape());
      }
      if (same_shape_required_ && inputs[i]->shape() != inputs[0]->shape()) {
        return InvalidArgument(where_, ": before opset 8 inputs must have one shape, got ",
                               inputs[0]->shape().ToString(), " and ", inputs[i]->shape().ToString());
      }
    }
    Shape out_shape = inputs[0]->shape();
    for (int i = 1; i < n; ++i) {
      OL_ASSIGN_OR_RETURN(BroadcastPlan p, PlanBroadcast({out_shape, inputs[i]->shape()}, where_));
      out_shape = p.output_shape;
    }
    return DispatchType(typename Op::Types{}, inputs[0]->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, kDataTypeOf<T>, out_shape));
      T* o = out->data<T>();
      const Op op;
      if (n == 1 && o != inputs[0]->data<T>()) {  // in place over the input: nothing to copy
        std::memcpy(o, inputs[0]->data<T>(), out->byte_size());
        ctx.RecordCopy();
      }
      for (int i = 1; i < n; ++i) {
        const Tensor& left = i == 1 ? *inputs[0] : *out;
        OL_ASSIGN_OR_RETURN(BroadcastPlan p, PlanBroadcast({left.shape(), inputs[i]->shape()}, where_, &out_shape));
        OL_RETURN_IF_ERROR(RunBinary(ctx, policy_, label_.c_str(), op, p, left.data<T>(), inputs[i]->data<T>(), o));
      }
      if constexpr (Op::kHasFinish) {
        return policy_.Run(ctx, label_.c_str(), out->num_elements(), [&](int64_t begin, int64_t end) {
          for (int64_t k = begin; k < end; ++k) o[k] = Store<T>(Op::Finish(Load(o[k]), n));
        });
      }
      return Status::Ok();
    });
  }

 private:
  std::string where_, label_;
  bool same_shape_required_ = false;
  ElementwisePolicy policy_;
};

// Registers BinaryKernel<Op> for `r` (Kernel(op) with its opset history), with what every
// elementwise op shares (registration.h).
template <typename Op>
void RegisterBinary(KernelRegistry& registry, KernelRegistration r, int64_t minimum_elements) {
  Elementwise(std::move(r), minimum_elements).Factory(MakeKernel<BinaryKernel<Op>>()).AddTo(registry);
}

}  // namespace elementwise
}  // namespace onnx_light
