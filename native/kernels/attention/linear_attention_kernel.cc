// LinearAttention (opset 27): the recurrent state S (d_k x d_v) of each (batch, kv head)
// is updated token by token (linear, gated, delta or gated-delta rule) and read by the
// head's query group. Time steps stay ordered; (batch, kv head) recurrences are
// independent, so they are the parallel tasks, each with its own state in scratch.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace attention {
namespace {

bool IsLinearAttentionFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

struct Recurrence {
  int64_t batch = 0, steps = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool gated = false, delta = false;
  float scale = 1;
  const Tensor *query = nullptr, *key = nullptr, *value = nullptr, *past = nullptr;
  const Tensor *decay = nullptr, *beta = nullptr;
  bool decay_per_key = false;  // decay (B, T, Hkv*dk) rather than (B, T, Hkv)
  bool beta_per_head = false;  // beta (B, T, Hkv) rather than (B, T, 1)
  Tensor* output = nullptr;
  Tensor* present = nullptr;
};

// One (batch, kv head) recurrence over all steps; `buffer` holds the state and rows.
void RunRecurrence(const Recurrence& r, int64_t b, int64_t kvh, float* buffer) {
  const int64_t dk = r.dk, dv = r.dv, group = r.q_heads / r.kv_heads;
  float* state = buffer;  // dk x dv, row d holds S[d, :]
  float* k = state + dk * dv;
  float* v = k + dk;
  float* q = v + dv;
  float* decay = q + dk;
  float* out = decay + dk;
  const int64_t state_offset = (b * r.kv_heads + kvh) * dk * dv;
  if (r.past != nullptr) {
    LoadRow(r.past->dtype(), r.past->raw_data(), state_offset, dk * dv, state);
  } else {
    std::fill(state, state + dk * dv, 0.0f);
  }
  for (int64_t t = 0; t < r.steps; ++t) {
    const int64_t bt = b * r.steps + t;
    LoadRow(r.key->dtype(), r.key->raw_data(), (bt * r.kv_heads + kvh) * dk, dk, k);
    LoadRow(r.value->dtype(), r.value->raw_data(), (bt * r.kv_heads + kvh) * dv, dv, v);
    if (r.gated) {  // S *= exp(g), per key dimension or per head
      if (r.decay_per_key) {
        LoadRow(r.decay->dtype(), r.decay->raw_data(), (bt * r.kv_heads + kvh) * dk, dk, decay);
      } else {
        LoadRow(r.decay->dtype(), r.decay->raw_data(), bt * r.kv_heads + kvh, 1, decay);
        std::fill(decay + 1, decay + dk, decay[0]);
      }
      for (int64_t d = 0; d < dk; ++d) {
        const float e = std::exp(decay[d]);
        for (int64_t m = 0; m < dv; ++m) state[d * dv + m] *= e;
      }
    }
    if (r.delta) {  // v <- beta * (v - S^T k)
      float beta;
      LoadRow(r.beta->dtype(), r.beta->raw_data(), r.beta_per_head ? bt * r.kv_heads + kvh : bt, 1, &beta);
      std::fill(out, out + dv, 0.0f);
      for (int64_t d = 0; d < dk; ++d) {
        for (int64_t m = 0; m < dv; ++m) out[m] += state[d * dv + m] * k[d];
      }
      for (int64_t m = 0; m < dv; ++m) v[m] = beta * (v[m] - out[m]);
    }
    for (int64_t d = 0; d < dk; ++d) {  // S += k v^T
      for (int64_t m = 0; m < dv; ++m) state[d * dv + m] += k[d] * v[m];
    }
    for (int64_t g = 0; g < group; ++g) {  // o = scale * q^T S for each query head of the group
      const int64_t h = kvh * group + g;
      LoadRow(r.query->dtype(), r.query->raw_data(), (bt * r.q_heads + h) * dk, dk, q);
      std::fill(out, out + dv, 0.0f);
      for (int64_t d = 0; d < dk; ++d) {
        for (int64_t m = 0; m < dv; ++m) out[m] += q[d] * state[d * dv + m];
      }
      for (int64_t m = 0; m < dv; ++m) out[m] *= r.scale;
      StoreRow(r.output->dtype(), r.output->raw_data(), (bt * r.q_heads + h) * dv, out, dv);
    }
  }
  StoreRow(r.present->dtype(), r.present->raw_data(), state_offset, state, dk * dv);
}

class LinearAttentionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(q_heads_, info.GetInt("q_num_heads"));
    OL_ASSIGN_OR_RETURN(kv_heads_, info.GetInt("kv_num_heads"));
    OL_ASSIGN_OR_RETURN(scale_, info.GetFloat("scale", 0.0f));
    OL_ASSIGN_OR_RETURN(std::string rule, info.GetString("update_rule", "gated_delta"));
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
      return InvalidArgument(info.Where(), ": update_rule must be linear, gated, delta or gated_delta, got '", rule,
                             "'");
    }
    gated_ = rule == "gated" || rule == "gated_delta";
    delta_ = rule == "delta" || rule == "gated_delta";
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0) {
      return InvalidArgument(info.Where(), ": q_num_heads (", q_heads_,
                             ") must be a positive multiple of kv_num_heads (", kv_heads_, ")");
    }
    OL_ASSIGN_OR_RETURN(minimum_multiply_adds_, info.tuning().Int64(param::kMinimumMultiplyAdds));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    Recurrence r;
    OL_RETURN_IF_ERROR(Describe(ctx, &r));
    const DataType state_type = r.past != nullptr ? r.past->dtype() : r.query->dtype();
    OL_ASSIGN_OR_RETURN(r.output, ctx.AllocateOutput(0, r.query->dtype(), Shape{r.batch, r.steps, r.q_heads * r.dv}));
    OL_ASSIGN_OR_RETURN(r.present, ctx.AllocateOutput(1, state_type, Shape{r.batch, r.kv_heads, r.dk, r.dv}));

    const ParallelPlan plan{"linear_attention.kv_heads", 1};
    const int64_t work = r.batch * r.steps * r.kv_heads * r.dk * r.dv * (r.q_heads / r.kv_heads + 3);
    const bool parallel = work >= minimum_multiply_adds_;
    const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
    // Per participant: the state and five rows; independent of batch, heads and steps.
    const int64_t per_participant = r.dk * r.dv + 3 * r.dk + 2 * r.dv;
    const size_t stride = static_cast<size_t>((per_participant * 4 + 63) / 64 * 64);
    ScratchArena arena(ctx.allocator(), stride * participants);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(void* scratch, arena.Allocate(stride * participants));
    ctx.RecordScratch(static_cast<int64_t>(stride * participants));
    auto run = [&](int participant, int64_t begin, int64_t end) {
      float* buffer = reinterpret_cast<float*>(static_cast<char*>(scratch) + stride * participant);
      for (int64_t task = begin; task < end; ++task) RunRecurrence(r, task / r.kv_heads, task % r.kv_heads, buffer);
      return Status::Ok();
    };
    const int64_t tasks = r.batch * r.kv_heads;
    if (!parallel) return run(0, 0, tasks);
    return ParallelForWithParticipant(ctx.parallel(), tasks, plan, run);
  }

 private:
  Status Describe(KernelContext& ctx, Recurrence* r) const {
    OL_ASSIGN_OR_RETURN(r->query, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(r->key, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(r->value, ctx.RequiredInput(2));
    r->past = ctx.input(3);
    r->decay = ctx.input(4);
    r->beta = ctx.input(5);
    const Shape &qs = r->query->shape(), &ks = r->key->shape(), &vs = r->value->shape();
    const DataType t = r->query->dtype();
    if (!IsLinearAttentionFloat(t) || r->key->dtype() != t || r->value->dtype() != t || qs.rank() != 3 ||
        ks.rank() != 3 || vs.rank() != 3 || qs[2] % q_heads_ != 0 || ks[2] % kv_heads_ != 0 || vs[2] % kv_heads_ != 0 ||
        ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != qs[1] || vs[1] != qs[1] || ks[2] / kv_heads_ != qs[2] / q_heads_) {
      return InvalidArgument(ctx.Where(), ": query, key and value must be (B, T, heads*d) of one float type with ",
                             q_heads_, " query and ", kv_heads_, " kv heads sharing d_k; got ",
                             r->query->TypeAndShape(), ", ", r->key->TypeAndShape(), ", ", r->value->TypeAndShape());
    }
    *r = Recurrence{qs[0], qs[1],    q_heads_, kv_heads_, qs[2] / q_heads_, vs[2] / kv_heads_, gated_, delta_,
                    1.0f,  r->query, r->key,   r->value,  r->past,          r->decay,          r->beta};
    r->scale = scale_ != 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(r->dk)));
    if (r->past != nullptr &&
        (!IsLinearAttentionFloat(r->past->dtype()) || r->past->shape() != Shape{r->batch, r->kv_heads, r->dk, r->dv})) {
      return InvalidArgument(ctx.Where(), ": past_state must be float (", r->batch, ", ", r->kv_heads, ", ", r->dk,
                             ", ", r->dv, "), got ", r->past->TypeAndShape());
    }
    if (gated_ != (r->decay != nullptr) || delta_ != (r->beta != nullptr)) {
      return InvalidArgument(ctx.Where(),
                             ": decay is required exactly for gated rules and beta exactly for delta rules");
    }
    if (r->decay != nullptr) {
      const Shape& ds = r->decay->shape();
      r->decay_per_key = ds.rank() == 3 && ds[2] == r->kv_heads * r->dk && r->dk != 1;
      if (r->decay->dtype() != t || ds.rank() != 3 || ds[0] != r->batch || ds[1] != r->steps ||
          (ds[2] != r->kv_heads && ds[2] != r->kv_heads * r->dk)) {
        return InvalidArgument(ctx.Where(), ": decay must be (B, T, kv_heads) or (B, T, kv_heads*d_k), got ",
                               r->decay->TypeAndShape());
      }
    }
    if (r->beta != nullptr) {
      const Shape& bs = r->beta->shape();
      r->beta_per_head = bs.rank() == 3 && bs[2] == r->kv_heads;
      if (r->beta->dtype() != t || bs.rank() != 3 || bs[0] != r->batch || bs[1] != r->steps ||
          (bs[2] != r->kv_heads && bs[2] != 1)) {
        return InvalidArgument(ctx.Where(), ": beta must be (B, T, kv_heads) or (B, T, 1), got ",
                               r->beta->TypeAndShape());
      }
    }
    return Status::Ok();
  }

  int64_t q_heads_ = 0, kv_heads_ = 0;
  float scale_ = 0;
  bool gated_ = true, delta_ = true;
  int64_t minimum_multiply_adds_ = 0;
};

}  // namespace

OL_REGISTER_KERNELS(linear_attention) {
  Kernel("LinearAttention")
      .Opsets({Since(27, TypeList<float, Float16, BFloat16>{})})
      // Same cost model as Attention's threshold (attention_core.cc).
      .Tuning({ParamSpec::Int64(param::kMinimumMultiplyAdds, int64_t{1} << 22, 1, int64_t{1} << 50,
                                "state update and read multiply-adds below which heads run serially")})
      .Factory(MakeKernel<LinearAttentionKernel>())
      .AddTo(registry);
}

}  // namespace attention
}  // namespace onnx_light
