// LpNormalization (x / ||x||_p along one axis; a zero norm gives 0) and
// MeanVarianceNormalization ((x - E[x]) / (sqrt(Var[x]) + 1e-9) over `axes`, as its
// ONNX function body defines). Lanes (Lp) or kept positions (MVN) are independent.
#include <cmath>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/normalization/norm_common.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/reduce_layout.h"

namespace onnx_light {
namespace {

class LpNormKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", -1));
    OL_ASSIGN_OR_RETURN(p_, info.GetInt("p", 2));
    if (p_ != 1 && p_ != 2) return InvalidArgument(info.Where(), ": p must be 1 or 2, got ", p_);
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& shape = x->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(axis_, shape, ctx.Where()));
    const int64_t outer = shape.SizeTo(axis), length = shape[axis], inner = shape.SizeFrom(axis + 1);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), shape));
    if (outer * length * inner == 0) return Status::Ok();
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return ForEachItem(ctx, tuning_, "lpnorm.lanes", outer * inner, length, [&](int64_t lane) {
        const int64_t base = (lane / inner) * length * inner + lane % inner;
        A norm = 0;
        for (int64_t k = 0; k < length; ++k) {
          const A v = Numeric<T>::Load(in[base + k * inner]);
          norm += p_ == 1 ? std::fabs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < length; ++k) {
          const A v = Numeric<T>::Load(in[base + k * inner]);
          out[base + k * inner] = Numeric<T>::Store(norm == A(0) ? A(0) : v / norm);
        }
      });
    });
  }

 private:
  int64_t axis_ = -1, p_ = 2;
  ThresholdedParallel tuning_;
};

// Calls fn(offset, run) for the input elements that kept position `o` of `layout`
// reduces over: contiguous runs when the innermost group is reduced, single elements
// (run = 1) otherwise.
template <typename F>
void ForEachReducedRun(const ReduceLayout& layout, int64_t o, F&& fn) {
  StridedWalk outputs = layout.outputs, reduced = layout.reduced;
  int64_t base, run;
  if (layout.inner_reduced) {
    outputs.Seek(o);
    base = outputs.offset();
    run = layout.inner;
  } else {
    outputs.Seek(o / layout.inner);
    base = outputs.offset() + o % layout.inner;
    run = 1;
  }
  reduced.Seek(0);
  for (int64_t r = 0, n = reduced.count(); r < n; ++r, reduced.Next()) fn(base + reduced.offset(), run);
}

class MeanVarianceNormKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axes_, info.GetInts("axes", {0, 2, 3}));
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxes(axes_, x->shape(), ctx.Where()));
    OL_ASSIGN_OR_RETURN(ReduceLayout layout, MakeReduceLayout(x->shape(), axes, true, ctx.Where()));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    if (layout.num_outputs == 0 || layout.reduce_count == 0) return Status::Ok();
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      const A count = static_cast<A>(layout.reduce_count);
      return ForEachItem(ctx, tuning_, "mvn.groups", layout.num_outputs, layout.reduce_count, [&](int64_t o) {
        A sum = 0, squares = 0;
        ForEachReducedRun(layout, o, [&](int64_t offset, int64_t run) {
          for (int64_t i = 0; i < run; ++i) sum += static_cast<A>(Numeric<T>::Load(in[offset + i]));
        });
        const A mean = sum / count;
        ForEachReducedRun(layout, o, [&](int64_t offset, int64_t run) {
          for (int64_t i = 0; i < run; ++i) {
            const A d = static_cast<A>(Numeric<T>::Load(in[offset + i])) - mean;
            squares += d * d;
          }
        });
        const A denominator = std::sqrt(squares / count) + static_cast<A>(1e-9);
        ForEachReducedRun(layout, o, [&](int64_t offset, int64_t run) {
          for (int64_t i = 0; i < run; ++i) {
            out[offset + i] =
                Numeric<T>::Store((static_cast<A>(Numeric<T>::Load(in[offset + i])) - mean) / denominator);
          }
        });
      });
    });
  }

 private:
  std::vector<int64_t> axes_;
  ThresholdedParallel tuning_;
};

}  // namespace

OL_REGISTER_KERNELS(normalization_axes) {
  Kernel("LpNormalization")
      .Opsets({Since(1, NormFloats{}), Since(22, NormFloatsBf{})})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<LpNormKernel>())
      .AddTo(registry);
  Kernel("MeanVarianceNormalization")
      .Opsets({Since(9, NormFloats{}), Since(13, NormFloatsBf{})})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<MeanVarianceNormKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
