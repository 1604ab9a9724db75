#include "native/kernels/attention/attention_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/attention/panel_matmul.h"
#include "native/kernels/simd/rows.h"

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

inline size_t AlignedBytes(int64_t elements, size_t element_size) {
  return static_cast<size_t>(RoundUp(elements * static_cast<int64_t>(element_size), Allocator::kAlignment));
}

template <typename C>
class AttentionRunner {
 public:
  AttentionRunner(const AttentionProblem& p, const AttentionTuning& t)
      : p_(p),
        kv_seq_(p.kv_seq()),
        kv_padded_(RoundUp(kv_seq_, kPanelWidth)),
        dv_padded_(RoundUp(p.v_head_size, kPanelWidth)),
        packed_k_size_(PackedSize(p.head_size, kv_seq_)),
        packed_v_size_(PackedSize(kv_seq_, p.v_head_size)),
        tile_rows_(std::min(RoundUp(std::max<int64_t>(t.query_tile_rows, 1), kRowBlock),
                            RoundUp(std::max<int64_t>(p.q_seq, 1), kRowBlock))),
        tiles_per_head_((p.q_seq + tile_rows_ - 1) / tile_rows_),
        has_bias_(p.mask.data != nullptr || p.is_causal || p.left_window >= 0 || p.right_window >= 0 ||
                  !p.nonpad_kv_seqlen.empty()) {}

  Status Run(KernelContext& ctx, const AttentionTuning& tuning) {
    const bool parallel = AttentionMultiplyAdds(p_) >= tuning.minimum_multiply_adds;
    const ParallelPlan kv_plan{"attention.kv_heads", 1};
    const ParallelPlan task_plan{"attention.query_tiles", 1};
    const int participants = parallel ? std::max(AvailableParticipants(ctx.parallel(), kv_plan),
                                                 AvailableParticipants(ctx.parallel(), task_plan))
                                      : 1;
    OL_RETURN_IF_ERROR(ReserveScratch(ctx, participants));

    const int64_t kv_tasks = p_.batch * p_.kv_heads;
    const int64_t q_tasks = p_.batch * p_.q_heads * tiles_per_head_;
    auto pack = [&](int participant, int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) PackKvHead(participant, t / p_.kv_heads, t % p_.kv_heads);
      return Status::Ok();
    };
    auto attend = [&](int participant, int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) AttendTile(participant, t);
      return Status::Ok();
    };
    if (!parallel) {
      OL_RETURN_IF_ERROR(pack(0, 0, kv_tasks));
      return attend(0, 0, q_tasks);
    }
    OL_RETURN_IF_ERROR(ParallelForWithParticipant(ctx.parallel(), kv_tasks, kv_plan, pack));
    return ParallelForWithParticipant(ctx.parallel(), q_tasks, task_plan, attend);
  }

 private:
  // Layout of one participant's slice: query tile, score rows, output tile, bias row (also
  // the decode row of the packing pass), one normaliser per query row.
  size_t QTileBytes() const { return AlignedBytes(tile_rows_ * p_.head_size, sizeof(C)); }
  size_t ScoresBytes() const { return AlignedBytes(tile_rows_ * kv_padded_, sizeof(C)); }
  size_t OutBytes() const { return AlignedBytes(tile_rows_ * dv_padded_, sizeof(C)); }
  size_t RowBytes() const {
    return AlignedBytes(std::max({kv_seq_, p_.head_size, p_.v_head_size, int64_t{1}}), sizeof(C));
  }

  Status ReserveScratch(KernelContext& ctx, int participants) {
    // The packed cache is one compute-type copy of K and V; per participant everything
    // is bounded by tile_rows x kv_seq whatever the head count.
    const int64_t packed_total = p_.batch * p_.kv_heads * (packed_k_size_ + packed_v_size_);
    participant_bytes_ = QTileBytes() + ScoresBytes() + OutBytes() + RowBytes() + AlignedBytes(tile_rows_, sizeof(C));
    const size_t total = AlignedBytes(packed_total, sizeof(C)) + participant_bytes_ * static_cast<size_t>(participants);
    arena_ = std::make_unique<ScratchArena>(ctx.allocator(), total);
    OL_RETURN_IF_ERROR(arena_->status());
    OL_ASSIGN_OR_RETURN(packed_kv_, arena_->AllocateArray<C>(static_cast<size_t>(packed_total)));
    OL_ASSIGN_OR_RETURN(void* tasks, arena_->Allocate(participant_bytes_ * static_cast<size_t>(participants)));
    task_scratch_ = static_cast<char*>(tasks);
    ctx.RecordScratch(static_cast<int64_t>(total));
    return Status::Ok();
  }

  char* ParticipantScratch(int participant) const {
    return task_scratch_ + participant_bytes_ * static_cast<size_t>(participant);
  }
  C* PackedK(int64_t b, int64_t kvh) const {
    return packed_kv_ + (b * p_.kv_heads + kvh) * (packed_k_size_ + packed_v_size_);
  }
  C* PackedV(int64_t b, int64_t kvh) const { return PackedK(b, kvh) + packed_k_size_; }

  // Decodes rows j of one kv head (past rows first) into its packed panels, keys
  // transposed (head_size x kv_seq) for QK^T, values as they are (kv_seq x v_head_size),
  // and writes the head's present_key/present_value rows.
  void PackKvHead(int participant, int64_t b, int64_t kvh) {
    C* row = reinterpret_cast<C*>(ParticipantScratch(participant));
    C* packed_k = PackedK(b, kvh);
    C* packed_v = PackedV(b, kvh);
    if (kv_seq_ > 0) {  // zero the padded columns of the last panels
      std::fill(packed_k + packed_k_size_ - p_.head_size * kPanelWidth, packed_k + packed_k_size_, C(0));
      std::fill(packed_v + packed_v_size_ - kv_seq_ * kPanelWidth, packed_v + packed_v_size_, C(0));
    }
    const int64_t head = b * p_.kv_heads + kvh;
    for (int64_t j = 0; j < kv_seq_; ++j) {
      const bool past = j < p_.past_seq;
      const RowView& ks = past ? p_.past_k : p_.k;
      const RowView& vs = past ? p_.past_v : p_.v;
      const int64_t k_offset = ks.Offset(b, kvh, past ? j : j - p_.past_seq);
      const int64_t v_offset = vs.Offset(b, kvh, past ? j : j - p_.past_seq);
      CopyPresentRow(ks, k_offset, p_.head_size, p_.present_k, head * kv_seq_ + j);
      CopyPresentRow(vs, v_offset, p_.v_head_size, p_.present_v, head * kv_seq_ + j);
      if (p_.probabilities.data == nullptr) {  // split runs pack only the side they use
        LoadRow(ks.type, ks.data, k_offset, p_.head_size, row);
        C* k_column = packed_k + PackedIndex(p_.head_size, 0, j);
        for (int64_t d = 0; d < p_.head_size; ++d) k_column[d * kPanelWidth] = row[d];
      }
      if (!p_.scores_only) {
        LoadRow(vs.type, vs.data, v_offset, p_.v_head_size, row);
        for (int64_t d0 = 0; d0 < p_.v_head_size; d0 += kPanelWidth) {
          const int64_t width = std::min(kPanelWidth, p_.v_head_size - d0);
          std::copy(row + d0, row + d0 + width, packed_v + PackedIndex(kv_seq_, j, d0));
        }
      }
    }
  }

  static void CopyPresentRow(const RowView& src, int64_t offset, int64_t width, void* present, int64_t row) {
    if (present == nullptr) return;
    const size_t bytes = static_cast<size_t>(width) * ElementSize(src.type);
    std::memcpy(static_cast<char*>(present) + row * bytes,
                static_cast<const char*>(src.data) + offset * ElementSize(src.type), bytes);
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
    StoreRow(p_.qk_type, p_.qk_output, ((b * p_.q_heads + h) * p_.q_seq + i) * kv_seq_, row, kv_seq_);
  }

  // Turns one row of raw scores into unnormalised probabilities exp(s - max) (in place),
  // emitting the requested qk_matmul_output stage on the way, and returns the factor
  // (1 / sum) that normalises them; applying it to the PV row instead of the kv_seq
  // probabilities saves a pass over the scores. A fully masked row attends nothing: its
  // probabilities are zeros, not NaN.
  C ScoresToProbabilities(int64_t b, int64_t h, int64_t i, C* s, C* bias, int64_t keys) const {
    StoreQk(0, b, h, i, s);
    if (p_.softcap > 0) {
      const C cap = static_cast<C>(p_.softcap);
      for (int64_t j = 0; j < keys; ++j) s[j] = cap * std::tanh(s[j] / cap);
    }
    StoreQk(1, b, h, i, s);
    bool any_visible = keys > 0;
    if (has_bias_) {
      any_visible = BuildBias(b, h, i, bias);
      for (int64_t j = 0; j < keys; ++j) s[j] += bias[j];
    }
    StoreQk(2, b, h, i, s);
    if (!any_visible) {
      std::fill(s, s + keys, C(0));
      StoreQk(3, b, h, i, s);
      return C(0);
    }
    const C normalizer = C(1) / simd::ExpShiftedSum(s, keys, simd::RowMax(s, keys));
    if (p_.qk_output != nullptr && p_.qk_output_mode == 3) {
      simd::ScaleRow(s, keys, normalizer);
      StoreQk(3, b, h, i, s);
      return C(1);
    }
    return normalizer;
  }

  // Keys [0, n) that any row of the tile may attend: causal frontiers, right windows and
  // padding end every row's key range early, and the keys past them are skipped by QK^T,
  // softmax and PV (about half the work of causal prefill). A qk_matmul_output needs
  // every score, so then all keys are computed.
  int64_t TileKeys(int64_t b, int64_t row0, int64_t rows) const {
    if (p_.qk_output != nullptr) return kv_seq_;
    int64_t keys = 0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t lo, hi;
      VisibleKeys(b, row0 + r, &lo, &hi);
      keys = std::max(keys, hi);
    }
    return keys;
  }

  void AttendTile(int participant, int64_t task) {
    const int64_t tile = task % tiles_per_head_;
    const int64_t h = (task / tiles_per_head_) % p_.q_heads;
    const int64_t b = task / tiles_per_head_ / p_.q_heads;
    const int64_t kvh = h / (p_.q_heads / p_.kv_heads);
    const int64_t row0 = tile * tile_rows_;
    const int64_t rows = std::min(tile_rows_, p_.q_seq - row0);
    const int64_t rows_padded = RoundUp(rows, kRowBlock);
    const int64_t keys = p_.probabilities.data != nullptr ? kv_seq_ : TileKeys(b, row0, rows);

    char* base = ParticipantScratch(participant);
    C* q_tile = reinterpret_cast<C*>(base);
    C* scores = reinterpret_cast<C*>(base + QTileBytes());
    C* out = reinterpret_cast<C*>(base + QTileBytes() + ScoresBytes());
    C* bias = reinterpret_cast<C*>(base + QTileBytes() + ScoresBytes() + OutBytes());
    C* normalizers = reinterpret_cast<C*>(base + QTileBytes() + ScoresBytes() + OutBytes() + RowBytes());

    if (p_.probabilities.data != nullptr) {
      for (int64_t r = 0; r < rows; ++r) {
        LoadRow(p_.probabilities.type, p_.probabilities.data, p_.probabilities.Offset(b, h, row0 + r), kv_seq_,
                scores + r * kv_padded_);
        normalizers[r] = C(1);
      }
      for (int64_t r = rows; r < rows_padded; ++r)
        std::fill(scores + r * kv_padded_, scores + (r + 1) * kv_padded_, C(0));
    } else {
      const C scale = static_cast<C>(p_.scale);
      for (int64_t r = 0; r < rows; ++r) {
        C* q_row = q_tile + r * p_.head_size;
        LoadRow(p_.q.type, p_.q.data, p_.q.Offset(b, h, row0 + r), p_.head_size, q_row);
        simd::ScaleRow(q_row, p_.head_size, scale);
      }
      // Padded rows are zero: their scores (0) and outputs are computed and never stored.
      std::fill(q_tile + rows * p_.head_size, q_tile + rows_padded * p_.head_size, C(0));
      PanelMatMul(rows_padded, keys, p_.head_size, q_tile, p_.head_size, PackedK(b, kvh), p_.head_size, scores,
                  kv_padded_);
      if (p_.scores_only) {
        for (int64_t r = 0; r < rows; ++r) StoreQk(0, b, h, row0 + r, scores + r * kv_padded_);
        return;
      }
      for (int64_t r = 0; r < rows; ++r) {
        normalizers[r] = ScoresToProbabilities(b, h, row0 + r, scores + r * kv_padded_, bias, keys);
      }
    }
    PanelMatMul(rows_padded, p_.v_head_size, keys, scores, kv_padded_, PackedV(b, kvh), kv_seq_, out, dv_padded_);
    for (int64_t r = 0; r < rows; ++r) {
      C* out_row = out + r * dv_padded_;
      simd::ScaleRow(out_row, p_.v_head_size, normalizers[r]);
      StoreRow(p_.y.type, p_.y.data, p_.y.Offset(b, h, row0 + r), out_row, p_.v_head_size);
    }
  }

  const AttentionProblem& p_;
  const int64_t kv_seq_, kv_padded_, dv_padded_;
  const int64_t packed_k_size_, packed_v_size_;
  const int64_t tile_rows_, tiles_per_head_;
  const bool has_bias_;
  std::unique_ptr<ScratchArena> arena_;
  C* packed_kv_ = nullptr;
  char* task_scratch_ = nullptr;
  size_t participant_bytes_ = 0;
};

}  // namespace

// 2^22 multiply-adds run serially in about 90 us here (47 GMAC/s); splitting pays once the
// work is about twice a region start (ONNX Runtime's cost model: ~100k cycles, ~40 us).
// A sweep on the loaded 2-core machine found no crossover up to 2^25 (the report has the
// samples): per-machine calibration decides; this is the conservative portable default.
constexpr int64_t kDefaultMinimumMultiplyAdds = int64_t{1} << 22;
constexpr int64_t kDefaultQueryTileRows = 64;

std::vector<ParamSpec> AttentionTuningSpecs() {
  return {
      ParamSpec::Int64(param::kMinimumMultiplyAdds, kDefaultMinimumMultiplyAdds, 1, int64_t{1} << 50,
                       "QK^T plus PV multiply-adds below which the node runs serially"),
      ParamSpec::Int64("algorithm.query_tile_rows", kDefaultQueryTileRows, 1, 4096,
                       "query rows per task (score scratch per participant = rows x kv_seq)"),
  };
}

StatusOr<AttentionTuning> ReadAttentionTuning(const KernelInfo& info) {
  AttentionTuning t;
  OL_ASSIGN_OR_RETURN(t.minimum_multiply_adds, info.tuning().Int64(param::kMinimumMultiplyAdds));
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
