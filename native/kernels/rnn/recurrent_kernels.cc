// RNN, GRU and LSTM (opsets 7, 14 with `layout`, 22 with bfloat16) on one driver:
//
//  1. the input projection X W^T of every time step and both directions is one GEMM
//     (gemm engine; W packed once at creation when it is a constant);
//  2. the time steps run in order; in each, the recurrent product H_{t-1} R^T and the gate
//     math run as independent tasks over (direction, hidden-unit block, batch-row block):
//     a task multiplies its rows of H_{t-1} by its block's rows of R and applies the gates
//     on whole rows: a float LSTM with the default activations, no clip and no
//     input_forget in one pass per row with every gate of a unit in registers
//     (GateRows::lstm), a float GRU with the default activations and no clip likewise
//     in one pass per round (GateRows' GRU rows), otherwise gate by gate (gate_rows.h's vectorised sigmoid/tanh,
//     activations.cc for the others).
//     R is packed once per block (at creation for constant weights) twice: for the gemm
//     engine's tile and in gate_rows.h's step panels. Up to kStepPanelRows rows take the
//     step product on the panels (every row's accumulators in registers, R read once per
//     step: the small-batch case, where a 12-row GEMM tile would be mostly padding); one
//     row takes the engine's GEMV over the dense rows; more rows the packed GEMM;
//     a step opens a parallel region only when its own multiply-adds reach the tuned
//     minimum (the executor has no barrier that would let one region span the steps: a
//     worker that has not joined a region is released, so its blocks must be claimable);
//  3. GRU without linear_before_reset needs r * H_{t-1} of every unit before its
//     candidate product, so its step is two rounds of tasks.
//
// Gate columns are ordered (direction, block, gate, unit) in every matrix, so that a
// block's gates are contiguous. The blocks come from the tuning, never from the number of
// participants, and every task computes the same thing whoever runs it: outputs are
// bit-identical for any participant count. Float, float16 and bfloat16 compute in float
// (the gemm engine), double in double (plain loops in a fixed order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/rnn/activations.h"
#include "native/kernels/rnn/gate_rows.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace rnn {
namespace {

// Rows of a step task up to which the product runs on gate_rows.h's step panels (up to 8
// rows per AVX-512 pass, 3 per AVX2 pass; beyond 8 the GEMM tile's reuse of R wins).
constexpr int64_t kStepPanelRows = 8;

using attention::LoadRow;
using attention::StoreRow;

enum class Cell { kRnn, kGru, kLstm };

int GatesOf(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
// Rounds of tasks per step (and row groups of a block's R): GRU without
// linear_before_reset needs r * H_{t-1} complete before its candidate product.
int PartsOf(Cell cell, bool linear_before_reset) { return cell == Cell::kGru && !linear_before_reset ? 2 : 1; }

// Dot product with eight partial sums in a fixed order (the double path's products).
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

// Hidden units cut into blocks of `block`; a direction's G*H gate columns are ordered
// (block, gate, unit in block).
struct GateLayout {
  int64_t gates = 1, hidden = 0, block = 1;
  int parts = 1;

  int64_t blocks() const { return hidden == 0 ? 0 : (hidden + block - 1) / block; }
  int64_t begin(int64_t blk) const { return blk * block; }
  int64_t size(int64_t blk) const { return std::min(block, hidden - blk * block); }
  int64_t Column(int64_t g, int64_t j) const {
    const int64_t blk = j / block, j0 = blk * block;
    return gates * j0 + g * size(blk) + (j - j0);
  }
  // The gate rows (within a direction) that round `part` of block `blk` multiplies.
  void PartRows(int64_t blk, int part, int64_t* first, int64_t* count) const {
    const int64_t n = size(blk), base = gates * begin(blk);
    if (parts == 1) {
      *first = base, *count = gates * n;
    } else {  // GRU: z and r first, then h
      *first = part == 0 ? base : base + 2 * n;
      *count = part == 0 ? 2 * n : n;
    }
  }
};

// W (cols = input) or R (cols = hidden) of every direction, rows in the layout's order.
template <typename C>
void PermuteRows(const Tensor& t, int64_t directions, const GateLayout& layout, int64_t cols, C* out) {
  const int64_t gh = layout.gates * layout.hidden;
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t g = 0; g < layout.gates; ++g) {
      for (int64_t j = 0; j < layout.hidden; ++j) {
        LoadRow(t.dtype(), t.raw_data(), ((d * layout.gates + g) * layout.hidden + j) * cols, cols,
                out + (d * gh + layout.Column(g, j)) * cols);
      }
    }
  }
}

// R's blocks packed for the step products: one per (direction, block, part).
StatusOr<std::vector<std::shared_ptr<const gemm::PrepackedB>>> PackBlocks(Allocator* allocator, const float* r,
                                                                          int64_t directions,
                                                                          const GateLayout& layout) {
  std::vector<std::shared_ptr<const gemm::PrepackedB>> packed;
  const int64_t gh = layout.gates * layout.hidden;
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t blk = 0; blk < layout.blocks(); ++blk) {
      for (int part = 0; part < layout.parts; ++part) {
        int64_t first = 0, count = 0;
        layout.PartRows(blk, part, &first, &count);
        OL_ASSIGN_OR_RETURN(auto b, gemm::PrepackedB::Create(allocator, /*trans_b=*/true, layout.hidden, count,
                                                             r + (d * gh + first) * layout.hidden, layout.hidden));
        packed.push_back(std::move(b));
      }
    }
  }
  return packed;
}

// R's blocks in gate_rows.h's step panels, one run of panels per (direction, block, part)
// at offsets[(d * blocks + blk) * parts + part]; offsets.back() is the total.
std::vector<int64_t> PanelOffsets(int64_t directions, const GateLayout& layout) {
  std::vector<int64_t> offsets = {0};
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t blk = 0; blk < layout.blocks(); ++blk) {
      for (int part = 0; part < layout.parts; ++part) {
        int64_t first = 0, count = 0;
        layout.PartRows(blk, part, &first, &count);
        offsets.push_back(offsets.back() + StepPanelFloats(count, layout.hidden));
      }
    }
  }
  return offsets;
}

void PackPanels(const float* r, int64_t directions, const GateLayout& layout, const std::vector<int64_t>& offsets,
                float* panels) {
  const int64_t gh = layout.gates * layout.hidden;
  size_t i = 0;
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t blk = 0; blk < layout.blocks(); ++blk) {
      for (int part = 0; part < layout.parts; ++part, ++i) {
        int64_t first = 0, count = 0;
        layout.PartRows(blk, part, &first, &count);
        PackStepPanels(r + (d * gh + first) * layout.hidden, count, layout.hidden, layout.hidden, panels + offsets[i]);
      }
    }
  }
}

// Weights in the layout's order, in the compute type.
template <typename C>
struct PreparedWeights {
  const C* w = nullptr;  // (directions * G*H) x input
  const C* r = nullptr;  // (directions * G*H) x hidden
  // Float only: W packed (constant weights), and R's blocks (always) for the engine and
  // in step panels.
  std::shared_ptr<const gemm::PrepackedB> w_packed;
  std::vector<std::shared_ptr<const gemm::PrepackedB>> r_packed;
  const float* r_panels = nullptr;
  std::vector<int64_t> panel_offsets;
};

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

  // Row of X (and of the projection) holding step t of batch row b.
  int64_t XRow(int64_t t, int64_t b) const { return batch_major ? b * seq + t : t * batch + b; }
  int64_t YOffset(int64_t t, int64_t d, int64_t b) const {
    return (batch_major ? (b * seq + t) * directions + d : (t * directions + d) * batch + b) * hidden;
  }
  int64_t StateOffset(int64_t d, int64_t b) const {
    return (batch_major ? b * directions + d : d * batch + b) * hidden;
  }
  int64_t Length(int64_t b) const { return lengths != nullptr ? lengths[b] : seq; }
};

// One run's buffers; Task() is one (round, direction, block, row block) of a step.
template <typename C>
struct Stepper {
  const Problem* p;
  GateLayout layout;
  const PreparedWeights<C>* wt;
  const C* xp;       // projection: row XRow(t, b), directions * G*H columns, layout order
  const C* bias_x;   // directions * G*H, layout order: Wb + Rb (GRU's h gate: Wb only)
  const C* bias_rh;  // directions * H: GRU's Rb of the h gate, unit order
  const C* peep;     // directions * 3H, unit order (zeros when absent)
  C* h_cur;          // directions * batch * H
  C* h_next;
  C* cell;
  C* gates;    // directions * batch * G*H, layout order
  C* reset_h;  // GRU without linear_before_reset: r * H_{t-1}, directions * batch * H
  int64_t row_block = 1;
  const GateRows* step_rows = &BestGateRows();
  // Float LSTM with the default activations, no clip, no input_forget: GateRows::lstm.
  bool fused_lstm = false;
  // Float GRU with the default activations, no clip: GateRows' GRU rows.
  bool fused_gru = false;
  size_t gemm_scratch_bytes = 0;  // float: the step product's packing scratch (a multiple of 64)

  int64_t row_blocks() const { return (p->batch + row_block - 1) / row_block; }
  int64_t tasks() const { return p->directions * layout.blocks() * row_blocks(); }

  // Round `part` of step `s` for task `task`. `scratch` (64-byte aligned) holds the step
  // product's packing scratch (float), then 4 * layout.block gate values.
  void Task(int part, int64_t task, int64_t s, char* scratch) const {
    const int64_t rb = task % row_blocks(), blk = task / row_blocks() % layout.blocks();
    const int64_t d = task / row_blocks() / layout.blocks();
    const int64_t H = p->hidden, gh = layout.gates * H, B = p->batch;
    const int64_t r0 = rb * row_block, r1 = std::min(B, r0 + row_block);
    int64_t first = 0, count = 0;
    layout.PartRows(blk, part, &first, &count);
    C* g = gates + d * B * gh;
    const C* a = (part == 0 ? h_cur : reset_h) + (d * B + r0) * H;
    Product(d, blk, part, a, r1 - r0, g + r0 * gh + first, gh, reinterpret_cast<float*>(scratch));
    C* rows = reinterpret_cast<C*>(scratch + gemm_scratch_bytes);
    for (int64_t b = r0; b < r1; ++b) Gates(part, d, blk, b, s, g + b * gh, rows);
  }

 private:
  void Product(int64_t d, int64_t blk, int part, const C* a, int64_t m, C* c, int64_t ldc, float* scratch) const {
    const int64_t H = p->hidden;
    int64_t first = 0, count = 0;
    layout.PartRows(blk, part, &first, &count);
    const C* r = wt->r + (d * layout.gates * H + first) * H;  // count rows of H
    if constexpr (std::is_same_v<C, float>) {
      const int64_t block = (d * layout.blocks() + blk) * layout.parts + part;
      if (m == 1) {  // one row: the engine's GEMV streams R's rows
        gemm::SgemmSerial(false, true, 1, count, H, 1.0f, a, H, r, H, 0.0f, c, ldc, scratch);
        return;
      }
      if (m <= kStepPanelRows) {  // a few rows: R's panels read once, all rows in registers
        step_rows->product(m, count, H, a, H, wt->r_panels + wt->panel_offsets[block], c, ldc);
        return;
      }
      const gemm::PrepackedB& b = *wt->r_packed[block];
      gemm::SgemmSerialPackedB(false, m, b.n(), H, 1.0f, a, H, b, 0.0f, c, ldc, scratch);
    } else {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t q = 0; q < count; ++q) c[i * ldc + q] = Dot(a + i * H, r + q * H, H);
      }
    }
  }

  void ClipRow(C* x, int64_t n) const {
    if (!p->clip) return;
    const C bound = static_cast<C>(p->clip_value);
    for (int64_t j = 0; j < n; ++j) x[j] = std::min(bound, std::max(-bound, x[j]));
  }

  // Gate math of batch row b for the block's units, after round `part`'s product. `gg` is
  // the row's gate columns of this direction.
  void Gates(int part, int64_t d, int64_t blk, int64_t b, int64_t s, C* row_gates, C* t0) const {
    const int64_t H = p->hidden, gh = layout.gates * H, B = p->batch, nd = p->directions;
    const int64_t n = layout.size(blk), j0 = layout.begin(blk), col0 = layout.gates * j0;
    const bool last = part == layout.parts - 1;
    const C* hp = h_cur + (d * B + b) * H + j0;
    C* hn = h_next + (d * B + b) * H + j0;
    const int64_t length = p->Length(b);
    if (s >= length) {  // this row's recurrence is over: its state stays
      if (last) std::copy(hp, hp + n, hn);
      if (layout.parts == 2 && part == 0)
        std::fill(reset_h + (d * B + b) * H + j0, reset_h + (d * B + b) * H + j0 + n, C(0));
      return;
    }
    const bool reverse = p->reverse_only || d == 1;
    const int64_t t = reverse ? length - 1 - s : s;
    const C* xg = xp + p->XRow(t, b) * nd * gh + d * gh + col0;
    const C* bx = bias_x + d * gh + col0;
    C* gg = row_gates + col0;
    const Activation* act = p->activations.data() + d * (p->activations.size() / nd);
    C *t1 = t0 + layout.block, *t2 = t1 + layout.block, *t3 = t2 + layout.block;
    switch (p->cell) {
      case Cell::kRnn:
        for (int64_t j = 0; j < n; ++j) hn[j] = gg[j] + xg[j] + bx[j];
        ClipRow(hn, n);
        act[0].ApplyRow(hn, n);
        break;
      case Cell::kGru: {
        const C* rbh = bias_rh + d * H + j0;
        if constexpr (std::is_same_v<C, float>) {
          if (fused_gru) {  // every gate of a unit in registers, one pass per round
            C* rh = layout.parts == 2 ? reset_h + (d * B + b) * H + j0 : nullptr;
            const GruRowArgs args{n, gg, xg, bx, rbh, hp, gg, rh, hn};
            if (layout.parts == 1) {
              step_rows->gru_linear(args);
            } else if (part == 0) {  // z kept in the gate row, r * H_{t-1} for round 2
              step_rows->gru_reset(args);
              return;
            } else {
              step_rows->gru_hidden(args);
            }
            break;
          }
        }
        if (part == 0) {  // z and r
          for (int64_t j = 0; j < 2 * n; ++j) t0[j] = gg[j] + xg[j] + bx[j];
          ClipRow(t0, 2 * n);
          act[0].ApplyRow(t0, 2 * n);
          const C *z = t0, *r = t0 + n;
          if (!last) {  // r * H_{t-1} for the second round; z kept in the gate row
            C* rh = reset_h + (d * B + b) * H + j0;
            for (int64_t j = 0; j < n; ++j) rh[j] = r[j] * hp[j];
            std::copy(z, z + n, gg);
            return;
          }
          for (int64_t j = 0; j < n; ++j) t2[j] = xg[2 * n + j] + bx[2 * n + j] + r[j] * (gg[2 * n + j] + rbh[j]);
          ClipRow(t2, n);
          act[1].ApplyRow(t2, n);
          for (int64_t j = 0; j < n; ++j) hn[j] = (C(1) - z[j]) * t2[j] + z[j] * hp[j];
        } else {  // h from (r * H_{t-1}) R_h^T
          const C* z = gg;
          for (int64_t j = 0; j < n; ++j) t2[j] = xg[2 * n + j] + bx[2 * n + j] + gg[2 * n + j] + rbh[j];
          ClipRow(t2, n);
          act[1].ApplyRow(t2, n);
          for (int64_t j = 0; j < n; ++j) hn[j] = (C(1) - z[j]) * t2[j] + z[j] * hp[j];
        }
        break;
      }
      case Cell::kLstm: {  // gates i, o, f, c; peepholes i, o, f
        C* c = cell + (d * B + b) * H + j0;
        const C* pi = peep + d * 3 * H + j0;
        const C *po = pi + H, *pf = pi + 2 * H;
        if constexpr (std::is_same_v<C, float>) {
          if (fused_lstm) {  // every gate of a unit in registers, one pass
            step_rows->lstm(LstmRowArgs{n, gg, xg, bx, pi, po, pf, c, hn});
            break;
          }
        }
        for (int64_t j = 0; j < n; ++j) t0[j] = gg[j] + xg[j] + bx[j] + pi[j] * c[j];
        ClipRow(t0, n);
        act[0].ApplyRow(t0, n);
        if (p->input_forget) {
          for (int64_t j = 0; j < n; ++j) t1[j] = C(1) - t0[j];
        } else {
          for (int64_t j = 0; j < n; ++j) t1[j] = gg[2 * n + j] + xg[2 * n + j] + bx[2 * n + j] + pf[j] * c[j];
          ClipRow(t1, n);
          act[0].ApplyRow(t1, n);
        }
        for (int64_t j = 0; j < n; ++j) t2[j] = gg[3 * n + j] + xg[3 * n + j] + bx[3 * n + j];
        ClipRow(t2, n);
        act[1].ApplyRow(t2, n);
        for (int64_t j = 0; j < n; ++j) c[j] = t1[j] * c[j] + t0[j] * t2[j];
        for (int64_t j = 0; j < n; ++j) t3[j] = gg[n + j] + xg[n + j] + bx[n + j] + po[j] * c[j];
        ClipRow(t3, n);
        act[0].ApplyRow(t3, n);
        std::copy(c, c + n, t2);
        act[2].ApplyRow(t2, n);
        for (int64_t j = 0; j < n; ++j) hn[j] = t3[j] * t2[j];
        break;
      }
    }
    if (p->y != nullptr) StoreRow(p->y->dtype(), p->y->raw_data(), p->YOffset(t, d, b) + j0, hn, n);
  }
};

// Aligned slices of one scratch reservation, sized before it is made.
class Slices {
 public:
  template <typename T>
  void Reserve(T** slot, size_t count) {
    const size_t a = Allocator::kAlignment;
    requests_.push_back({reinterpret_cast<void**>(slot), (count * sizeof(T) + a - 1) / a * a});
  }
  size_t bytes() const {
    size_t total = 0;
    for (const auto& r : requests_) total += r.bytes;
    return total;
  }
  Status Assign(ScratchArena& arena) {
    for (const auto& r : requests_) {
      OL_ASSIGN_OR_RETURN(*r.slot, arena.Allocate(r.bytes));
    }
    return Status::Ok();
  }

 private:
  struct Request {
    void** slot;
    size_t bytes;
  };
  std::vector<Request> requests_;
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
    auto activations = ParseActivations(names, alphas, betas, defaults, Directions());
    if (!activations.ok()) return InvalidArgument(info.Where(), ": ", activations.status().message());
    activations_ = *activations;
    OL_ASSIGN_OR_RETURN(minimum_multiply_adds_, info.tuning().Int64(param::kMinimumMultiplyAdds));
    OL_ASSIGN_OR_RETURN(hidden_block_, info.tuning().Int64(param::kBlockHiddenUnits));
    OL_ASSIGN_OR_RETURN(row_block_, info.tuning().Int64(param::kBlockRows));
    OL_ASSIGN_OR_RETURN(gemm_tuning_, gemm::ReadGemmTuning(info.tuning()));
    return PrepareConstantWeights(info);
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

  int64_t Directions() const { return direction_ == "bidirectional" ? 2 : 1; }
  GateLayout LayoutFor(int64_t hidden) const {
    GateLayout layout;
    layout.gates = GatesOf(cell_);
    layout.hidden = hidden;
    layout.block = std::max<int64_t>(1, std::min(hidden, hidden_block_));
    layout.parts = PartsOf(cell_, linear_before_reset_);
    return layout;
  }

  // Constant W and R of a float-computed type (float, float16, bfloat16) are reordered and
  // packed here once, and absorbed: Compute reads only these copies.
  Status PrepareConstantWeights(const KernelInfo& info) {
    const Tensor* w = info.constant_input(1);
    const Tensor* r = info.constant_input(2);
    if (w == nullptr || r == nullptr || w->dtype() == DataType::kDouble || w->dtype() != r->dtype() ||
        !IsFloatComputed(w->dtype()) || w->shape().rank() != 3 || r->shape().rank() != 3) {
      return Status::Ok();
    }
    const int64_t nd = Directions(), gates = GatesOf(cell_), hidden = r->shape()[2], input = w->shape()[2];
    if (w->shape()[0] != nd || r->shape()[0] != nd || r->shape()[1] != gates * hidden ||
        w->shape()[1] != gates * hidden || hidden == 0 || input == 0) {
      return Status::Ok();  // Compute reports the shapes
    }
    const GateLayout layout = LayoutFor(hidden);
    constant_w_.resize(static_cast<size_t>(nd * gates * hidden * input));
    constant_r_.resize(static_cast<size_t>(nd * gates * hidden * hidden));
    PermuteRows(*w, nd, layout, input, constant_w_.data());
    PermuteRows(*r, nd, layout, hidden, constant_r_.data());
    constant_.w = constant_w_.data();
    constant_.r = constant_r_.data();
    OL_ASSIGN_OR_RETURN(constant_.w_packed, gemm::PrepackedB::Create(Allocator::Default(), /*trans_b=*/true, input,
                                                                     nd * gates * hidden, constant_.w, input));
    OL_ASSIGN_OR_RETURN(constant_.r_packed, PackBlocks(Allocator::Default(), constant_.r, nd, layout));
    constant_.panel_offsets = PanelOffsets(nd, layout);
    constant_panels_.resize(static_cast<size_t>(constant_.panel_offsets.back()));
    PackPanels(constant_.r, nd, layout, constant_.panel_offsets, constant_panels_.data());
    constant_.r_panels = constant_panels_.data();
    constant_w_shape_ = w->shape();
    constant_r_shape_ = r->shape();
    has_constant_ = true;
    // Held in W's place: its reordered copy and packed form; in R's: its reordered copy,
    // packed blocks and step panels.
    int64_t r_held = static_cast<int64_t>(sizeof(float) * (constant_r_.size() + constant_panels_.size()));
    for (const auto& block : constant_.r_packed) r_held += static_cast<int64_t>(block->bytes());
    OL_RETURN_IF_ERROR(info.AbsorbConstantInput(
        1, static_cast<int64_t>(sizeof(float) * constant_w_.size() + constant_.w_packed->bytes())));
    OL_RETURN_IF_ERROR(info.AbsorbConstantInput(2, r_held));
    return Status::Ok();
  }

  static bool IsFloatComputed(DataType t) {
    return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
  }

  Status Describe(KernelContext& ctx, Problem* p) const;

  template <typename C>
  Status Run(KernelContext& ctx, Problem* p) const {
    OL_RETURN_IF_ERROR(AllocateOutputs(ctx, p));
    const int64_t nd = p->directions, B = p->batch, H = p->hidden, I = p->input, T = p->seq;
    if (B == 0 || H == 0) return Status::Ok();  // every output is empty
    constexpr bool kFloat = std::is_same_v<C, float>;
    const GateLayout layout = LayoutFor(H);
    const int64_t gh = layout.gates * H, rows = T * B;
    const Tensor &w_in = *ctx.input(1), &r_in = *ctx.input(2);
    // W and R absorbed at creation: their copies are the only ones (the inputs may have
    // no data).
    const bool use_constant =
        kFloat && has_constant_ && w_in.shape() == constant_w_shape_ && r_in.shape() == constant_r_shape_;
    const bool x_is_c = p->x->dtype() == (kFloat ? DataType::kFloat : DataType::kDouble);

    Stepper<C> st;
    st.p = p;
    st.layout = layout;
    st.row_block = std::max<int64_t>(1, std::min(B, row_block_));
    st.fused_lstm = kFloat && p->cell == Cell::kLstm && !p->clip && !p->input_forget;
    for (size_t i = 0; i < p->activations.size(); ++i) {  // sigmoid, tanh, tanh per direction
      st.fused_lstm &= p->activations[i].kind == (i % 3 == 0 ? Activation::Kind::kSigmoid : Activation::Kind::kTanh);
    }
    st.fused_gru = kFloat && p->cell == Cell::kGru && !p->clip;
    for (size_t i = 0; i < p->activations.size(); ++i) {  // sigmoid, tanh per direction
      st.fused_gru &= p->activations[i].kind == (i % 2 == 0 ? Activation::Kind::kSigmoid : Activation::Kind::kTanh);
    }
    const int64_t tasks = st.tasks();
    const ParallelPlan plan{"recurrent.blocks", 1};
    // A region per step (and round): only when one step's products pay for it.
    const int64_t step_work = nd * B * gh * H;
    const bool parallel = step_work >= minimum_multiply_adds_ && tasks > 1;
    const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
    size_t gemm_scratch = 0;
    if constexpr (kFloat) {
      gemm_scratch = std::max(gemm::SgemmSerialScratchBytes(st.row_block, layout.gates * layout.block, H),
                              gemm::SgemmSerialScratchBytes(1, layout.gates * layout.block, H));
    }
    gemm_scratch = (gemm_scratch + Allocator::kAlignment - 1) / Allocator::kAlignment * Allocator::kAlignment;
    st.gemm_scratch_bytes = gemm_scratch;
    const size_t per_participant = (gemm_scratch + 4 * layout.block * sizeof(C) + Allocator::kAlignment - 1) /
                                   Allocator::kAlignment * Allocator::kAlignment;

    C *w = nullptr, *r = nullptr, *x = nullptr, *xp = nullptr, *bias = nullptr, *bias_x = nullptr, *bias_rh = nullptr;
    C *peep = nullptr, *h0 = nullptr, *h1 = nullptr, *cell = nullptr, *gates = nullptr, *reset_h = nullptr;
    C* zeros = nullptr;
    float* panels = nullptr;
    char* task_scratch = nullptr;
    Slices slices;
    std::vector<int64_t> panel_offsets;
    if (!use_constant) {
      slices.Reserve(&w, nd * gh * I);
      slices.Reserve(&r, nd * gh * H);
      if constexpr (kFloat) {
        panel_offsets = PanelOffsets(nd, layout);
        slices.Reserve(&panels, panel_offsets.back());
      }
    }
    if (!x_is_c) slices.Reserve(&x, rows * I);
    slices.Reserve(&xp, rows * nd * gh);
    slices.Reserve(&bias, 2 * nd * gh);
    slices.Reserve(&bias_x, nd * gh);
    slices.Reserve(&bias_rh, nd * H);
    slices.Reserve(&peep, nd * 3 * H);
    slices.Reserve(&h0, nd * B * H);
    slices.Reserve(&h1, nd * B * H);
    slices.Reserve(&cell, nd * B * H);
    slices.Reserve(&gates, nd * B * gh);
    if (layout.parts == 2) slices.Reserve(&reset_h, nd * B * H);
    slices.Reserve(&zeros, H);
    slices.Reserve(&task_scratch, per_participant * participants);
    ScratchArena arena(ctx.allocator(), slices.bytes());
    OL_RETURN_IF_ERROR(arena.status());
    OL_RETURN_IF_ERROR(slices.Assign(arena));
    int64_t scratch_bytes = static_cast<int64_t>(slices.bytes());

    // Weights in the layout's order.
    PreparedWeights<C> prepared;
    const PreparedWeights<C>* wt = &prepared;
    if constexpr (kFloat) {
      if (use_constant) wt = &constant_;
    }
    if (!use_constant) {
      PermuteRows(w_in, nd, layout, I, w);
      PermuteRows(r_in, nd, layout, H, r);
      prepared.w = w;
      prepared.r = r;
      if constexpr (kFloat) {
        OL_ASSIGN_OR_RETURN(prepared.r_packed, PackBlocks(ctx.allocator(), r, nd, layout));
        for (const auto& b : prepared.r_packed) scratch_bytes += static_cast<int64_t>(b->bytes());
        PackPanels(r, nd, layout, panel_offsets, panels);
        prepared.r_panels = panels;
        prepared.panel_offsets = std::move(panel_offsets);
      }
    }
    std::fill(bias, bias + 2 * nd * gh, C(0));
    if (const Tensor* b = ctx.input(3)) LoadRow(b->dtype(), b->raw_data(), 0, 2 * nd * gh, bias);
    std::fill(bias_rh, bias_rh + nd * H, C(0));
    for (int64_t d = 0; d < nd; ++d) {
      for (int64_t g = 0; g < layout.gates; ++g) {
        for (int64_t j = 0; j < H; ++j) {
          const C wb = bias[d * 2 * gh + g * H + j], rb = bias[d * 2 * gh + gh + g * H + j];
          const bool gru_h = p->cell == Cell::kGru && g == 2;
          bias_x[d * gh + layout.Column(g, j)] = gru_h ? wb : wb + rb;
          if (gru_h) bias_rh[d * H + j] = rb;
        }
      }
    }
    std::fill(peep, peep + nd * 3 * H, C(0));
    if (p->cell == Cell::kLstm && ctx.input(7) != nullptr) {
      LoadRow(ctx.input(7)->dtype(), ctx.input(7)->raw_data(), 0, nd * 3 * H, peep);
    }
    const C* xs = x_is_c ? p->x->data<C>() : x;
    if (!x_is_c) LoadRow(p->x->dtype(), p->x->raw_data(), 0, rows * I, x);
    ctx.RecordCopy();

    // 1. Input projection of every step and direction: xp = X W^T (rows x directions*G*H).
    OL_RETURN_IF_ERROR(Project(ctx, *wt, xs, rows, nd * gh, I, xp, &scratch_bytes));
    ctx.RecordScratch(scratch_bytes);

    // 2. Initial states; Y is zero past each row's length.
    std::fill(zeros, zeros + H, C(0));
    for (int64_t d = 0; d < nd; ++d) {
      for (int64_t b = 0; b < B; ++b) {
        LoadState(p->initial_h, *p, d, b, h0 + (d * B + b) * H);
        LoadState(p->initial_c, *p, d, b, cell + (d * B + b) * H);
        if (p->y == nullptr) continue;
        for (int64_t t = p->Length(b); t < T; ++t)
          StoreRow(p->y->dtype(), p->y->raw_data(), p->YOffset(t, d, b), zeros, H);
      }
    }
    int64_t steps = 0;
    for (int64_t b = 0; b < B; ++b) steps = std::max(steps, p->Length(b));

    // 3. The steps in order, each as rounds of (direction, block, row block) tasks.
    st.wt = wt;
    st.xp = xp;
    st.bias_x = bias_x;
    st.bias_rh = bias_rh;
    st.peep = peep;
    st.h_cur = h0;
    st.h_next = h1;
    st.cell = cell;
    st.gates = gates;
    st.reset_h = reset_h;
    for (int64_t s = 0; s < steps; ++s) {
      for (int part = 0; part < layout.parts; ++part) {
        auto run = [&](int participant, int64_t begin, int64_t end) {
          char* scratch = task_scratch + per_participant * participant;
          for (int64_t task = begin; task < end; ++task) st.Task(part, task, s, scratch);
          return Status::Ok();
        };
        if (parallel) {
          OL_RETURN_IF_ERROR(ParallelForWithParticipant(ctx.parallel(), tasks, plan, run));
        } else {
          OL_RETURN_IF_ERROR(run(0, 0, tasks));
        }
      }
      std::swap(st.h_cur, st.h_next);
    }
    for (int64_t d = 0; d < nd; ++d) {
      for (int64_t b = 0; b < B; ++b) {
        const int64_t state = p->StateOffset(d, b);
        if (p->y_h != nullptr) StoreRow(p->y_h->dtype(), p->y_h->raw_data(), state, st.h_cur + (d * B + b) * H, H);
        if (p->y_c != nullptr) StoreRow(p->y_c->dtype(), p->y_c->raw_data(), state, cell + (d * B + b) * H, H);
      }
    }
    return Status::Ok();
  }

  template <typename C>
  Status Project(KernelContext& ctx, const PreparedWeights<C>& wt, const C* x, int64_t m, int64_t n, int64_t k, C* xp,
                 int64_t* scratch_bytes) const {
    if (m == 0) return Status::Ok();
    if (k == 0) {
      std::fill(xp, xp + m * n, C(0));
      return Status::Ok();
    }
    if constexpr (std::is_same_v<C, float>) {
      gemm::GemmStats stats;
      if (wt.w_packed != nullptr) {
        OL_RETURN_IF_ERROR(gemm::SgemmPrepackedB(ctx.parallel(), ctx.allocator(), gemm_tuning_, false, m, 1.0f, x, k,
                                                 *wt.w_packed, 0.0f, xp, n, &stats)
                               .WithContext(ctx.Where() + ": "));
      } else {
        OL_RETURN_IF_ERROR(gemm::Sgemm(ctx.parallel(), ctx.allocator(), gemm_tuning_, false, true, m, n, k, 1.0f, x, k,
                                       wt.w, k, 0.0f, xp, n, &stats)
                               .WithContext(ctx.Where() + ": "));
      }
      *scratch_bytes += stats.scratch_bytes;
    } else {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) xp[i * n + j] = Dot(x + i * k, wt.w + j * k, k);
      }
    }
    return Status::Ok();
  }

  template <typename C>
  static void LoadState(const Tensor* initial, const Problem& p, int64_t d, int64_t b, C* out) {
    if (initial == nullptr) {
      std::fill(out, out + p.hidden, C(0));
    } else {
      LoadRow(initial->dtype(), initial->raw_data(), p.StateOffset(d, b), p.hidden, out);
    }
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
  int64_t minimum_multiply_adds_ = 0, hidden_block_ = 1, row_block_ = 1;
  gemm::GemmTuning gemm_tuning_;
  // Constant weights prepared at creation (float-computed types only).
  bool has_constant_ = false;
  Shape constant_w_shape_, constant_r_shape_;  // of the absorbed W and R
  std::vector<float> constant_w_, constant_r_, constant_panels_;
  PreparedWeights<float> constant_;
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
  // Steps are ordered; a step's tasks are (direction, hidden-unit block, batch-row block).
  // The input projection is one GEMM with the engine's own schema (parallel.minimum_tasks).
  std::vector<ParamSpec> tuning = gemm::GemmTuningParams();
  tuning.push_back(ParamSpec::Int64(
      param::kMinimumMultiplyAdds, int64_t{1} << 18, 1, int64_t{1} << 50,
      "multiply-adds of one step's recurrent products (directions x batch x gates x hidden x hidden) below which "
      "its tasks run serially (each step opens its own region: the step alone must pay for it)"));
  tuning.push_back(ParamSpec::Int64(param::kBlockHiddenUnits, 64, 1, int64_t{1} << 20,
                                    "hidden units per task of a step (all gates of those units): the columns of R a "
                                    "task multiplies and the gate rows it computes"));
  tuning.push_back(ParamSpec::Int64(param::kBlockRows, 32, 1, int64_t{1} << 20,
                                    "batch rows per task of a step (the rows of the step's packed product)"));
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
