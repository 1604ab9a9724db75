// RNN, GRU and LSTM (opsets 7, 14 with `layout`, 22 with bfloat16): one engine whose
// tasks are the independent (direction, batch row) recurrences; inside a task the time
// steps run in order. Weights are decoded once per run into the compute type (float, or
// double for double tensors) before the region starts; each task owns a slice of
// scratch for its state and gate rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/rnn/activations.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace rnn {
namespace {

using attention::LoadRow;
using attention::StoreRow;

enum class Cell { kRnn, kGru, kLstm };

int GatesOf(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

// Dot product with eight partial sums in a fixed order (vectorisable, deterministic).
template <typename C>
C Dot(const C* a, const C* b, int64_t n) {
  C lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  C sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

struct Problem {
  Cell cell = Cell::kRnn;
  int64_t directions = 1, seq = 0, batch = 0, input = 0, hidden = 0;
  bool reverse_only = false;  // direction == "reverse"
  bool batch_major = false;   // layout == 1
  bool clip = false;
  float clip_value = 0;
  bool linear_before_reset = false, input_forget = false;
  std::vector<Activation> activations;  // per direction: 1 (RNN), 2 (GRU) or 3 (LSTM)
  const Tensor* x = nullptr;
  const int32_t* lengths = nullptr;  // null: every row has `seq` steps
  const Tensor *initial_h = nullptr, *initial_c = nullptr;
  Tensor *y = nullptr, *y_h = nullptr, *y_c = nullptr;

  int64_t XOffset(int64_t t, int64_t b) const { return (batch_major ? b * seq + t : t * batch + b) * input; }
  int64_t YOffset(int64_t t, int64_t d, int64_t b) const {
    return (batch_major ? (b * seq + t) * directions + d : (t * directions + d) * batch + b) * hidden;
  }
  int64_t StateOffset(int64_t d, int64_t b) const {
    return (batch_major ? b * directions + d : d * batch + b) * hidden;
  }
};

// Weights of all directions in the compute type: W (G*H x I), R (G*H x H), Wb, Rb (G*H),
// P (3*H) per direction.
template <typename C>
struct Weights {
  const C *w, *r, *wb, *rb, *p;
};

template <typename C>
class Engine {
 public:
  Engine(const Problem& p, Weights<C> weights) : p_(p), wt_(weights), gh_(GatesOf(p.cell) * p.hidden) {}

  int64_t ScratchElements() const { return p_.input + 4 * p_.hidden + gh_; }

  // One (direction, batch row) recurrence.
  void Run(int64_t d, int64_t b, C* buffer) const {
    const int64_t H = p_.hidden;
    C* x = buffer;
    C* h = x + p_.input;
    C* c = h + H;
    C* gates = c + H;
    C* tmp = gates + gh_;
    C* tmp2 = tmp + H;
    LoadState(p_.initial_h, d, b, h);
    LoadState(p_.initial_c, d, b, c);
    const int64_t length = p_.lengths != nullptr ? p_.lengths[b] : p_.seq;
    const bool reverse = p_.reverse_only || d == 1;
    const C* w = wt_.w + d * gh_ * p_.input;
    const C* r = wt_.r + d * gh_ * H;
    const C* wb = wt_.wb + d * gh_;
    const C* rb = wt_.rb + d * gh_;
    const C* peep = wt_.p + d * 3 * H;
    const Activation* act = p_.activations.data() + d * (p_.activations.size() / p_.directions);
    for (int64_t s = 0; s < length; ++s) {
      const int64_t t = reverse ? length - 1 - s : s;
      LoadRow(p_.x->dtype(), p_.x->raw_data(), p_.XOffset(t, b), p_.input, x);
      switch (p_.cell) {
        case Cell::kRnn:
          RnnStep(w, r, wb, rb, act, x, h, gates);
          break;
        case Cell::kGru:
          GruStep(w, r, wb, rb, act, x, h, gates, tmp);
          break;
        case Cell::kLstm:
          LstmStep(w, r, wb, rb, peep, act, x, h, c, gates, tmp, tmp2);
          break;
      }
      if (p_.y != nullptr) StoreRow(p_.y->dtype(), p_.y->raw_data(), p_.YOffset(t, d, b), h, H);
    }
    if (p_.y != nullptr) {  // steps past the row's length are zero
      std::fill(tmp, tmp + H, C(0));
      for (int64_t t = length; t < p_.seq; ++t) StoreRow(p_.y->dtype(), p_.y->raw_data(), p_.YOffset(t, d, b), tmp, H);
    }
    if (p_.y_h != nullptr) StoreRow(p_.y_h->dtype(), p_.y_h->raw_data(), p_.StateOffset(d, b), h, H);
    if (p_.y_c != nullptr) StoreRow(p_.y_c->dtype(), p_.y_c->raw_data(), p_.StateOffset(d, b), c, H);
  }

 private:
  void LoadState(const Tensor* initial, int64_t d, int64_t b, C* out) const {
    if (initial == nullptr) {
      std::fill(out, out + p_.hidden, C(0));
    } else {
      LoadRow(initial->dtype(), initial->raw_data(), p_.StateOffset(d, b), p_.hidden, out);
    }
  }
  C Clip(C v) const {
    if (!p_.clip) return v;
    const C bound = static_cast<C>(p_.clip_value);
    return std::min(bound, std::max(-bound, v));
  }
  // gates[g] = Wb[g] + Rb[g] + W[g] . x + R[g] . h for gate rows [begin, end).
  void Project(const C* w, const C* r, const C* wb, const C* rb, const C* x, const C* h, int64_t begin, int64_t end,
               C* gates) const {
    for (int64_t g = begin; g < end; ++g) {
      gates[g] = wb[g] + rb[g] + Dot(w + g * p_.input, x, p_.input) + Dot(r + g * p_.hidden, h, p_.hidden);
    }
  }

  void RnnStep(const C* w, const C* r, const C* wb, const C* rb, const Activation* act, const C* x, C* h,
               C* gates) const {
    Project(w, r, wb, rb, x, h, 0, p_.hidden, gates);
    for (int64_t j = 0; j < p_.hidden; ++j) h[j] = act[0](Clip(gates[j]));
  }

  // Gates z, r, h. linear_before_reset applies r after R_h h; otherwise R_h sees r * h.
  void GruStep(const C* w, const C* r, const C* wb, const C* rb, const Activation* act, const C* x, C* h, C* gates,
               C* rh) const {
    const int64_t H = p_.hidden;
    Project(w, r, wb, rb, x, h, 0, 2 * H, gates);
    C* z = gates;
    C* reset = gates + H;
    for (int64_t j = 0; j < 2 * H; ++j) gates[j] = act[0](Clip(gates[j]));
    C* candidate = gates + 2 * H;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t g = 2 * H + j;
      const C from_x = wb[g] + Dot(w + g * p_.input, x, p_.input);
      if (p_.linear_before_reset) {
        candidate[j] = from_x + reset[j] * (Dot(r + g * H, h, H) + rb[g]);
      } else {
        candidate[j] = from_x + rb[g];
      }
    }
    if (!p_.linear_before_reset) {
      for (int64_t j = 0; j < H; ++j) rh[j] = reset[j] * h[j];
      for (int64_t j = 0; j < H; ++j) candidate[j] += Dot(r + (2 * H + j) * H, rh, H);
    }
    for (int64_t j = 0; j < H; ++j) {
      const C hh = act[1](Clip(candidate[j]));
      h[j] = (C(1) - z[j]) * hh + z[j] * h[j];
    }
  }

  // Gates i, o, f, c; peepholes i, o, f.
  void LstmStep(const C* w, const C* r, const C* wb, const C* rb, const C* peep, const Activation* act, const C* x,
                C* h, C* c, C* gates, C* new_c, C* unused) const {
    (void)unused;
    const int64_t H = p_.hidden;
    Project(w, r, wb, rb, x, h, 0, 4 * H, gates);
    const C *pi = peep, *po = peep + H, *pf = peep + 2 * H;
    for (int64_t j = 0; j < H; ++j) {
      const C i = act[0](Clip(gates[j] + pi[j] * c[j]));
      const C f = p_.input_forget ? C(1) - i : act[0](Clip(gates[2 * H + j] + pf[j] * c[j]));
      const C candidate = act[1](Clip(gates[3 * H + j]));
      new_c[j] = f * c[j] + i * candidate;
    }
    for (int64_t j = 0; j < H; ++j) {
      const C o = act[0](Clip(gates[H + j] + po[j] * new_c[j]));
      c[j] = new_c[j];
      h[j] = o * act[2](new_c[j]);
    }
  }

  const Problem& p_;
  const Weights<C> wt_;
  const int64_t gh_;
};

class RecurrentKernel : public OpKernel {
 public:
  explicit RecurrentKernel(Cell cell) : cell_(cell) {}

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(hidden_size_, info.GetInt("hidden_size", 0));
    OL_ASSIGN_OR_RETURN(direction_, info.GetString("direction", "forward"));
    if (direction_ != "forward" && direction_ != "reverse" && direction_ != "bidirectional") {
      return InvalidArgument(info.Where(), ": direction must be forward, reverse or bidirectional, got '", direction_,
                             "'");
    }
    OL_ASSIGN_OR_RETURN(layout_, info.GetInt("layout", 0));
    if (layout_ != 0 && layout_ != 1) return InvalidArgument(info.Where(), ": layout must be 0 or 1, got ", layout_);
    has_clip_ = info.HasAttribute("clip");
    if (has_clip_) {
      OL_ASSIGN_OR_RETURN(clip_, info.GetFloat("clip"));
    }
    OL_ASSIGN_OR_RETURN(int64_t lbr, info.GetInt("linear_before_reset", 0));
    OL_ASSIGN_OR_RETURN(int64_t input_forget, info.GetInt("input_forget", 0));
    linear_before_reset_ = lbr != 0;
    input_forget_ = input_forget != 0;
    OL_ASSIGN_OR_RETURN(std::vector<std::string> names, GetStringsOrEmpty(info, "activations"));
    OL_ASSIGN_OR_RETURN(std::vector<float> alphas, info.GetFloats("activation_alpha", {}));
    OL_ASSIGN_OR_RETURN(std::vector<float> betas, info.GetFloats("activation_beta", {}));
    const std::vector<std::string> defaults = cell_ == Cell::kRnn ? std::vector<std::string>{"Tanh"}
                                              : cell_ == Cell::kGru
                                                  ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    auto activations = ParseActivations(names, alphas, betas, defaults, direction_ == "bidirectional" ? 2 : 1);
    if (!activations.ok()) return InvalidArgument(info.Where(), ": ", activations.status().message());
    activations_ = *activations;
    OL_ASSIGN_OR_RETURN(minimum_multiply_adds_, info.tuning().Int64(param::kMinimumMultiplyAdds));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    Problem p;
    OL_RETURN_IF_ERROR(Describe(ctx, &p));
    const bool is_double = p.x->dtype() == DataType::kDouble;
    return is_double ? Run<double>(ctx, &p) : Run<float>(ctx, &p);
  }

 private:
  static StatusOr<std::vector<std::string>> GetStringsOrEmpty(const KernelInfo& info, const std::string& name) {
    if (!info.HasAttribute(name)) return std::vector<std::string>{};
    return info.GetStrings(name);
  }

  Status Describe(KernelContext& ctx, Problem* p) const;

  template <typename C>
  Status Run(KernelContext& ctx, Problem* p) const {
    const int64_t gh = GatesOf(p->cell) * p->hidden, nd = p->directions;
    const int64_t w_size = nd * gh * p->input, r_size = nd * gh * p->hidden;
    Engine<C> probe(*p, Weights<C>{});
    const int64_t per_task = probe.ScratchElements();
    const ParallelPlan plan{"recurrent.direction_rows", 1};
    const int64_t tasks = nd * p->batch;
    const int64_t work = p->seq * tasks * gh * (p->input + p->hidden);
    const bool parallel = work >= minimum_multiply_adds_;
    const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
    // Decoded weights (one copy of W, R, biases, peepholes) and per-participant rows.
    const size_t weight_elements = static_cast<size_t>(w_size + r_size + 2 * nd * gh + 3 * nd * p->hidden);
    const size_t participant_bytes = (per_task * sizeof(C) + 63) / 64 * 64;
    const size_t total = (weight_elements * sizeof(C) + 63) / 64 * 64 + participant_bytes * participants;
    ScratchArena arena(ctx.allocator(), total);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(C * weights, arena.AllocateArray<C>(weight_elements));
    OL_ASSIGN_OR_RETURN(void* rows, arena.Allocate(participant_bytes * participants));
    ctx.RecordScratch(static_cast<int64_t>(total));
    C* w = weights;
    C* r = w + w_size;
    C* wb = r + r_size;
    C* rb = wb + nd * gh;
    C* peep = rb + nd * gh;
    LoadRow(ctx.input(1)->dtype(), ctx.input(1)->raw_data(), 0, w_size, w);
    LoadRow(ctx.input(2)->dtype(), ctx.input(2)->raw_data(), 0, r_size, r);
    std::fill(wb, peep + 3 * nd * p->hidden, C(0));
    if (const Tensor* bias = ctx.input(3)) {  // (nd, 2*G*H): Wb then Rb per direction
      for (int64_t d = 0; d < nd; ++d) {
        LoadRow(bias->dtype(), bias->raw_data(), d * 2 * gh, gh, wb + d * gh);
        LoadRow(bias->dtype(), bias->raw_data(), d * 2 * gh + gh, gh, rb + d * gh);
      }
    }
    if (p->cell == Cell::kLstm && ctx.input(7) != nullptr) {
      LoadRow(ctx.input(7)->dtype(), ctx.input(7)->raw_data(), 0, 3 * nd * p->hidden, peep);
    }
    ctx.RecordCopy();

    OL_RETURN_IF_ERROR(AllocateOutputs(ctx, p));
    const Engine<C> engine(*p, Weights<C>{w, r, wb, rb, peep});
    auto run = [&](int participant, int64_t begin, int64_t end) {
      C* buffer = reinterpret_cast<C*>(static_cast<char*>(rows) + participant_bytes * participant);
      for (int64_t task = begin; task < end; ++task) engine.Run(task / p->batch, task % p->batch, buffer);
      return Status::Ok();
    };
    if (!parallel) return run(0, 0, tasks);
    return ParallelForWithParticipant(ctx.parallel(), tasks, plan, run);
  }

  Status AllocateOutputs(KernelContext& ctx, Problem* p) const {
    const DataType t = p->x->dtype();
    const int64_t nd = p->directions, b = p->batch, h = p->hidden, s = p->seq;
    const Shape state = p->batch_major ? Shape{b, nd, h} : Shape{nd, b, h};
    if (ctx.num_outputs() > 0) {
      OL_ASSIGN_OR_RETURN(p->y, ctx.AllocateOutput(0, t, p->batch_major ? Shape{b, s, nd, h} : Shape{s, nd, b, h}));
    }
    if (ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(p->y_h, ctx.AllocateOutput(1, t, state));
    }
    if (ctx.num_outputs() > 2 && p->cell == Cell::kLstm) {
      OL_ASSIGN_OR_RETURN(p->y_c, ctx.AllocateOutput(2, t, state));
    }
    return Status::Ok();
  }

  Cell cell_;
  int64_t hidden_size_ = 0, layout_ = 0;
  std::string direction_;
  bool has_clip_ = false;
  float clip_ = 0;
  bool linear_before_reset_ = false, input_forget_ = false;
  std::vector<Activation> activations_;
  int64_t minimum_multiply_adds_ = 0;
};

bool IsRecurrentFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kDouble;
}

Status RecurrentKernel::Describe(KernelContext& ctx, Problem* p) const {
  OL_ASSIGN_OR_RETURN(p->x, ctx.RequiredInput(0));
  OL_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequiredInput(1));
  OL_ASSIGN_OR_RETURN(const Tensor* r, ctx.RequiredInput(2));
  const DataType t = p->x->dtype();
  const Shape &xs = p->x->shape(), &ws = w->shape(), &rs = r->shape();
  p->cell = cell_;
  p->directions = direction_ == "bidirectional" ? 2 : 1;
  p->reverse_only = direction_ == "reverse";
  p->batch_major = layout_ == 1;
  const int64_t gates = GatesOf(cell_);
  if (!IsRecurrentFloat(t) || w->dtype() != t || r->dtype() != t || xs.rank() != 3 || ws.rank() != 3 ||
      rs.rank() != 3 || ws[0] != p->directions || rs[0] != p->directions || rs[1] % gates != 0 ||
      rs[1] / gates != rs[2] || ws[1] != rs[1] || ws[2] != xs[2] || (hidden_size_ != 0 && rs[2] != hidden_size_)) {
    return InvalidArgument(ctx.Where(), ": X, W, R must be float tensors (seq, batch, input), (dirs, ", gates,
                           "*hidden, input), (dirs, ", gates, "*hidden, hidden) with ", p->directions,
                           " direction(s) and hidden_size ", hidden_size_, "; got ", p->x->TypeAndShape(), ", ",
                           w->TypeAndShape(), ", ", r->TypeAndShape());
  }
  p->seq = p->batch_major ? xs[1] : xs[0];
  p->batch = p->batch_major ? xs[0] : xs[1];
  p->input = xs[2];
  p->hidden = rs[2];
  p->clip = has_clip_;
  p->clip_value = clip_;
  p->linear_before_reset = linear_before_reset_;
  p->input_forget = input_forget_;
  p->activations = activations_;
  auto expect = [&](const Tensor* tensor, const Shape& shape, const char* name) -> Status {
    if (tensor != nullptr && (tensor->dtype() != t || tensor->shape() != shape)) {
      return InvalidArgument(ctx.Where(), ": ", name, " must be ", DataTypeName(t), shape, ", got ",
                             tensor->TypeAndShape());
    }
    return Status::Ok();
  };
  const int64_t nd = p->directions, h = p->hidden;
  OL_RETURN_IF_ERROR(expect(ctx.input(3), Shape{nd, 2 * gates * h}, "B"));
  const Shape state = p->batch_major ? Shape{p->batch, nd, h} : Shape{nd, p->batch, h};
  p->initial_h = ctx.input(5);
  OL_RETURN_IF_ERROR(expect(p->initial_h, state, "initial_h"));
  if (cell_ == Cell::kLstm) {
    p->initial_c = ctx.input(6);
    OL_RETURN_IF_ERROR(expect(p->initial_c, state, "initial_c"));
    OL_RETURN_IF_ERROR(expect(ctx.input(7), Shape{nd, 3 * h}, "P"));
  }
  if (const Tensor* lengths = ctx.input(4)) {
    if (lengths->dtype() != DataType::kInt32 || lengths->shape() != Shape{p->batch}) {
      return InvalidArgument(ctx.Where(), ": sequence_lens must be int32 (", p->batch, "), got ",
                             lengths->TypeAndShape());
    }
    p->lengths = lengths->data<int32_t>();
    for (int64_t b = 0; b < p->batch; ++b) {
      if (p->lengths[b] < 0 || p->lengths[b] > p->seq) {
        return InvalidArgument(ctx.Where(), ": sequence_lens[", b, "] = ", p->lengths[b], " outside [0, ", p->seq, "]");
      }
    }
  }
  return Status::Ok();
}

template <Cell kCell>
KernelFactory MakeRecurrent() {
  return [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
    auto kernel = std::make_unique<RecurrentKernel>(kCell);
    OL_RETURN_IF_ERROR(kernel->Init(info));
    return std::unique_ptr<OpKernel>(std::move(kernel));
  };
}

}  // namespace

OL_REGISTER_KERNELS(recurrent) {
  using Base = TypeList<float, Float16, double>;
  using WithBf16 = decltype(Base{} + TypeList<BFloat16>{});
  // Steps are ordered; (direction, batch row) recurrences are the independent work. The
  // threshold follows the attention family's cost model (2^22 multiply-adds).
  const std::vector<ParamSpec> tuning = {ParamSpec::Int64(
      param::kMinimumMultiplyAdds, int64_t{1} << 22, 1, int64_t{1} << 50,
      "gate multiply-adds (steps x directions x batch x gates x (input + hidden)) below which rows run serially")};
  const struct {
    const char* op;
    KernelFactory factory;
  } ops[] = {{"RNN", MakeRecurrent<Cell::kRnn>()},
             {"GRU", MakeRecurrent<Cell::kGru>()},
             {"LSTM", MakeRecurrent<Cell::kLstm>()}};
  for (const auto& op : ops) {
    // 7: base; 14: layout; 22: bfloat16.
    Kernel(op.op)
        .Opsets({Since(7, Base{}), Since(14, Base{}), Since(22, WithBf16{})})
        .Tuning(tuning)
        .Factory(op.factory)
        .AddTo(registry);
  }
}

}  // namespace rnn
}  // namespace onnx_light
