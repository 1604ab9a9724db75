// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. The input is [N, C, d1..dk] and the
// target [N, d1..dk]; each (sample, position) pair is a lane whose loss is
//   -log_prob[n, target, d] * weight[target]   (0 with weight 0 when target == ignore_index),
// where log_prob is the input itself (NLL) or its log-softmax over C (SCE). Lanes are
// independent and split across participants. For "sum"/"mean" each lane stores its loss
// and weight in scratch and one serial pass adds them in lane order, so the result never
// depends on the participant count; "mean" divides by the summed weights.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "native/core/allocator.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

enum class LossKind { kNegativeLogLikelihood, kSoftmaxCrossEntropy };
enum class Reduction { kNone, kSum, kMean };

StatusOr<Reduction> ParseReduction(const std::string& name, const std::string& where) {
  if (name == "none") return Reduction::kNone;
  if (name == "sum") return Reduction::kSum;
  if (name == "mean") return Reduction::kMean;
  return InvalidArgument(where, ": reduction '", name, "' is not one of none, sum, mean");
}

// Input viewed as [batch, classes, inner]; lanes = batch * inner.
struct LossLayout {
  int64_t batch = 0, classes = 0, inner = 0;
  int64_t lanes() const { return batch * inner; }
};

StatusOr<LossLayout> CheckShapes(const Tensor& input, const Tensor& target, const Tensor* weight,
                                 const std::string& where) {
  const Shape& x = input.shape();
  if (x.rank() < 2) return InvalidArgument(where, ": input must have rank >= 2, got ", x.ToString());
  std::vector<int64_t> expected = {x[0]};
  for (int d = 2; d < x.rank(); ++d) expected.push_back(x[d]);
  if (target.shape() != Shape(expected)) {
    return InvalidArgument(where, ": target shape ", target.shape().ToString(), " does not match input ", x.ToString(),
                           " (expected ", Shape(expected).ToString(), ")");
  }
  if (weight != nullptr && weight->shape() != Shape{x[1]}) {
    return InvalidArgument(where, ": weight shape ", weight->shape().ToString(), " must be [", x[1], "]");
  }
  if (weight != nullptr && weight->dtype() != input.dtype()) {
    return InvalidArgument(where, ": weight type ", DataTypeName(weight->dtype()), " differs from input type ",
                           DataTypeName(input.dtype()));
  }
  return LossLayout{x[0], x[1], x.SizeFrom(2)};
}

// Every target is a class index or ignore_index; checked before any parallel work so the
// error is the first offending lane whatever the participant count.
template <typename I>
Status CheckTargets(const I* target, int64_t lanes, int64_t classes, std::optional<int64_t> ignore_index,
                    const std::string& where) {
  for (int64_t i = 0; i < lanes; ++i) {
    const int64_t t = static_cast<int64_t>(target[i]);
    if (ignore_index && t == *ignore_index) continue;
    if (t < 0 || t >= classes) {
      return InvalidArgument(where, ": target ", t, " at flat index ", i, " is outside [0, ", classes, ")");
    }
  }
  return Status::Ok();
}

template <LossKind K, typename T, typename I>
struct LossLanes {
  using N = Numeric<T>;
  using A = typename N::Acc;
  const T* x;
  const I* target;
  const T* weight;  // null: every class weighs 1
  T* log_prob;      // SCE's optional second output, null when absent
  LossLayout layout;
  std::optional<int64_t> ignore_index;

  // Log-softmax shift (max + log-sum-exp) of the lane starting at `base`, stride inner.
  A SoftmaxShift(const T* lane) const {
    A m = -std::numeric_limits<A>::infinity();
    for (int64_t c = 0; c < layout.classes; ++c) {
      const A v = N::Load(lane[c * layout.inner]);
      m = (std::isnan(v) || v > m) ? v : m;
    }
    A sum = 0;
    for (int64_t c = 0; c < layout.classes; ++c) sum += std::exp(N::Load(lane[c * layout.inner]) - m);
    return m + std::log(sum);
  }

  // The lane's loss and weight.
  std::pair<A, A> Lane(int64_t i) const {
    const int64_t n = i / layout.inner, d = i % layout.inner;
    const int64_t base = n * layout.classes * layout.inner + d;
    const int64_t t = static_cast<int64_t>(target[i]);
    A shift = 0;
    if constexpr (K == LossKind::kSoftmaxCrossEntropy) {
      shift = SoftmaxShift(x + base);
      if (log_prob != nullptr) {
        for (int64_t c = 0; c < layout.classes; ++c) {
          const int64_t at = base + c * layout.inner;
          log_prob[at] = N::Store(N::Load(x[at]) - shift);
        }
      }
    }
    if (ignore_index && t == *ignore_index) return {A(0), A(0)};
    const A w = weight != nullptr ? N::Load(weight[t]) : A(1);
    // Rounded to T as the log_prob output would be, so loss and log_prob agree.
    const A value = N::Load(N::Store(N::Load(x[base + t * layout.inner]) - shift));
    return {-value * w, w};
  }
};

template <LossKind K>
class LossKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string reduction, info.GetString("reduction", "mean"));
    OL_ASSIGN_OR_RETURN(reduction_, ParseReduction(reduction, info.Where()));
    if (info.HasAttribute("ignore_index")) {
      OL_ASSIGN_OR_RETURN(int64_t ignore, info.GetInt("ignore_index"));
      ignore_index_ = ignore;
    }
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* target, ctx.RequiredInput(1));
    const Tensor* weight = ctx.input(2);
    OL_ASSIGN_OR_RETURN(LossLayout layout, CheckShapes(*input, *target, weight, ctx.Where()));
    return DispatchType(FloatTypes{}, input->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return DispatchType(TypeList<int32_t, int64_t>{}, target->dtype(), ctx.Where(), [&](auto index_tag) {
        using I = typename decltype(index_tag)::type;
        return Run<T, I>(ctx, *input, *target, weight, layout);
      });
    });
  }

 private:
  template <typename T, typename I>
  Status Run(KernelContext& ctx, const Tensor& input, const Tensor& target, const Tensor* weight,
             const LossLayout& layout) {
    using Lanes = LossLanes<K, T, I>;
    using A = typename Lanes::A;
    const int64_t lanes = layout.lanes();
    OL_RETURN_IF_ERROR(CheckTargets(target.data<I>(), lanes, layout.classes, ignore_index_, ctx.Where()));
    T* log_prob = nullptr;
    if (K == LossKind::kSoftmaxCrossEntropy && ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(1, input.dtype(), input.shape()));
      log_prob = out->data<T>();
    }
    const Lanes lane{input.data<T>(), target.data<I>(), weight ? weight->data<T>() : nullptr,
                     log_prob,        layout,           ignore_index_};

    Tensor* loss = nullptr;
    A* lane_loss = nullptr;
    A* lane_weight = nullptr;
    std::optional<ScratchArena> scratch;
    if (reduction_ == Reduction::kNone) {
      OL_ASSIGN_OR_RETURN(loss, ctx.AllocateOutput(0, input.dtype(), target.shape()));
    } else {
      OL_ASSIGN_OR_RETURN(loss, ctx.AllocateOutput(0, input.dtype(), Shape()));
      const size_t bytes = 2 * static_cast<size_t>(lanes) * sizeof(A) + 128;
      scratch.emplace(ctx.allocator(), bytes);
      OL_RETURN_IF_ERROR(scratch->status());
      OL_ASSIGN_OR_RETURN(lane_loss, scratch->AllocateArray<A>(lanes));
      OL_ASSIGN_OR_RETURN(lane_weight, scratch->AllocateArray<A>(lanes));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
    }
    T* loss_data = loss->data<T>();
    auto run_lanes = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const auto [l, w] = lane.Lane(i);
        if (lane_loss == nullptr) {
          loss_data[i] = Numeric<T>::Store(l);
        } else {
          lane_loss[i] = l;
          lane_weight[i] = w;
        }
      }
      return Status::Ok();
    };
    // A lane's work in input elements: NLL reads one (its target's), SCE all C of its
    // log-softmax. Counting C for NLL made [64, 1000] (64 look-ups, ~3 us) open a region:
    // 0.91-0.97x of serial at the bb90c10 report's crossover size.
    const int64_t lane_cost = K == LossKind::kNegativeLogLikelihood ? 1 : layout.classes;
    OL_RETURN_IF_ERROR(parallel_.Run(ctx.parallel(), "loss.lanes", lanes, lane_cost, run_lanes));
    if (lane_loss == nullptr) return Status::Ok();
    // Ordered merge in double: the same sum for every participant count.
    double loss_sum = 0, weight_sum = 0;
    for (int64_t i = 0; i < lanes; ++i) loss_sum += lane_loss[i], weight_sum += lane_weight[i];
    const double result = reduction_ == Reduction::kSum ? loss_sum : loss_sum / weight_sum;
    loss_data[0] = Numeric<T>::Store(static_cast<A>(result));
    return Status::Ok();
  }

  Reduction reduction_ = Reduction::kMean;
  std::optional<int64_t> ignore_index_;
  ThresholdedParallel parallel_;
};

using LossFloats = TypeList<Float16, float, double>;
using LossFloatsBf = TypeList<Float16, float, double, BFloat16>;

std::vector<ParamSpec> LossTuning() {
  return {MinimumElementsParam(32768,
                               "input elements read (NLL: one per lane; SCE: C per lane) below which the loss "
                               "runs serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements read")};
}

}  // namespace

OL_REGISTER_KERNELS(loss_family) {
  // NLL 12 -> 13 and 13 -> 22 only widen types; one def per schema version keeps the
  // inventory aligned with onnx.defs.
  Kernel("NegativeLogLikelihoodLoss")
      .Opsets({Since(12, LossFloats{}), Since(13, LossFloats{}), Since(22, LossFloatsBf{})})
      .Tuning(LossTuning())
      .Factory(MakeKernel<LossKernel<LossKind::kNegativeLogLikelihood>>())
      .AddTo(registry);
  Kernel("SoftmaxCrossEntropyLoss")
      .Opsets({Since(12, LossFloats{}), Since(13, LossFloatsBf{})})
      .Tuning(LossTuning())
      .Factory(MakeKernel<LossKernel<LossKind::kSoftmaxCrossEntropy>>())
      .AddTo(registry);
}

}  // namespace onnx_light
