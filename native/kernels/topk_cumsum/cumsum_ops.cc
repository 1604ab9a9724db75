// CumSum and CumProd: running sums / products along one axis (exclusive / reverse). Each
// lane is sequential, the lanes are independent: strided lanes advance together in tiles
// so that each step along the axis reads contiguous memory. float16/bfloat16 keep the
// running value in float; integers wrap around on overflow.
#include <algorithm>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/topk_cumsum/lane_tuning.h"

namespace onnx_light {
namespace {

using CumulativeTypes = TypeList<uint32_t, uint64_t, int32_t, int64_t, float, double, Float16, BFloat16>;
constexpr int64_t kTileLanes = 256;  // stack tile of running values; changes no result

struct Sum {
  static constexpr int kIdentity = 0;
  static constexpr const char* kRegion = "cumsum.lanes";
  template <typename A>
  static A Combine(A a, A b) {
    return WrappingAdd(a, b);
  }
};

struct Product {
  static constexpr int kIdentity = 1;
  static constexpr const char* kRegion = "cumprod.lanes";
  template <typename A>
  static A Combine(A a, A b) {
    return WrappingMul(a, b);
  }
};

template <class Op>
class CumulativeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t exclusive, info.GetInt("exclusive", 0));
    OL_ASSIGN_OR_RETURN(int64_t reverse, info.GetInt("reverse", 0));
    exclusive_ = exclusive != 0;
    reverse_ = reverse != 0;
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* axis_tensor, ctx.RequiredInput(1));
    if (axis_tensor->num_elements() != 1 || axis_tensor->shape().rank() > 1 ||
        (axis_tensor->dtype() != DataType::kInt32 && axis_tensor->dtype() != DataType::kInt64)) {
      return InvalidArgument(ctx.Where(), ": axis must be a scalar int32 or int64 tensor, got ",
                             axis_tensor->TypeAndShape());
    }
    const int64_t raw_axis =
        axis_tensor->dtype() == DataType::kInt32 ? axis_tensor->data<int32_t>()[0] : axis_tensor->data<int64_t>()[0];
    const Shape& shape = x->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(raw_axis, shape, ctx.Where()));
    const int64_t outer = shape.SizeTo(axis), length = shape[axis], inner = shape.SizeFrom(axis + 1);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), shape));
    if (outer * length * inner == 0) return Status::Ok();
    return DispatchType(CumulativeTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      auto lanes = [&](int64_t begin, int64_t end) {
        if (inner == 1) {  // contiguous lanes: a plain running sum per row
          for (int64_t lane = begin; lane < end; ++lane) {
            const T* xr = in + lane * length;
            T* yr = out + lane * length;
            A acc = A(Op::kIdentity);
            for (int64_t step = 0; step < length; ++step) {
              const int64_t k = reverse_ ? length - 1 - step : step;
              const A v = Numeric<T>::Load(xr[k]);
              if (!exclusive_) acc = Op::Combine(acc, v);
              yr[k] = Numeric<T>::Store(acc);
              if (exclusive_) acc = Op::Combine(acc, v);
            }
          }
          return Status::Ok();
        }
        ForEachLaneTile(length, inner, kTileLanes, begin, end, [&](int64_t offset, int64_t, int64_t n) {
          A acc[kTileLanes];
          std::fill(acc, acc + n, A(Op::kIdentity));
          for (int64_t step = 0; step < length; ++step) {
            const int64_t at = offset + (reverse_ ? length - 1 - step : step) * inner;
            for (int64_t j = 0; j < n; ++j) {
              const A v = Numeric<T>::Load(in[at + j]);
              if (!exclusive_) acc[j] = Op::Combine(acc[j], v);
              out[at + j] = Numeric<T>::Store(acc[j]);
              if (exclusive_) acc[j] = Op::Combine(acc[j], v);
            }
          }
        });
        return Status::Ok();
      };
      return tuning_.Run(ctx.parallel(), Op::kRegion, outer * inner, length, lanes);
    });
  }

 private:
  bool exclusive_ = false, reverse_ = false;
  ThresholdedParallel tuning_;
};

}  // namespace

OL_REGISTER_KERNELS(cumsum) {
  using Types11 = TypeList<uint32_t, uint64_t, int32_t, int64_t, float, double>;
  using Types14 = decltype(Types11{} + TypeList<Float16, BFloat16>{});
  Kernel("CumSum")
      .Opsets({Since(11, Types11{}), Since(14, Types14{})})
      .Tuning(LaneTuningParams(kCumSumMinimum, kCumSumBlock))
      .Factory(MakeKernel<CumulativeKernel<Sum>>())
      .AddTo(registry);
  // One dependent multiply per element costs about what CumSum's add does.
  Kernel("CumProd")
      .Versions(26, kOpenEnded)
      .Types(Types14{})
      .Tuning(LaneTuningParams(kCumSumMinimum, kCumSumBlock))
      .Factory(MakeKernel<CumulativeKernel<Product>>())
      .AddTo(registry);
}

}  // namespace onnx_light
