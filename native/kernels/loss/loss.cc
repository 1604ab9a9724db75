// NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13).
//
// Input [N, C, d1, ...] is viewed as [N, C, D]; each of the N x D positions gets its loss
// -w[t] * logp[n, t, d] (t its target, w the class weights or 1, 0 when t is
// ignore_index). Positions are split across participants (work_units.h; for the softmax
// loss a position also computes its log-softmax over C), and the sum/mean reduction then
// runs serially in position order, so results never depend on the participant count.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/tensor/onnx_types.h"
#include "native/kernels/work_units/work_units.h"

namespace onnx_light {
namespace loss {
namespace {

template <typename... Ts>
struct TypeList {};
using FloatTypes = TypeList<float, double, Float16, BFloat16>;

template <typename... Ts, typename Fn>
Status DispatchType(TypeList<Ts...>, DataType type, const std::string& where, Fn&& fn) {
  Status result;
  const bool found = ((type == kDataTypeOf<Ts> ? (result = fn(static_cast<Ts*>(nullptr)), true) : false) || ...);
  if (!found) return NotImplemented(where, ": element type ", DataTypeName(type), " is not supported");
  return result;
}

template <typename T>
inline double Load(const T& v) {
  if constexpr (std::is_floating_point_v<T>) return v;
  else return v.ToDouble();
}

template <typename T>
inline T Store(double v) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else return T::FromDouble(v);
}

enum class Reduction { kNone, kSum, kMean };

template <bool kSoftmax>
class LossKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(std::string reduction, info.GetString("reduction", "mean"));
    if (reduction == "none") reduction_ = Reduction::kNone;
    else if (reduction == "sum") reduction_ = Reduction::kSum;
    else if (reduction == "mean") reduction_ = Reduction::kMean;
    else return InvalidArgument(where_, ": reduction must be none, sum or mean, got '", reduction, "'");
    has_ignore_ = info.HasAttribute("ignore_index");
    OL_ASSIGN_OR_RETURN(ignore_index_, info.GetInt("ignore_index", 0));
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* target, ctx.RequiredInput(1));
    const Tensor* weight = ctx.input(2);
    const Shape& xs = x->shape();
    if (xs.rank() < 2) return InvalidArgument(where_, ": input must be [N, C, ...], got ", x->TypeAndShape());
    const int64_t n = xs[0], classes = xs[1], inner = xs.SizeFrom(2);
    std::vector<int64_t> target_dims = {n};
    for (int d = 2; d < xs.rank(); ++d) target_dims.push_back(xs[d]);
    if (target->shape() != Shape(target_dims)) {
      return InvalidArgument(where_, ": target ", target->TypeAndShape(), " does not match input ", x->TypeAndShape());
    }
    if (weight != nullptr && (weight->shape() != Shape{classes} || weight->dtype() != x->dtype())) {
      return InvalidArgument(where_, ": weight ", weight->TypeAndShape(), " must be [C] of the input's type");
    }
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> targets, ReadTargets(*target, classes));
    return DispatchType(FloatTypes{}, x->dtype(), where_, [&](auto* tag) -> Status {
      using T = std::remove_pointer_t<decltype(tag)>;
      return Run<T>(ctx, *x, targets, weight, n, classes, inner, target_dims);
    });
  }

 private:
  StatusOr<std::vector<int64_t>> ReadTargets(const Tensor& t, int64_t classes) const {
    std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
    if (t.dtype() == DataType::kInt64) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int64_t>()[i];
    } else if (t.dtype() == DataType::kInt32) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int32_t>()[i];
    } else {
      return InvalidArgument(where_, ": target must be int32 or int64, got ", t.TypeAndShape());
    }
    for (int64_t label : v) {
      if ((!has_ignore_ || label != ignore_index_) && (label < 0 || label >= classes)) {
        return InvalidArgument(where_, ": target ", label, " is outside [0, ", classes, ")");
      }
    }
    return v;
  }

  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& targets, const Tensor* weight,
             int64_t n, int64_t classes, int64_t inner, const std::vector<int64_t>& target_dims) {
    const T* in = x.data<T>();
    const int64_t positions = n * inner;
    T* log_prob = nullptr;
    if (kSoftmax && ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * lp, ctx.AllocateOutput(1, x.dtype(), x.shape()));
      log_prob = lp->data<T>();
    }
    std::vector<double> losses(static_cast<size_t>(positions)), weights(static_cast<size_t>(positions));
    OL_RETURN_IF_ERROR(RunWorkUnits(ctx, policy_, kSoftmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
                                    positions, kSoftmax ? 3 * classes : 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / inner, d = p % inner;
        const T* row = in + b * classes * inner + d;  // class c at row[c * inner]
        const int64_t t = targets[p];
        double logp_t = 0.0;
        if (kSoftmax) {
          double top = Load(row[0]);
          for (int64_t c = 1; c < classes; ++c) top = std::max(top, Load(row[c * inner]));
          double total = 0.0;
          for (int64_t c = 0; c < classes; ++c) total += std::exp(Load(row[c * inner]) - top);
          const double log_total = std::log(total) + top;
          for (int64_t c = 0; c < classes; ++c) {
            const double lp = Load(row[c * inner]) - log_total;
            if (log_prob != nullptr) log_prob[b * classes * inner + c * inner + d] = Store<T>(lp);
            if (c == t) logp_t = lp;
          }
        } else if (t >= 0 && t < classes) {
          logp_t = Load(row[t * inner]);
        }
        const bool ignored = has_ignore_ && t == ignore_index_;
        weights[p] = ignored ? 0.0 : (weight != nullptr ? Load(weight->data<T>()[t]) : 1.0);
        losses[p] = ignored ? 0.0 : -weights[p] * logp_t;
      }
    }));
    if (reduction_ == Reduction::kNone) {
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.dtype(), Shape(target_dims)));
      for (int64_t p = 0; p < positions; ++p) out->data<T>()[p] = Store<T>(losses[p]);
      return Status::Ok();
    }
    double sum = 0.0, weight_sum = 0.0;
    for (int64_t p = 0; p < positions; ++p) {
      sum += losses[p];
      weight_sum += weights[p];
    }
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.dtype(), Shape()));
    *out->data<T>() = Store<T>(reduction_ == Reduction::kSum ? sum : sum / weight_sum);
    return Status::Ok();
  }

  std::string where_;
  Reduction reduction_ = Reduction::kMean;
  bool has_ignore_ = false;
  int64_t ignore_index_ = 0;
  WorkUnitPolicy policy_;
};

std::vector<DataType> FloatTypesAt(int opset, int bfloat16_since) {
  std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  if (opset >= bfloat16_since) types.push_back(DataType::kBFloat16);
  return types;
}

OL_REGISTER_KERNELS(loss) {
  KernelDef def;
  def.family = "loss";
  def.tuning = WorkUnitTuning(65536, "position");
  def.calibratable = true;
  def.op = "NegativeLogLikelihoodLoss";
  def.factory = MakeKernel<LossKernel<false>>();
  AddForOpsets(registry, def, {12, 13, 22}, [](int opset) { return FloatTypesAt(opset, 22); });
  def.op = "SoftmaxCrossEntropyLoss";
  def.factory = MakeKernel<LossKernel<true>>();
  AddForOpsets(registry, def, {12, 13}, [](int opset) { return FloatTypesAt(opset, 13); });
}

}  // namespace
}  // namespace loss
}  // namespace onnx_light
