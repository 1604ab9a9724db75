// BatchNormalization, InstanceNormalization, GroupNormalization over [N, C, spatial...]
// tensors: independent planes (n, c) or groups (n, g) are split across participants.
#include <cmath>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/normalization/norm_common.h"

namespace onnx_light {
namespace {

// N, C and the spatial plane size of an input that must have rank >= 2.
struct ChannelShape {
  int64_t batch, channels, plane;
};

StatusOr<ChannelShape> GetChannelShape(const KernelContext& ctx, const Tensor& x) {
  const Shape& s = x.shape();
  if (s.rank() < 2) {
    return InvalidArgument(ctx.Where(), ": input must have rank >= 2 ([N, C, ...]), got shape ", s.ToString());
  }
  return ChannelShape{s[0], s[1], s.SizeFrom(2)};
}

// Per-channel parameter input `index` of exactly `count` elements, widened into scratch.
template <typename A>
StatusOr<A*> ChannelParam(KernelContext& ctx, ParamScratch& scratch, int index, const char* name, int64_t count) {
  OL_ASSIGN_OR_RETURN(const Tensor* p, ctx.RequiredInput(index));
  if (p->num_elements() != count || p->shape().rank() != 1) {
    return InvalidArgument(ctx.Where(), ": ", name, " must have shape [", count, "], got ", p->shape().ToString());
  }
  return scratch.template Broadcast<A>(*p, Shape({count}), ctx.Where(), name);
}

class BatchNormKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(epsilon_, info.GetFloat("epsilon", 1e-5f));
    OL_ASSIGN_OR_RETURN(momentum_, info.GetFloat("momentum", 0.9f));
    OL_ASSIGN_OR_RETURN(int64_t spatial, info.GetInt("spatial", 1));
    if (spatial == 0) return NotImplemented(info.Where(), ": BatchNormalization with spatial=0 is not supported");
    if (info.opset_version() >= 14) {
      OL_ASSIGN_OR_RETURN(int64_t training, info.GetInt("training_mode", 0));
      training_ = training != 0;
    } else if (info.num_outputs() > 1) {
      return NotImplemented(info.Where(), ": training outputs of BatchNormalization before opset 14 are not supported");
    }
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(ChannelShape cs, GetChannelShape(ctx, *x));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const int64_t C = cs.channels;
      ParamScratch scratch(ctx, 6 * static_cast<size_t>(C) * sizeof(double));
      OL_RETURN_IF_ERROR(scratch.status());
      OL_ASSIGN_OR_RETURN(double* scale, ChannelParam<double>(ctx, scratch, 1, "scale", C));
      OL_ASSIGN_OR_RETURN(double* bias, ChannelParam<double>(ctx, scratch, 2, "B", C));
      OL_ASSIGN_OR_RETURN(double* mean, ChannelParam<double>(ctx, scratch, 3, "mean", C));
      OL_ASSIGN_OR_RETURN(double* var, ChannelParam<double>(ctx, scratch, 4, "var", C));
      const T* in = x->data<T>();
      if (training_) {
        // Batch statistics per channel (population variance), then the running averages.
        OL_ASSIGN_OR_RETURN(double* batch_mean, scratch.template Take<double>(C));
        OL_ASSIGN_OR_RETURN(double* batch_var, scratch.template Take<double>(C));
        const int64_t per_channel = cs.batch * cs.plane;
        OL_RETURN_IF_ERROR(ForEachItem(ctx, tuning_, "batchnorm.stats", C, per_channel, [&](int64_t c) {
          double sum = 0, squares = 0;
          for (int64_t n = 0; n < cs.batch; ++n) {
            const T* p = in + (n * C + c) * cs.plane;
            for (int64_t i = 0; i < cs.plane; ++i) sum += static_cast<double>(Numeric<T>::Load(p[i]));
          }
          const double m = per_channel ? sum / per_channel : 0.0;
          for (int64_t n = 0; n < cs.batch; ++n) {
            const T* p = in + (n * C + c) * cs.plane;
            for (int64_t i = 0; i < cs.plane; ++i) {
              const double d = static_cast<double>(Numeric<T>::Load(p[i])) - m;
              squares += d * d;
            }
          }
          batch_mean[c] = m;
          batch_var[c] = per_channel ? squares / per_channel : 0.0;
        }));
        for (int i = 1; i < 3 && i < ctx.num_outputs(); ++i) {
          const Tensor* running_in = ctx.input(i + 2);
          OL_ASSIGN_OR_RETURN(Tensor * running, ctx.AllocateOutput(i, running_in->dtype(), Shape({C})));
          const double* current = i == 1 ? batch_mean : batch_var;
          const double* previous = i == 1 ? mean : var;
          OL_RETURN_IF_ERROR(DispatchType(FloatTypes{}, running->dtype(), ctx.Where(), [&](auto rtag) {
            using U = typename decltype(rtag)::type;
            for (int64_t c = 0; c < C; ++c) {
              const double v = previous[c] * momentum_ + current[c] * (1.0 - momentum_);
              running->data<U>()[c] = Numeric<U>::Store(static_cast<typename Numeric<U>::Acc>(v));
            }
            return Status::Ok();
          }));
        }
        mean = batch_mean;
        var = batch_var;
      }
      // y = (x - mean) * (scale / sqrt(var + epsilon)) + B, per channel.
      for (int64_t c = 0; c < C; ++c) scale[c] /= std::sqrt(var[c] + static_cast<double>(epsilon_));
      T* out = y->data<T>();
      return ForEachItem(ctx, tuning_, "batchnorm.planes", cs.batch * C, cs.plane, [&](int64_t p) {
        const int64_t c = p % C;
        const A m = static_cast<A>(mean[c]), a = static_cast<A>(scale[c]), b = static_cast<A>(bias[c]);
        const T* xp = in + p * cs.plane;
        T* yp = out + p * cs.plane;
        for (int64_t i = 0; i < cs.plane; ++i)
          yp[i] = Numeric<T>::Store((static_cast<A>(Numeric<T>::Load(xp[i])) - m) * a + b);
      });
    });
  }

 private:
  float epsilon_ = 1e-5f, momentum_ = 0.9f;
  bool training_ = false;
  ThresholdedParallel tuning_;
};

// InstanceNormalization: groups of one channel. GroupNormalization: groups of C / G
// channels; scale and bias per group before opset 21, per channel from opset 21.
template <bool kGroups>
class GroupedNormKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(epsilon_, info.GetFloat("epsilon", 1e-5f));
    if constexpr (kGroups) {
      OL_ASSIGN_OR_RETURN(num_groups_, info.GetInt("num_groups"));
      per_group_params_ = info.opset_version() < 21;
    }
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(ChannelShape cs, GetChannelShape(ctx, *x));
    const int64_t C = cs.channels;
    const int64_t groups = kGroups ? num_groups_ : C;
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    if (x->num_elements() == 0) return Status::Ok();
    if (groups <= 0 || (C % groups) != 0) {
      return InvalidArgument(ctx.Where(), ": num_groups ", groups, " must be positive and divide the ", C,
                             " channels of input shape ", x->shape().ToString());
    }
    const int64_t group_channels = C / groups;
    const int64_t param_count = per_group_params_ ? groups : C;
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      ParamScratch scratch(ctx, 2 * static_cast<size_t>(param_count) * sizeof(A));
      OL_RETURN_IF_ERROR(scratch.status());
      OL_ASSIGN_OR_RETURN(A * scale, ChannelParam<A>(ctx, scratch, 1, "scale", param_count));
      OL_ASSIGN_OR_RETURN(A * bias, ChannelParam<A>(ctx, scratch, 2, kGroups ? "bias" : "B", param_count));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      const int64_t group_size = group_channels * cs.plane;
      const A epsilon = static_cast<A>(epsilon_);
      return ForEachItem(ctx, tuning_, kGroups ? "groupnorm.groups" : "instancenorm.planes", cs.batch * groups,
                         group_size, [&](int64_t item) {
                           const T* xg = in + item * group_size;
                           T* yg = out + item * group_size;
                           A mean, variance;
                           MeanVariance(xg, group_size, &mean, &variance);
                           const A inv = A(1) / std::sqrt(variance + epsilon);
                           const int64_t g = item % groups;
                           for (int64_t k = 0; k < group_channels; ++k) {
                             const int64_t p = per_group_params_ ? g : g * group_channels + k;
                             const A a = inv * scale[p], b = bias[p];
                             const T* xp = xg + k * cs.plane;
                             T* yp = yg + k * cs.plane;
                             for (int64_t i = 0; i < cs.plane; ++i) {
                               yp[i] = Numeric<T>::Store((static_cast<A>(Numeric<T>::Load(xp[i])) - mean) * a + b);
                             }
                           }
                         });
    });
  }

 private:
  float epsilon_ = 1e-5f;
  int64_t num_groups_ = 0;
  bool per_group_params_ = false;
  ThresholdedParallel tuning_;
};

}  // namespace

OL_REGISTER_KERNELS(normalization_channels) {
  Kernel("BatchNormalization")
      .Opsets({Since(1, NormFloats{}), Since(6, NormFloats{}), Since(7, NormFloats{}), Since(9, NormFloats{}),
               Since(14, NormFloatsBf{}), Since(15, NormFloatsBf{})})
      .Tuning(NormTuningParams(kAffineNormMinimum))
      .Factory(MakeKernel<BatchNormKernel>())
      .AddTo(registry);
  Kernel("InstanceNormalization")
      .Opsets({Since(1, NormFloats{}), Since(6, NormFloats{}), Since(22, NormFloatsBf{})})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<GroupedNormKernel<false>>())
      .AddTo(registry);
  Kernel("GroupNormalization")
      .Opsets({Since(18, NormFloatsBf{}), Since(21, NormFloatsBf{})})
      .Tuning(NormTuningParams(kStatisticsNormMinimum))
      .Factory(MakeKernel<GroupedNormKernel<true>>())
      .AddTo(registry);
}

}  // namespace onnx_light
