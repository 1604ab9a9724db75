// ReduceKernel<Op>: ReduceSum, ReduceMean, ... for every opset (axes as an attribute
// before opset 13/18, as an optional input after; keepdims; noop_with_empty_axes).
#pragma once

#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/reduction/reduce_driver.h"
#include "native/kernels/reduction/reducer.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// The reduction family's tuning schema (shared by ReduceX and ArgMax/ArgMin).
// `minimum_elements` is the op's portable parallel.minimum_elements default.
std::vector<ParamSpec> ReductionTuningParams(int64_t minimum_elements);
StatusOr<ReduceTuning> ReadReductionTuning(const KernelInfo& info);

// Axes of a Reduce* node: from the attribute or the optional input; empty means "all"
// unless noop_with_empty_axes. Sets *noop when the node must return its input unchanged.
struct ReduceAxesSource {
  bool from_input = false;
  bool noop_with_empty_axes = false;
  std::vector<int64_t> attribute;
  Status Init(const KernelInfo& info, int axes_input_since);
  StatusOr<std::vector<int>> Resolve(const KernelContext& ctx, const Shape& shape, bool* noop) const;
};

template <ReduceOp Op, typename Types>
class ReduceKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t keepdims, info.GetInt("keepdims", 1));
    keepdims_ = keepdims != 0;
    OL_RETURN_IF_ERROR(axes_.Init(info, Op == ReduceOp::kSum ? 13 : 18));
    OL_ASSIGN_OR_RETURN(tuning_, ReadReductionTuning(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    bool noop = false;
    OL_ASSIGN_OR_RETURN(std::vector<int> axes, axes_.Resolve(ctx, data->shape(), &noop));
    if (noop) return ctx.SetOutput(0, Value(*data));
    OL_ASSIGN_OR_RETURN(ReduceLayout layout, MakeReduceLayout(data->shape(), axes, keepdims_, ctx.Where()));
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->dtype(), layout.output_shape));
    return DispatchType(Types{}, data->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return Run<T>(ctx, layout, data->data<T>(), out->data<T>());
    });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const ReduceLayout& layout, const T* x, T* y) {
    using R = Reducer<Op, T>;
    if constexpr (R::kNeedsShift) {
      using Acc = typename R::Acc;
      const size_t bytes = static_cast<size_t>(layout.num_outputs) * sizeof(Acc);
      ScratchArena arena(ctx.allocator(), bytes);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Acc * shifts, arena.AllocateArray<Acc>(layout.num_outputs));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
      OL_RETURN_IF_ERROR(RunReducer<ShiftReducer<T>>(ctx, layout, tuning_, x, shifts, nullptr));
      return RunReducer<R>(ctx, layout, tuning_, x, y, shifts);
    } else {
      return RunReducer<R>(ctx, layout, tuning_, x, y, nullptr);
    }
  }

  bool keepdims_ = true;
  ReduceAxesSource axes_;
  ReduceTuning tuning_{};
};

KernelDef ReductionDef(std::string op, int since, int end, std::vector<DataType> types, KernelFactory factory,
                       int64_t minimum_elements);

// Portable parallel.minimum_elements defaults: the serial run must last about 100 us
// (about three times the ~30 us, 100k-cycle cost of opening a region) before two
// participants are offered. Serial costs per element from benchmarks/reduce_norm.
inline constexpr int64_t kCheapReduceMinimum = int64_t{1} << 19;    // sum-like, prod: ~0.17 ns/element
inline constexpr int64_t kExtremeReduceMinimum = int64_t{1} << 17;  // max/min (NaN-propagating): ~0.64 ns/element
inline constexpr int64_t kLogSumExpMinimum = int64_t{1} << 15;      // exp per element: ~2.9 ns/element
inline constexpr int64_t kArgExtremeMinimum = int64_t{1} << 16;     // compare + index: ~1.3 ns/element

// Type sets of the Reduce* schemas.
std::vector<DataType> ReduceTypesOpset1();   // uint32, uint64, int32, int64, float16, float, double
std::vector<DataType> ReduceTypesOpset13();  // + bfloat16
// ReduceMax / ReduceMin: + uint8, int8 (opset 12); + bool (opset 20).
std::vector<DataType> ExtremeTypes(int opset);

}  // namespace onnx_light
