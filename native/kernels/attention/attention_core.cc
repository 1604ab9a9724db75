#include "native/kernels/attention/attention_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/attention/head_matmul.h"
#include "native/kernels/attention/softmax_row.h"

namespace onnx_light {
namespace attention {
namespace {

int64_t SaturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors) {
    if (MultiplyOverflows(product, f, &product)) return std::numeric_limits<int64_t>::max();
  }
  return product;
}

// Keys or values of one kv head as a row-major compute-type matrix (kv_seq rows).
template <typename C>
struct KvMatrix {
  const C* data = nullptr;
  int64_t ld = 0;
};

inline int64_t RoundUp(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

inline size_t AlignedBytes(int64_t elements, size_t element_size) {
  return static_cast<size_t>(RoundUp(elements * static_cast<int64_t>(element_size), Allocator::kAlignment));
}

template <typename C>
class AttentionRunner {
 public:
  AttentionRunner(const AttentionProblem& p, const AttentionTuning& t)
      : p_(p),
        kv_seq_(p.kv_seq()),
        tile_rows_(std::min(std::max<int64_t>(t.query_tile_rows, 1), std::max<int64_t>(p.q_seq, 1))),
        tiles_per_head_((p.q_seq + tile_rows_ - 1) / tile_rows_),
        has_bias_(p.mask.data != nullptr || p.is_causal || p.left_window >= 0 || p.right_window >= 0 ||
                  !p.nonpad_kv_seqlen.empty()) {}

  Status Run(KernelContext& ctx, const AttentionTuning& tuning) {
    const bool parallel = AttentionMultiplyAdds(p_) >= tuning.minimum_multiply_adds;
    const ParallelPlan kv_plan{"attention.kv_heads", 1};
    const ParallelPlan task_plan{"attention.query_tiles", 1};
    const int participants = parallel ? AvailableParticipants(ctx.parallel(), task_plan) : 1;
    OL_RETURN_IF_ERROR(ReserveScratch(ctx, participants));

    const int64_t kv_tasks = p_.batch * p_.kv_heads;
    const int64_t q_tasks = p_.batch * p_.q_heads * tiles_per_head_;
    auto gather = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) GatherKvHead(t / p_.kv_heads, t % p_.kv_heads);
      return Status::Ok();
    };
    auto attend = [&](int participant, int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) AttendTile(participant, t);
      return Status::Ok();
    };
    if (!parallel) {
      OL_RETURN_IF_ERROR(gather(0, kv_tasks));
      return attend(0, 0, q_tasks);
    }
    OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), kv_tasks, kv_plan, gather));
    return ParallelForWithParticipant(ctx.parallel(), q_tasks, task_plan, attend);
  }

 private:
  // Keys (or values) are read where they are when they already form a compute-type
  // matrix: the input itself without a cache, or the present output with one. Otherwise
  // (other element types, or a cache without a present output of the compute type) they
  // are decoded once per kv head into scratch.
  bool KeysInPlace() const { return p_.k.type == kDataTypeOf<C> && (p_.past_seq == 0 || p_.present_k != nullptr); }
  bool ValuesInPlace() const { return p_.v.type == kDataTypeOf<C> && (p_.past_seq == 0 || p_.present_v != nullptr); }

  Status ReserveScratch(KernelContext& ctx, int participants) {
    const int64_t heads = p_.batch * p_.kv_heads;
    const int64_t k_elements = KeysInPlace() ? 0 : heads * kv_seq_ * p_.head_size;
    const int64_t v_elements = ValuesInPlace() ? 0 : heads * kv_seq_ * p_.v_head_size;
    // Per participant: a query tile, its score rows, its output tile, one bias row and the
    // GEMM packing buffers; bounded by tile_rows x kv_seq whatever the head count.
    const bool is_double = std::is_same_v<C, double>;
    const size_t gemm_bytes = std::max(HeadMatMulScratchBytes(is_double, tile_rows_, kv_seq_, p_.head_size),
                                       HeadMatMulScratchBytes(is_double, tile_rows_, p_.v_head_size, kv_seq_));
    participant_bytes_ = AlignedBytes(tile_rows_ * p_.head_size, sizeof(C)) +
                         AlignedBytes(tile_rows_ * kv_seq_, sizeof(C)) +
                         AlignedBytes(tile_rows_ * p_.v_head_size, sizeof(C)) + AlignedBytes(kv_seq_, sizeof(C)) +
                         RoundUp(static_cast<int64_t>(gemm_bytes), Allocator::kAlignment);
    const size_t total = AlignedBytes(k_elements, sizeof(C)) + AlignedBytes(v_elements, sizeof(C)) +
                         participant_bytes_ * static_cast<size_t>(participants);
    arena_ = std::make_unique<ScratchArena>(ctx.allocator(), total);
    OL_RETURN_IF_ERROR(arena_->status());
    OL_ASSIGN_OR_RETURN(decoded_k_, arena_->AllocateArray<C>(static_cast<size_t>(k_elements)));
    OL_ASSIGN_OR_RETURN(decoded_v_, arena_->AllocateArray<C>(static_cast<size_t>(v_elements)));
    OL_ASSIGN_OR_RETURN(void* tasks, arena_->Allocate(participant_bytes_ * static_cast<size_t>(participants)));
    task_scratch_ = static_cast<char*>(tasks);
    ctx.RecordScratch(static_cast<int64_t>(total));
    return Status::Ok();
  }

  KvMatrix<C> Keys(int64_t b, int64_t kvh) const {
    const int64_t head = b * p_.kv_heads + kvh;
    if (!KeysInPlace()) return {decoded_k_ + head * kv_seq_ * p_.head_size, p_.head_size};
    if (p_.past_seq > 0) return {static_cast<const C*>(p_.present_k) + head * kv_seq_ * p_.head_size, p_.head_size};
    return {static_cast<const C*>(p_.k.data) + p_.k.Offset(b, kvh, 0), p_.k.row_stride};
  }
  KvMatrix<C> Values(int64_t b, int64_t kvh) const {
    const int64_t head = b * p_.kv_heads + kvh;
    if (!ValuesInPlace()) return {decoded_v_ + head * kv_seq_ * p_.v_head_size, p_.v_head_size};
    if (p_.past_seq > 0) return {static_cast<const C*>(p_.present_v) + head * kv_seq_ * p_.v_head_size, p_.v_head_size};
    return {static_cast<const C*>(p_.v.data) + p_.v.Offset(b, kvh, 0), p_.v.row_stride};
  }

  // Row j of the concatenated cache: past rows first, then the new ones.
  static const void* SourceRow(const RowView& past, const RowView& now, int64_t past_seq, int64_t b, int64_t h,
                               int64_t j, int64_t* offset, DataType* type) {
    const bool from_past = j < past_seq;
    const RowView& v = from_past ? past : now;
    *offset = v.Offset(b, h, from_past ? j : j - past_seq);
    *type = v.type;
    return v.data;
  }

  // Writes present_key/present_value of one kv head and decodes what is not in place.
  void GatherKvHead(int64_t b, int64_t kvh) {
    const int64_t head = b * p_.kv_heads + kvh;
    GatherRows(p_.past_k, p_.k, b, kvh, p_.head_size, static_cast<char*>(p_.present_k),
               KeysInPlace() ? nullptr : decoded_k_ + head * kv_seq_ * p_.head_size, head);
    GatherRows(p_.past_v, p_.v, b, kvh, p_.v_head_size, static_cast<char*>(p_.present_v),
               ValuesInPlace() ? nullptr : decoded_v_ + head * kv_seq_ * p_.v_head_size, head);
  }

  void GatherRows(const RowView& past, const RowView& now, int64_t b, int64_t kvh, int64_t width, char* present,
                  C* decoded, int64_t head) const {
    const size_t row_bytes = width * ElementSize(now.type);
    for (int64_t j = 0; j < kv_seq_; ++j) {
      int64_t offset;
      DataType type;
      const void* src = SourceRow(past, now, p_.past_seq, b, kvh, j, &offset, &type);
      if (present != nullptr) {
        std::memcpy(present + (head * kv_seq_ + j) * row_bytes, static_cast<const char*>(src) + offset * ElementSize(type),
                    row_bytes);
      }
      if (decoded != nullptr) LoadRow(type, src, offset, width, decoded + j * width);
    }
  }

  // Keys visible to query row i of batch b: causal frontier, sliding window and padding,
  // all relative to the batch's cache offset. Returns the key range [lo, hi).
  void VisibleKeys(int64_t b, int64_t i, int64_t* lo, int64_t* hi) const {
    int64_t offset = 0;
    if (p_.past_seq > 0) {
      offset = p_.past_seq;
    } else if (!p_.nonpad_kv_seqlen.empty()) {
      offset = p_.nonpad_kv_seqlen[b] - p_.q_seq;
    }
    const int64_t position = i + offset;
    int64_t first = 0, last = kv_seq_;  // [first, last)
    if (p_.is_causal) last = std::min(last, position + 1);
    if (p_.right_window >= 0) last = std::min(last, position + p_.right_window + 1);
    if (p_.left_window >= 0) first = std::max(first, position - p_.left_window);
    if (!p_.nonpad_kv_seqlen.empty()) last = std::min(last, p_.nonpad_kv_seqlen[b]);
    *lo = std::min(std::max<int64_t>(0, first), kv_seq_);
    *hi = std::max(*lo, last);
  }

  // bias[0, kv_seq) for row (b, h, i): the mask (bool -> 0 / -inf, numbers added as they
  // are) with keys outside VisibleKeys at -inf. Returns false when every key is at -inf.
  bool BuildBias(int64_t b, int64_t h, int64_t i, C* bias) const {
    constexpr C kNegInf = -std::numeric_limits<C>::infinity();
    const MaskView& m = p_.mask;
    int64_t mask_len = 0;
    if (m.data != nullptr) {
      mask_len = std::min(m.length, kv_seq_);
      const int64_t offset = b * m.batch_stride + h * m.head_stride + i * m.row_stride;
      if (m.type == DataType::kBool) {
        const bool* row = static_cast<const bool*>(m.data) + offset;
        for (int64_t j = 0; j < mask_len; ++j) bias[j] = row[j] ? C(0) : kNegInf;
      } else {
        LoadRow(m.type, m.data, offset, mask_len, bias);
      }
    } else {
      mask_len = kv_seq_;
      std::fill(bias, bias + kv_seq_, C(0));
    }
    std::fill(bias + mask_len, bias + kv_seq_, kNegInf);
    int64_t lo, hi;
    VisibleKeys(b, i, &lo, &hi);
    std::fill(bias, bias + lo, kNegInf);
    std::fill(bias + hi, bias + kv_seq_, kNegInf);
    for (int64_t j = lo; j < hi; ++j) {
      if (bias[j] != kNegInf) return true;
    }
    return false;
  }

  void StoreQk(int mode, int64_t b, int64_t h, int64_t i, const C* row) const {
    if (p_.qk_output == nullptr || p_.qk_output_mode != mode) return;
    StoreRow(p_.y.type, p_.qk_output, ((b * p_.q_heads + h) * p_.q_seq + i) * kv_seq_, row, kv_seq_);
  }

  // Turns one row of raw scores into probabilities (in place), emitting the requested
  // qk_matmul_output stage on the way.
  void ScoresToProbabilities(int64_t b, int64_t h, int64_t i, C* s, C* bias) const {
    StoreQk(0, b, h, i, s);
    if (p_.softcap > 0) {
      const C cap = static_cast<C>(p_.softcap);
      for (int64_t j = 0; j < kv_seq_; ++j) s[j] = cap * std::tanh(s[j] / cap);
    }
    StoreQk(1, b, h, i, s);
    bool any_visible = kv_seq_ > 0;
    if (has_bias_) {
      any_visible = BuildBias(b, h, i, bias);
      for (int64_t j = 0; j < kv_seq_; ++j) s[j] += bias[j];
    }
    StoreQk(2, b, h, i, s);
    if (!any_visible) {  // a fully masked row attends nothing: zeros, not NaN
      std::fill(s, s + kv_seq_, C(0));
    } else {
      const C sum = ExpShiftedSum(s, kv_seq_, RowMax(s, kv_seq_));
      ScaleRow(s, kv_seq_, C(1) / sum);
    }
    StoreQk(3, b, h, i, s);
  }

  void AttendTile(int participant, int64_t task) {
    const int64_t tile = task % tiles_per_head_;
    const int64_t h = (task / tiles_per_head_) % p_.q_heads;
    const int64_t b = task / tiles_per_head_ / p_.q_heads;
    const int64_t kvh = h / (p_.q_heads / p_.kv_heads);
    const int64_t row0 = tile * tile_rows_;
    const int64_t rows = std::min(tile_rows_, p_.q_seq - row0);

    char* base = task_scratch_ + participant_bytes_ * static_cast<size_t>(participant);
    C* q_tile = reinterpret_cast<C*>(base);
    C* scores = reinterpret_cast<C*>(base + AlignedBytes(tile_rows_ * p_.head_size, sizeof(C)));
    C* out = reinterpret_cast<C*>(reinterpret_cast<char*>(scores) + AlignedBytes(tile_rows_ * kv_seq_, sizeof(C)));
    C* bias = reinterpret_cast<C*>(reinterpret_cast<char*>(out) + AlignedBytes(tile_rows_ * p_.v_head_size, sizeof(C)));
    void* gemm_scratch = reinterpret_cast<char*>(bias) + AlignedBytes(kv_seq_, sizeof(C));

    const C scale = static_cast<C>(p_.scale);
    for (int64_t r = 0; r < rows; ++r) {
      C* q_row = q_tile + r * p_.head_size;
      LoadRow(p_.q.type, p_.q.data, p_.q.Offset(b, h, row0 + r), p_.head_size, q_row);
      ScaleRow(q_row, p_.head_size, scale);
    }
    const KvMatrix<C> keys = Keys(b, kvh);
    const KvMatrix<C> values = Values(b, kvh);
    HeadMatMul(/*trans_b=*/true, rows, kv_seq_, p_.head_size, q_tile, p_.head_size, keys.data, keys.ld, scores,
               kv_seq_, gemm_scratch);
    for (int64_t r = 0; r < rows; ++r) ScoresToProbabilities(b, h, row0 + r, scores + r * kv_seq_, bias);
    HeadMatMul(/*trans_b=*/false, rows, p_.v_head_size, kv_seq_, scores, kv_seq_, values.data, values.ld, out,
               p_.v_head_size, gemm_scratch);
    for (int64_t r = 0; r < rows; ++r) {
      StoreRow(p_.y.type, p_.y.data, p_.y.Offset(b, h, row0 + r), out + r * p_.v_head_size, p_.v_head_size);
    }
  }

  const AttentionProblem& p_;
  const int64_t kv_seq_;
  const int64_t tile_rows_, tiles_per_head_;
  const bool has_bias_;
  std::unique_ptr<ScratchArena> arena_;
  C* decoded_k_ = nullptr;
  C* decoded_v_ = nullptr;
  char* task_scratch_ = nullptr;
  size_t participant_bytes_ = 0;
};

}  // namespace

// About 2^18 multiply-adds (tens of microseconds serially) amortise the start of the two
// regions (ONNX Runtime's cost model: ~100k cycles per region); calibrated per machine.
constexpr int64_t kDefaultMinimumMultiplyAdds = int64_t{1} << 18;
constexpr int64_t kDefaultQueryTileRows = 64;

std::vector<ParamSpec> AttentionTuningSpecs() {
  return {
      ParamSpec::Int64("parallel.minimum_multiply_adds", kDefaultMinimumMultiplyAdds, 1,
                       int64_t{1} << 50,
                       "QK^T plus PV multiply-adds below which the node runs serially"),
      ParamSpec::Int64("algorithm.query_tile_rows", kDefaultQueryTileRows, 1, 4096,
                       "query rows per task (score scratch per participant = rows x kv_seq)"),
  };
}

StatusOr<AttentionTuning> ReadAttentionTuning(const KernelInfo& info) {
  AttentionTuning t;
  OL_ASSIGN_OR_RETURN(t.minimum_multiply_adds, info.tuning().Int64("parallel.minimum_multiply_adds"));
  OL_ASSIGN_OR_RETURN(t.query_tile_rows, info.tuning().Int64("algorithm.query_tile_rows"));
  return t;
}

int64_t AttentionMultiplyAdds(const AttentionProblem& p) {
  return SaturatingProduct({p.batch, p.q_heads, p.q_seq, p.kv_seq(), p.head_size + p.v_head_size});
}

Status RunAttention(KernelContext& ctx, const AttentionProblem& p, const AttentionTuning& tuning) {
  if (p.q.type == DataType::kDouble || p.v.type == DataType::kDouble) {
    return AttentionRunner<double>(p, tuning).Run(ctx, tuning);
  }
  return AttentionRunner<float>(p, tuning).Run(ctx, tuning);
}

}  // namespace attention
}  // namespace onnx_light
