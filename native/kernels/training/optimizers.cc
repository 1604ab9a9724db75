// Adagrad, Adam and Momentum (ai.onnx.preview.training, opset 1): one update rule applied
// elementwise to n parameter tensors. Inputs are R (scalar learning rate), T (scalar int64
// step count), then n tensors of each role (X..., G..., state...); outputs are n tensors of
// each updated role. Elements are independent, so each tensor is split into contiguous
// blocks through ParallelFor (family training). Gradient needs autodiff and is not here.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "native/executor/parallel_for.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace training {
namespace {

constexpr char kDomain[] = "ai.onnx.preview.training";
// A block of a few thousand elements repays a region start (~ a few microseconds) on
// these ~10-flop updates; below 32K elements the serial loop wins on the 2-core reference.
constexpr int64_t kMinimumElements = 32768;
constexpr int64_t kBlockElements = 4096;

// Scalars every rule sees: the learning rate R and the step count T.
struct Step {
  double rate = 0;
  int64_t count = 0;
};

// G_reg = norm_coefficient * X + G;  H' = H + G_reg^2;
// X' = X - R / (1 + T * decay_factor) * G_reg / (sqrt(H') + epsilon).
struct AdagradRule {
  static constexpr int kRoles = 3;    // X, G, H
  static constexpr int kOutputs = 2;  // X', H'
  double decay_factor = 0, epsilon = 0, norm_coefficient = 0;
  double rate = 0;

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(float d, info.GetFloat("decay_factor", 0.0f));
    OL_ASSIGN_OR_RETURN(float e, info.GetFloat("epsilon", 0.0f));
    OL_ASSIGN_OR_RETURN(float n, info.GetFloat("norm_coefficient", 0.0f));
    decay_factor = d, epsilon = e, norm_coefficient = n;
    return Status::Ok();
  }
  void Prepare(const Step& s) { rate = s.rate / (1.0 + static_cast<double>(s.count) * decay_factor); }
  template <typename T>
  void Apply(const T* const* in, T* const* out, int64_t i) const {
    const double x = in[0][i], g = norm_coefficient * x + in[1][i];
    const double h = in[2][i] + g * g;
    out[0][i] = static_cast<T>(x - rate * g / (std::sqrt(h) + epsilon));
    out[1][i] = static_cast<T>(h);
  }
};

// G_reg = norm_coefficient * X + G;  V' = alpha * V + beta' * G_reg (beta' = 1 on step 0);
// standard: X' = X - R * V';  nesterov: X' = X - R * (G_reg + alpha * V').
struct MomentumRule {
  static constexpr int kRoles = 3;    // X, G, V
  static constexpr int kOutputs = 2;  // X', V'
  double alpha = 0, beta = 0, norm_coefficient = 0;
  bool nesterov = false;
  double rate = 0, beta_adjusted = 0;

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(float a, info.GetFloat("alpha"));
    OL_ASSIGN_OR_RETURN(float b, info.GetFloat("beta"));
    OL_ASSIGN_OR_RETURN(float n, info.GetFloat("norm_coefficient"));
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode"));
    if (mode != "standard" && mode != "nesterov") {
      return InvalidArgument(info.Where(), ": mode must be \"standard\" or \"nesterov\", got \"", mode, "\"");
    }
    alpha = a, beta = b, norm_coefficient = n, nesterov = mode == "nesterov";
    return Status::Ok();
  }
  void Prepare(const Step& s) {
    rate = s.rate;
    beta_adjusted = s.count > 0 ? beta : 1.0;
  }
  template <typename T>
  void Apply(const T* const* in, T* const* out, int64_t i) const {
    const double x = in[0][i], g = norm_coefficient * x + in[1][i];
    const double v = alpha * in[2][i] + beta_adjusted * g;
    out[0][i] = static_cast<T>(x - rate * (nesterov ? g + alpha * v : v));
    out[1][i] = static_cast<T>(v);
  }
};

// G_reg = norm_coefficient * X + G;  V' = alpha V + (1 - alpha) G_reg;
// H' = beta H + (1 - beta) G_reg^2;  R' = R sqrt(1 - beta^T) / (1 - alpha^T) when T > 0;
// X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + epsilon)).
struct AdamRule {
  static constexpr int kRoles = 4;    // X, G, V, H
  static constexpr int kOutputs = 3;  // X', V', H'
  double alpha = 0.9, beta = 0.999, epsilon = 1e-6, norm_coefficient = 0, norm_coefficient_post = 0;
  double rate = 0;

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(float a, info.GetFloat("alpha", 0.9f));
    OL_ASSIGN_OR_RETURN(float b, info.GetFloat("beta", 0.999f));
    OL_ASSIGN_OR_RETURN(float e, info.GetFloat("epsilon", 1e-6f));
    OL_ASSIGN_OR_RETURN(float n, info.GetFloat("norm_coefficient", 0.0f));
    OL_ASSIGN_OR_RETURN(float p, info.GetFloat("norm_coefficient_post", 0.0f));
    alpha = a, beta = b, epsilon = e, norm_coefficient = n, norm_coefficient_post = p;
    return Status::Ok();
  }
  void Prepare(const Step& s) {
    const double t = static_cast<double>(s.count);
    rate = s.count > 0 ? s.rate * std::sqrt(1.0 - std::pow(beta, t)) / (1.0 - std::pow(alpha, t)) : s.rate;
  }
  template <typename T>
  void Apply(const T* const* in, T* const* out, int64_t i) const {
    const double x = in[0][i], g = norm_coefficient * x + in[1][i];
    const double v = alpha * in[2][i] + (1.0 - alpha) * g;
    const double h = beta * in[3][i] + (1.0 - beta) * g * g;
    out[0][i] = static_cast<T>((1.0 - norm_coefficient_post) * (x - rate * v / (std::sqrt(h) + epsilon)));
    out[1][i] = static_cast<T>(v);
    out[2][i] = static_cast<T>(h);
  }
};

StatusOr<double> ReadRate(const KernelContext& ctx, const std::string& where) {
  OL_ASSIGN_OR_RETURN(const Tensor* r, ctx.RequiredInput(0));
  if (r->num_elements() != 1) return InvalidArgument(where, ": R must be a scalar, got ", r->TypeAndShape());
  if (r->dtype() == DataType::kFloat) return static_cast<double>(*r->data<float>());
  if (r->dtype() == DataType::kDouble) return *r->data<double>();
  return InvalidArgument(where, ": R must be float or double, got ", r->TypeAndShape());
}

StatusOr<int64_t> ReadCount(const KernelContext& ctx, const std::string& where) {
  OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(1));
  if (t->num_elements() != 1 || t->dtype() != DataType::kInt64) {
    return InvalidArgument(where, ": T must be an int64 scalar, got ", t->TypeAndShape());
  }
  return *t->data<int64_t>();
}

template <typename Rule>
class OptimizerKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return rule_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    const int tensors = ctx.num_inputs() - 2;
    if (tensors <= 0 || tensors % Rule::kRoles != 0) {
      return InvalidArgument(where_, ": expected R, T and ", Rule::kRoles, " tensors per parameter, got ",
                             ctx.num_inputs(), " inputs");
    }
    const int n = tensors / Rule::kRoles;
    if (ctx.num_outputs() > Rule::kOutputs * n) {
      return InvalidArgument(where_, ": ", n, " parameters give at most ", Rule::kOutputs * n, " outputs, got ",
                             ctx.num_outputs());
    }
    Step step;
    OL_ASSIGN_OR_RETURN(step.rate, ReadRate(ctx, where_));
    OL_ASSIGN_OR_RETURN(step.count, ReadCount(ctx, where_));
    Rule rule = rule_;
    rule.Prepare(step);
    for (int p = 0; p < n; ++p) OL_RETURN_IF_ERROR(UpdateParameter(ctx, rule, n, p));
    return Status::Ok();
  }

 private:
  Status UpdateParameter(KernelContext& ctx, const Rule& rule, int n, int p) {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(2 + p));
    for (int role = 1; role < Rule::kRoles; ++role) {
      OL_ASSIGN_OR_RETURN(const Tensor* other, ctx.RequiredInput(2 + role * n + p));
      if (other->dtype() != x->dtype() || !(other->shape() == x->shape())) {
        return InvalidArgument(where_, ": parameter ", p, " is ", x->TypeAndShape(), " but its input ",
                               2 + role * n + p, " is ", other->TypeAndShape());
      }
    }
    if (x->dtype() == DataType::kFloat) return Update<float>(ctx, rule, n, p, *x);
    if (x->dtype() == DataType::kDouble) return Update<double>(ctx, rule, n, p, *x);
    return NotImplemented(where_, ": parameter ", p, " must be float or double, got ", x->TypeAndShape());
  }

  template <typename T>
  Status Update(KernelContext& ctx, const Rule& rule, int n, int p, const Tensor& x) {
    const T* in[Rule::kRoles];
    for (int role = 0; role < Rule::kRoles; ++role) in[role] = ctx.input(2 + role * n + p)->template data<T>();
    // Outputs beyond the node's last one are still computed (every rule writes all its
    // roles), into a scratch tensor allocated here, before the workers start.
    T* out[Rule::kOutputs];
    std::vector<Tensor> unused;
    for (int k = 0; k < Rule::kOutputs; ++k) {
      const int index = k * n + p;
      if (index < ctx.num_outputs()) {
        OL_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(index, x.dtype(), x.shape()));
        out[k] = t->template data<T>();
      } else {
        OL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(x.dtype(), x.shape(), ctx.allocator()));
        unused.push_back(t);
        out[k] = unused.back().template data<T>();
        ctx.RecordScratch(static_cast<int64_t>(sizeof(T)) * x.num_elements());
      }
    }
    const int64_t total = x.num_elements();
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) rule.Apply(in, out, i);
      return Status::Ok();
    };
    return parallel_.Run(ctx.parallel(), "OptimizerUpdate", total, 1, run);
  }

  std::string where_;
  Rule rule_;
  ThresholdedParallel parallel_;
};

std::vector<ParamSpec> OptimizerTuning() {
  return {
      MinimumElementsParam(kMinimumElements, "parameter elements below which a tensor updates serially"),
      ParamSpec::Int64(param::kBlockElements, kBlockElements, 64, int64_t{1} << 30,
                       "parameter elements per block are a multiple of this (the ParallelFor grain)"),
  };
}

OL_REGISTER_KERNELS(training_optimizers) {
  // Dispatch on input 2, the first parameter X.
  Kernel("Adagrad")
      .Domain(kDomain)
      .Types(TypeList<float, double>{})
      .DispatchInput(2)
      .Tuning(OptimizerTuning())
      .Calibratable()
      .Factory(MakeKernel<OptimizerKernel<AdagradRule>>())
      .AddTo(registry);
  Kernel("Momentum")
      .Domain(kDomain)
      .Types(TypeList<float, double>{})
      .DispatchInput(2)
      .Tuning(OptimizerTuning())
      .Calibratable()
      .Factory(MakeKernel<OptimizerKernel<MomentumRule>>())
      .AddTo(registry);
  Kernel("Adam")
      .Domain(kDomain)
      .Types(TypeList<float, double>{})
      .DispatchInput(2)
      .Tuning(OptimizerTuning())
      .Calibratable()
      .Factory(MakeKernel<OptimizerKernel<AdamRule>>())
      .AddTo(registry);
}

}  // namespace
}  // namespace training
}  // namespace onnx_light
