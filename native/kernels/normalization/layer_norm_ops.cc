// LayerNormalization (opset 17) and RMSNormalization (opset 23): each row of the tensor
// flattened at `axis` is normalised independently, so rows are split across participants.
// Computation is in Numeric<T>::Acc (float for float16/bfloat16/float, as stash_type=1
// asks; double for double).
#include <cmath>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/normalization/norm_common.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/simd/rows.h"

namespace onnx_light {
namespace {

template <bool kRms>
class RowNormKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", -1));
    OL_ASSIGN_OR_RETURN(epsilon_, info.GetFloat("epsilon", 1e-5f));
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequiredInput(1));
    const Tensor* bias = kRms ? nullptr : ctx.input(2);
    const Shape& shape = x->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(axis_, shape, ctx.Where()));
    const int64_t rows = shape.SizeTo(axis), row_size = shape.SizeFrom(axis);
    const Shape normalized(std::vector<int64_t>(shape.dims().begin() + axis, shape.dims().end()));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), shape));
    // LayerNormalization's optional Mean and InvStdDev: shape X[:axis] + [1]*(rank-axis).
    float* stats[2] = {nullptr, nullptr};
    std::vector<int64_t> stat_dims = shape.dims();
    for (int d = axis; d < shape.rank(); ++d) stat_dims[d] = 1;
    for (int i = 1; !kRms && i < 3 && i < ctx.num_outputs(); ++i) {
      OL_ASSIGN_OR_RETURN(Tensor * s, ctx.AllocateOutput(i, DataType::kFloat, Shape(stat_dims)));
      stats[i - 1] = s->data<float>();
    }
    if (rows * row_size == 0) return Status::Ok();
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      ParamScratch scratch(ctx, 2 * static_cast<size_t>(row_size) * sizeof(A));
      OL_RETURN_IF_ERROR(scratch.status());
      OL_ASSIGN_OR_RETURN(A * gamma, scratch.template Broadcast<A>(*scale, normalized, ctx.Where(), "Scale"));
      A* beta = nullptr;
      if (bias != nullptr) {
        OL_ASSIGN_OR_RETURN(beta, scratch.template Broadcast<A>(*bias, normalized, ctx.Where(), "B"));
      }
      const T* in = x->data<T>();
      T* out = y->data<T>();
      const A epsilon = static_cast<A>(epsilon_);
      return ForEachItem(ctx, tuning_, kRms ? "rmsnorm.rows" : "layernorm.rows", rows, row_size, [&](int64_t r) {
        const T* xr = in + r * row_size;
        T* yr = out + r * row_size;
        A mean = 0, variance = 0;
        constexpr bool kVector = std::is_same_v<T, float>;  // simd/rows.h, the same formulas
        if constexpr (kVector) {
          if (!kRms) mean = simd::RowSum(xr, row_size) / static_cast<float>(row_size);
          variance = simd::RowSquaredDeviationSum(xr, row_size, mean) / static_cast<float>(row_size);
        } else if constexpr (kRms) {
          for (int64_t i = 0; i < row_size; ++i) {
            const A v = Numeric<T>::Load(xr[i]);
            variance += v * v;  // mean square
          }
          variance /= static_cast<A>(row_size);
        } else {
          MeanVariance(xr, row_size, &mean, &variance);
        }
        const A inv = A(1) / std::sqrt(variance + epsilon);
        if constexpr (kVector) {
          simd::NormalizeRow(xr, yr, row_size, mean, inv, gamma, beta);
        } else {
          for (int64_t i = 0; i < row_size; ++i) {
            const A v = (static_cast<A>(Numeric<T>::Load(xr[i])) - mean) * inv * gamma[i];
            yr[i] = Numeric<T>::Store(beta ? v + beta[i] : v);
          }
        }
        if (stats[0]) stats[0][r] = static_cast<float>(mean);
        if (stats[1]) stats[1][r] = static_cast<float>(inv);
      });
    });
  }

 private:
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
  ThresholdedParallel tuning_;
};

}  // namespace

OL_REGISTER_KERNELS(normalization_rows) {
  Kernel("LayerNormalization")
      .Versions(17, kOpenEnded)
      .Types(NormFloatsBf{})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<RowNormKernel<false>>())
      .AddTo(registry);
  Kernel("RMSNormalization")
      .Versions(23, kOpenEnded)
      .Types(NormFloatsBf{})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<RowNormKernel<true>>())
      .AddTo(registry);
}

}  // namespace onnx_light
