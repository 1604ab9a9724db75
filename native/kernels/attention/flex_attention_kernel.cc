// FlexAttention (ai.onnx.preview, opset 1): rank-4 scaled dot-product attention with
// optional score_mod / prob_mod subgraphs. Without modifiers it is one run of the
// attention engine. A modifier sees a whole (B, Hq, L, S) tensor, so with modifiers the
// engine runs split: scores -> score_mod -> row softmax -> prob_mod -> PV; each stage is
// parallel over independent rows or (batch, head, query-tile) tasks.
#include <algorithm>
#include <cmath>
#include <memory>

#include "native/executor/parallel_for.h"
#include "native/kernels/attention/attention_core.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/simd/rows.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace attention {
namespace {

// softmax_precision values the schema allows, as element types.
StatusOr<DataType> PrecisionType(int64_t precision) {
  switch (precision) {
    case 1:
      return DataType::kFloat;
    case 10:
      return DataType::kFloat16;
    case 11:
      return DataType::kDouble;
    case 16:
      return DataType::kBFloat16;
    default:
      return InvalidArgument("softmax_precision must be 1, 10, 11 or 16, got ", precision);
  }
}

// In-place softmax of rows [begin, end) of a (rows x n) tensor, computed in C.
template <typename C>
void SoftmaxRows(Tensor& t, int64_t n, int64_t begin, int64_t end, C* row) {
  for (int64_t r = begin; r < end; ++r) {
    LoadRow(t.dtype(), t.raw_data(), r * n, n, row);
    const C sum = simd::ExpShiftedSum(row, n, simd::RowMax(row, n));
    simd::ScaleRow(row, n, C(1) / sum);
    StoreRow(t.dtype(), t.raw_data(), r * n, row, n);
  }
}

class FlexAttentionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_scale_ = info.HasAttribute("scale");
    if (has_scale_) {
      OL_ASSIGN_OR_RETURN(scale_, info.GetFloat("scale"));
    }
    if (info.HasAttribute("softmax_precision")) {
      OL_ASSIGN_OR_RETURN(int64_t precision, info.GetInt("softmax_precision"));
      auto type = PrecisionType(precision);
      if (!type.ok()) return InvalidArgument(info.Where(), ": ", type.status().message());
      softmax_type_ = *type;
    }
    if (info.HasAttribute("score_mod")) {
      OL_ASSIGN_OR_RETURN(score_mod_, info.GetGraph("score_mod"));
    }
    if (info.HasAttribute("prob_mod")) {
      OL_ASSIGN_OR_RETURN(prob_mod_, info.GetGraph("prob_mod"));
    }
    OL_ASSIGN_OR_RETURN(tuning_, ReadAttentionTuning(info));
    OL_ASSIGN_OR_RETURN(softmax_minimum_elements_, info.tuning().Int64(param::kMinimumElements));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    AttentionProblem p;
    OL_RETURN_IF_ERROR(Describe(ctx, &p));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, p.q.type, Shape{p.batch, p.q_heads, p.q_seq, p.v_head_size}));
    p.y = MutableRowView{y->raw_data(), y->dtype(), p.q_heads * p.q_seq * p.v_head_size, p.q_seq * p.v_head_size,
                         p.v_head_size};
    if (score_mod_ == nullptr && prob_mod_ == nullptr) return RunAttention(ctx, p, tuning_);
    if (ctx.subgraphs() == nullptr) {
      return NotImplemented(ctx.Where(), ": score_mod/prob_mod need a session to run their graphs");
    }
    return RunWithModifiers(ctx, &p);
  }

 private:
  Status Describe(KernelContext& ctx, AttentionProblem* p) const {
    OL_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* k, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequiredInput(2));
    const Shape &qs = q->shape(), &ks = k->shape(), &vs = v->shape();
    if (!IsAttentionFloat(q->dtype()) || k->dtype() != q->dtype() || v->dtype() != q->dtype() || qs.rank() != 4 ||
        ks.rank() != 4 || vs.rank() != 4 || ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] ||
        vs[2] != ks[2] || ks[1] <= 0 || qs[1] % ks[1] != 0) {
      return InvalidArgument(ctx.Where(), ": Q, K, V must be rank-4 of one float type with matching batch, head ",
                             "size and kv sequence, query heads a multiple of kv heads; got ", q->TypeAndShape(), ", ",
                             k->TypeAndShape(), ", ", v->TypeAndShape());
    }
    auto view = [](const Tensor& t) {
      const Shape& s = t.shape();
      return RowView{t.raw_data(), t.dtype(), s[1] * s[2] * s[3], s[2] * s[3], s[3]};
    };
    p->batch = qs[0];
    p->q_heads = qs[1];
    p->kv_heads = ks[1];
    p->q_seq = qs[2];
    p->new_kv_seq = ks[2];
    p->head_size = qs[3];
    p->v_head_size = vs[3];
    p->q = view(*q);
    p->k = view(*k);
    p->v = view(*v);
    p->scale = has_scale_ ? scale_ : 1.0 / std::sqrt(static_cast<double>(p->head_size));
    return Status::Ok();
  }

  // Runs one modifier graph on `input`; its single output must keep shape and type.
  StatusOr<Tensor> Modify(KernelContext& ctx, const Graph& graph, const Tensor& input, const char* name) const {
    OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, ctx.subgraphs()->Run(graph, {Value(input)}));
    if (outputs.size() != 1 || !outputs[0].is_tensor() || outputs[0].tensor().dtype() != input.dtype() ||
        outputs[0].tensor().shape() != input.shape()) {
      return InvalidArgument(ctx.Where(), ": ", name, " must return one tensor like its input ", input.TypeAndShape());
    }
    return outputs[0].tensor();
  }

  Status RunWithModifiers(KernelContext& ctx, AttentionProblem* p) const {
    // Modifiers see softmax-precision tensors: float unless the inputs are double or an
    // explicit softmax_precision says otherwise.
    const DataType score_type = softmax_type_ != DataType::kUndefined ? softmax_type_
                                : p->q.type == DataType::kDouble      ? DataType::kDouble
                                                                      : DataType::kFloat;
    const Shape score_shape{p->batch, p->q_heads, p->q_seq, p->kv_seq()};
    OL_ASSIGN_OR_RETURN(Tensor scores, Tensor::Allocate(score_type, score_shape, ctx.allocator()));
    AttentionProblem scores_run = *p;
    scores_run.scores_only = true;
    scores_run.qk_output = scores.raw_data();
    scores_run.qk_type = score_type;
    OL_RETURN_IF_ERROR(RunAttention(ctx, scores_run, tuning_));
    if (score_mod_ != nullptr) {
      OL_ASSIGN_OR_RETURN(scores, Modify(ctx, *score_mod_, scores, "score_mod"));
    }

    // The softmax writes a fresh tensor: the modifier's output may alias its input.
    OL_ASSIGN_OR_RETURN(Tensor probs, scores.Clone(ctx.allocator()));
    ctx.RecordCopy();
    OL_RETURN_IF_ERROR(Softmax(ctx, probs, p->kv_seq()));
    if (prob_mod_ != nullptr) {
      OL_ASSIGN_OR_RETURN(probs, Modify(ctx, *prob_mod_, probs, "prob_mod"));
    }

    const int64_t s = p->kv_seq();
    p->probabilities = RowView{probs.raw_data(), probs.dtype(), p->q_heads * p->q_seq * s, p->q_seq * s, s};
    return RunAttention(ctx, *p, tuning_);
  }

  Status Softmax(KernelContext& ctx, Tensor& t, int64_t n) const {
    const int64_t rows = n == 0 ? 0 : t.num_elements() / n;
    const bool is_double = t.dtype() == DataType::kDouble;
    const ParallelPlan plan{"flex_attention.softmax_rows", std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1))};
    const bool parallel = t.num_elements() >= softmax_minimum_elements_;
    const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
    const size_t row_bytes = static_cast<size_t>((n * (is_double ? 8 : 4) + 63) / 64 * 64);
    ScratchArena arena(ctx.allocator(), row_bytes * participants);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(void* scratch, arena.Allocate(row_bytes * participants));
    ctx.RecordScratch(static_cast<int64_t>(row_bytes * participants));
    auto run = [&](int participant, int64_t begin, int64_t end) {
      void* row = static_cast<char*>(scratch) + row_bytes * participant;
      if (is_double) {
        SoftmaxRows(t, n, begin, end, static_cast<double*>(row));
      } else {
        SoftmaxRows(t, n, begin, end, static_cast<float*>(row));
      }
      return Status::Ok();
    };
    if (!parallel) return run(0, 0, rows);
    return ParallelForWithParticipant(ctx.parallel(), rows, plan, run);
  }

  bool has_scale_ = false;
  float scale_ = 1.0f;
  DataType softmax_type_ = DataType::kUndefined;
  std::shared_ptr<const Graph> score_mod_, prob_mod_;
  AttentionTuning tuning_;
  int64_t softmax_minimum_elements_ = 0;
};

}  // namespace

OL_REGISTER_KERNELS(flex_attention) {
  std::vector<ParamSpec> tuning = AttentionTuningSpecs();
  tuning.push_back(MinimumElementsParam(32768, "score elements below which the modifier-path softmax runs serially"));
  Kernel("FlexAttention")
      .Domain("ai.onnx.preview")
      .Opsets({Since(1, TypeList<float, Float16, BFloat16, double>{})})
      .Tuning(tuning)
      .Factory(MakeKernel<FlexAttentionKernel>())
      .AddTo(registry);
}

}  // namespace attention
}  // namespace onnx_light
