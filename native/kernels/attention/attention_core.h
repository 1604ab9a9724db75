// Scaled dot-product attention over validated, layout-independent views: the engine
// behind Attention (opsets 23-25) and FlexAttention without modifier graphs.
//
// Decomposition: (1) each (batch, kv head) writes its present_key/present_value rows and,
// when its keys/values are not already a compute-type matrix (float16/bfloat16 inputs, a
// cache without present outputs), decodes them once for its whole query-head group;
// (2) each task (batch, query head, tile of query rows) runs QK^T, softcap, bias, softmax
// and PV for its rows, with per-participant scratch reserved before launch and GEMM calls
// that run inline. Both passes split disjoint outputs, so results are bit-identical for
// every participant count.
#pragma once

#include <cstdint>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace attention {

// Element offsets of a (batch, head, row) tensor view whose rows are contiguous; covers
// both the 4-D (B, H, S, D) and the 3-D packed-heads (B, S, H*D) layouts.
struct RowView {
  const void* data = nullptr;
  DataType type = DataType::kUndefined;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  int64_t Offset(int64_t b, int64_t h, int64_t row) const {
    return b * batch_stride + h * head_stride + row * row_stride;
  }
};

struct MutableRowView {
  void* data = nullptr;
  DataType type = DataType::kUndefined;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  int64_t Offset(int64_t b, int64_t h, int64_t row) const {
    return b * batch_stride + h * head_stride + row * row_stride;
  }
};

// attn_mask broadcast to (batch, q_heads, q_seq, length); broadcast axes have stride 0.
// Keys at or past `length` (shorter masks) are masked out.
struct MaskView {
  const void* data = nullptr;  // null: no mask
  DataType type = DataType::kUndefined;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  int64_t length = 0;
};

struct AttentionProblem {
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_seq = 0, past_seq = 0, new_kv_seq = 0;
  int64_t head_size = 0, v_head_size = 0;
  int64_t kv_seq() const { return past_seq + new_kv_seq; }

  RowView q, k, v;         // new keys/values
  RowView past_k, past_v;  // (B, Hkv, past_seq, D); unused when past_seq == 0
  MaskView mask;
  std::vector<int64_t> nonpad_kv_seqlen;  // per batch; empty when absent

  double scale = 1.0;
  double softcap = 0.0;  // 0: none
  bool is_causal = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
  int qk_output_mode = 0;                       // 0 raw, 1 softcapped, 2 with bias, 3 probabilities

  MutableRowView y;           // (batch, q head, row) -> v_head_size values
  void* present_k = nullptr;  // (B, Hkv, kv_seq, head_size) of k.type, or null
  void* present_v = nullptr;  // (B, Hkv, kv_seq, v_head_size) of v.type, or null
  void* qk_output = nullptr;  // (B, Hq, q_seq, kv_seq) of qk_type, or null
  DataType qk_type = DataType::kUndefined;

  // Split runs, for modifier graphs that need whole score tensors (FlexAttention):
  // scores_only stops after writing the raw scores to qk_output (mode 0; y unused);
  // probabilities, when set, replaces QK^T and softmax with rows read from it
  // ((B, Hq, q_seq, kv_seq), contiguous) and runs PV alone.
  bool scores_only = false;
  RowView probabilities;
};

struct AttentionTuning {
  int64_t minimum_multiply_adds = 0;  // serial below this much work
  int64_t query_tile_rows = 64;       // query rows per task (rounded up to the row block)
};

// The engine's tuning schema (shared by every op that runs on it) and its values, read
// once when a kernel is created.
std::vector<ParamSpec> AttentionTuningSpecs();
StatusOr<AttentionTuning> ReadAttentionTuning(const KernelInfo& info);

// Multiply-adds of QK^T and PV: the work measure of the parallel threshold.
int64_t AttentionMultiplyAdds(const AttentionProblem& p);

// Runs the problem; outputs must be allocated by the caller. Computes in double when the
// query or value type is double, otherwise in float.
Status RunAttention(KernelContext& ctx, const AttentionProblem& p, const AttentionTuning& tuning);

}  // namespace attention
}  // namespace onnx_light
