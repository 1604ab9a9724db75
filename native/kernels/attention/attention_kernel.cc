// ONNX Attention (opsets 23, 24, 25): attribute and input validation, layout views and
// output allocation around the shared engine (attention_core.h).
#include <cmath>

#include "native/kernels/attention/attention_core.h"
#include "native/kernels/attention/element_rows.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace attention {
namespace {

// The softmax precisions the schema allows: FLOAT, FLOAT16, DOUBLE, BFLOAT16. The engine
// computes in float (double for double tensors) whatever is asked; narrower requests only
// ask for at least that precision.
bool IsValidSoftmaxPrecision(int64_t p) { return p == 1 || p == 10 || p == 11 || p == 16; }

class AttentionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset_version();
    OL_ASSIGN_OR_RETURN(int64_t is_causal, info.GetInt("is_causal", 0));
    is_causal_ = is_causal != 0;
    has_scale_ = info.HasAttribute("scale");
    if (has_scale_) {
      OL_ASSIGN_OR_RETURN(scale_, info.GetFloat("scale"));
    }
    OL_ASSIGN_OR_RETURN(softcap_, info.GetFloat("softcap", 0.0f));
    OL_ASSIGN_OR_RETURN(q_num_heads_, info.GetInt("q_num_heads", 0));
    OL_ASSIGN_OR_RETURN(kv_num_heads_, info.GetInt("kv_num_heads", 0));
    OL_ASSIGN_OR_RETURN(int64_t mode, info.GetInt("qk_matmul_output_mode", 0));
    if (mode < 0 || mode > 3) {
      return InvalidArgument(info.Where(), ": qk_matmul_output_mode must be 0..3, got ", mode);
    }
    qk_mode_ = static_cast<int>(mode);
    if (info.HasAttribute("softmax_precision")) {
      OL_ASSIGN_OR_RETURN(int64_t precision, info.GetInt("softmax_precision"));
      if (!IsValidSoftmaxPrecision(precision)) {
        return InvalidArgument(info.Where(), ": softmax_precision must be 1, 10, 11 or 16, got ", precision);
      }
    }
    if (softcap_ < 0 || std::isnan(softcap_)) {
      return InvalidArgument(info.Where(), ": softcap must be >= 0, got ", softcap_);
    }
    if (opset_ >= 25) {
      OL_ASSIGN_OR_RETURN(left_window_, info.GetInt("left_window_size", -1));
      OL_ASSIGN_OR_RETURN(right_window_, info.GetInt("right_window_size", -1));
      if (left_window_ < -1 || right_window_ < -1) {
        return InvalidArgument(info.Where(), ": window sizes must be -1 or >= 0, got left ", left_window_, " right ",
                               right_window_);
      }
    }
    OL_ASSIGN_OR_RETURN(tuning_, ReadAttentionTuning(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    AttentionProblem p;
    OL_RETURN_IF_ERROR(Describe(ctx, &p));
    OL_RETURN_IF_ERROR(AllocateOutputs(ctx, /*output_3d=*/ctx.input(0)->shape().rank() == 3, &p));
    return RunAttention(ctx, p, tuning_);
  }

 private:
  Status Describe(KernelContext& ctx, AttentionProblem* p) const;
  Status DescribeMask(KernelContext& ctx, const Tensor& mask, AttentionProblem* p) const;
  Status DescribePast(KernelContext& ctx, const Tensor& past_key, const Tensor& past_value, AttentionProblem* p) const;
  Status DescribeNonpad(KernelContext& ctx, const Tensor& nonpad, AttentionProblem* p) const;
  Status AllocateOutputs(KernelContext& ctx, bool output_3d, AttentionProblem* p) const;

  int opset_ = 23;
  bool is_causal_ = false;
  bool has_scale_ = false;
  float scale_ = 1.0f;
  float softcap_ = 0.0f;
  int64_t q_num_heads_ = 0, kv_num_heads_ = 0;
  int qk_mode_ = 0;
  int64_t left_window_ = -1, right_window_ = -1;
  AttentionTuning tuning_;
};

RowView View4d(const Tensor& t) {
  const Shape& s = t.shape();
  return RowView{t.raw_data(), t.dtype(), s[1] * s[2] * s[3], s[2] * s[3], s[3]};
}

// (B, S, H*D) seen as (batch, head, row).
RowView View3d(const Tensor& t, int64_t heads) {
  const Shape& s = t.shape();
  return RowView{t.raw_data(), t.dtype(), s[1] * s[2], s[2] / heads, s[2]};
}

Status AttentionKernel::Describe(KernelContext& ctx, AttentionProblem* p) const {
  OL_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequiredInput(0));
  OL_ASSIGN_OR_RETURN(const Tensor* k, ctx.RequiredInput(1));
  OL_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequiredInput(2));
  if (!IsAttentionFloat(q->dtype()) || !IsAttentionFloat(v->dtype()) || k->dtype() != q->dtype()) {
    return InvalidArgument(ctx.Where(), ": Q and K must share a float type and V must be a float type, got Q ",
                           q->TypeAndShape(), " K ", k->TypeAndShape(), " V ", v->TypeAndShape());
  }
  const int rank = q->shape().rank();
  if ((rank != 3 && rank != 4) || k->shape().rank() != rank || v->shape().rank() != rank) {
    return InvalidArgument(ctx.Where(), ": Q, K and V must all be 3-D or all 4-D, got Q ", q->shape(), " K ",
                           k->shape(), " V ", v->shape());
  }
  const Shape &qs = q->shape(), &ks = k->shape(), &vs = v->shape();
  if (rank == 3) {
    if (q_num_heads_ <= 0 || kv_num_heads_ <= 0) {
      return InvalidArgument(ctx.Where(), ": 3-D inputs need positive q_num_heads and kv_num_heads, got ", q_num_heads_,
                             " and ", kv_num_heads_);
    }
    if (qs[2] % q_num_heads_ != 0 || ks[2] % kv_num_heads_ != 0 || vs[2] % kv_num_heads_ != 0) {
      return InvalidArgument(ctx.Where(), ": hidden sizes of Q ", qs, ", K ", ks, " and V ", vs,
                             " must divide by q_num_heads ", q_num_heads_, " / kv_num_heads ", kv_num_heads_);
    }
    p->batch = qs[0];
    p->q_heads = q_num_heads_;
    p->kv_heads = kv_num_heads_;
    p->q_seq = qs[1];
    p->new_kv_seq = ks[1];
    p->head_size = qs[2] / q_num_heads_;
    p->v_head_size = vs[2] / kv_num_heads_;
    p->q = View3d(*q, q_num_heads_);
    p->k = View3d(*k, kv_num_heads_);
    p->v = View3d(*v, kv_num_heads_);
    if (ks[2] / kv_num_heads_ != p->head_size || vs[1] != ks[1] || ks[0] != qs[0] || vs[0] != qs[0]) {
      return InvalidArgument(ctx.Where(), ": K ", ks, " and V ", vs, " do not match Q ", qs, " with ", q_num_heads_,
                             " query and ", kv_num_heads_, " kv heads");
    }
  } else {
    if (opset_ >= 25 && (q_num_heads_ != 0 || kv_num_heads_ != 0)) {
      return InvalidArgument(ctx.Where(), ": q_num_heads and kv_num_heads must not be set for 4-D inputs");
    }
    if ((q_num_heads_ != 0 && q_num_heads_ != qs[1]) || (kv_num_heads_ != 0 && kv_num_heads_ != ks[1])) {
      return InvalidArgument(ctx.Where(), ": q_num_heads ", q_num_heads_, " / kv_num_heads ", kv_num_heads_,
                             " disagree with Q ", qs, " and K ", ks);
    }
    p->batch = qs[0];
    p->q_heads = qs[1];
    p->kv_heads = ks[1];
    p->q_seq = qs[2];
    p->new_kv_seq = ks[2];
    p->head_size = qs[3];
    p->v_head_size = vs[3];
    p->q = View4d(*q);
    p->k = View4d(*k);
    p->v = View4d(*v);
    if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2]) {
      return InvalidArgument(ctx.Where(), ": K ", ks, " and V ", vs, " do not match Q ", qs);
    }
  }
  if (p->kv_heads <= 0 || p->q_heads <= 0 || p->q_heads % p->kv_heads != 0) {
    return InvalidArgument(ctx.Where(), ": query heads (", p->q_heads, ") must be a positive multiple of kv heads (",
                           p->kv_heads, ")");
  }

  const Tensor* past_key = ctx.input(4);
  const Tensor* past_value = ctx.input(5);
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return InvalidArgument(ctx.Where(), ": past_key and past_value must be given together");
  }
  if (past_key != nullptr) OL_RETURN_IF_ERROR(DescribePast(ctx, *past_key, *past_value, p));
  const Tensor* nonpad = opset_ >= 24 ? ctx.input(6) : nullptr;
  if (nonpad != nullptr) OL_RETURN_IF_ERROR(DescribeNonpad(ctx, *nonpad, p));
  if (const Tensor* mask = ctx.input(3)) OL_RETURN_IF_ERROR(DescribeMask(ctx, *mask, p));

  p->scale = has_scale_ ? scale_ : 1.0 / std::sqrt(static_cast<double>(p->head_size));
  p->softcap = softcap_;
  p->is_causal = is_causal_;
  p->left_window = left_window_;
  p->right_window = right_window_;
  p->qk_output_mode = qk_mode_;
  return Status::Ok();
}

Status AttentionKernel::DescribePast(KernelContext& ctx, const Tensor& past_key, const Tensor& past_value,
                                     AttentionProblem* p) const {
  const Shape &pk = past_key.shape(), &pv = past_value.shape();
  if (past_key.dtype() != p->k.type || past_value.dtype() != p->v.type || pk.rank() != 4 || pv.rank() != 4 ||
      pk[0] != p->batch || pk[1] != p->kv_heads || pk[3] != p->head_size || pv[0] != p->batch || pv[1] != p->kv_heads ||
      pv[2] != pk[2] || pv[3] != p->v_head_size) {
    return InvalidArgument(ctx.Where(), ": past_key ", past_key.TypeAndShape(), " and past_value ",
                           past_value.TypeAndShape(), " must be (", p->batch, ", ", p->kv_heads,
                           ", past, head size) of the K and V types");
  }
  p->past_seq = pk[2];
  p->past_k = View4d(past_key);
  p->past_v = View4d(past_value);
  return Status::Ok();
}

Status AttentionKernel::DescribeNonpad(KernelContext& ctx, const Tensor& nonpad, AttentionProblem* p) const {
  if (nonpad.dtype() != DataType::kInt64 || nonpad.shape().rank() != 1 || nonpad.shape()[0] != p->batch) {
    return InvalidArgument(ctx.Where(), ": nonpad_kv_seqlen must be int64 (", p->batch, "), got ",
                           nonpad.TypeAndShape());
  }
  if (p->past_seq > 0 || ctx.input(4) != nullptr) {
    return InvalidArgument(ctx.Where(), ": nonpad_kv_seqlen cannot be combined with past_key/past_value");
  }
  const int64_t* lengths = nonpad.data<int64_t>();
  p->nonpad_kv_seqlen.assign(lengths, lengths + p->batch);
  for (int64_t len : p->nonpad_kv_seqlen) {
    if (len < 0 || len > p->kv_seq()) {
      return InvalidArgument(ctx.Where(), ": nonpad_kv_seqlen value ", len, " outside [0, ", p->kv_seq(), "]");
    }
  }
  return Status::Ok();
}

Status AttentionKernel::DescribeMask(KernelContext& ctx, const Tensor& mask, AttentionProblem* p) const {
  const Shape& ms = mask.shape();
  if (!IsLoadableNumeric(mask.dtype()) || ms.rank() < 1 || ms.rank() > 4) {
    return InvalidArgument(ctx.Where(), ": attn_mask must be a bool or numeric tensor of rank 1..4, got ",
                           mask.TypeAndShape());
  }
  // Right-aligned broadcast against (batch, q_heads, q_seq, keys); the key axis may be
  // shorter than kv_seq (the missing keys are masked) but not longer.
  const int64_t target[3] = {p->batch, p->q_heads, p->q_seq};
  int64_t strides[3] = {0, 0, 0};
  int64_t stride = ms[ms.rank() - 1];
  for (int axis = 2; axis >= 0; --axis) {
    const int mask_axis = ms.rank() - 4 + axis;
    if (mask_axis < 0) break;
    const int64_t dim = ms[mask_axis];
    if (dim != 1 && dim != target[axis]) {
      return InvalidArgument(ctx.Where(), ": attn_mask ", ms, " does not broadcast to (", p->batch, ", ", p->q_heads,
                             ", ", p->q_seq, ", ", p->kv_seq(), ")");
    }
    strides[axis] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  if (ms[ms.rank() - 1] > p->kv_seq()) {
    return InvalidArgument(ctx.Where(), ": attn_mask ", ms, " has more keys than kv_seq ", p->kv_seq());
  }
  p->mask = MaskView{mask.raw_data(), mask.dtype(), strides[0], strides[1], strides[2], ms[ms.rank() - 1]};
  return Status::Ok();
}

Status AttentionKernel::AllocateOutputs(KernelContext& ctx, bool output_3d, AttentionProblem* p) const {
  const int64_t b = p->batch, hq = p->q_heads, sq = p->q_seq, dv = p->v_head_size;
  const DataType t1 = p->q.type;
  Shape y_shape = output_3d ? Shape{b, sq, hq * dv} : Shape{b, hq, sq, dv};
  OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, t1, y_shape));
  p->y = output_3d ? MutableRowView{y->raw_data(), t1, sq * hq * dv, dv, hq * dv}
                   : MutableRowView{y->raw_data(), t1, hq * sq * dv, sq * dv, dv};
  if (ctx.num_outputs() > 1) {
    OL_ASSIGN_OR_RETURN(Tensor * present_k,
                        ctx.AllocateOutput(1, p->k.type, Shape{b, p->kv_heads, p->kv_seq(), p->head_size}));
    p->present_k = present_k->raw_data();
  }
  if (ctx.num_outputs() > 2) {
    OL_ASSIGN_OR_RETURN(Tensor * present_v, ctx.AllocateOutput(2, p->v.type, Shape{b, p->kv_heads, p->kv_seq(), dv}));
    p->present_v = present_v->raw_data();
  }
  if (ctx.num_outputs() > 3) {
    OL_ASSIGN_OR_RETURN(Tensor * qk, ctx.AllocateOutput(3, t1, Shape{b, hq, sq, p->kv_seq()}));
    p->qk_output = qk->raw_data();
    p->qk_type = t1;
  }
  return Status::Ok();
}

}  // namespace

OL_REGISTER_KERNELS(attention) {
  // 23: base op; 24 adds nonpad_kv_seqlen; 25 adds the sliding window.
  Kernel("Attention")
      .SinceVersions({23, 24, 25})
      .Types(TypeList<float, Float16, BFloat16, double>{})
      .Tuning(AttentionTuningSpecs())
      .Factory(MakeKernel<AttentionKernel>())
      .AddTo(registry);
}

}  // namespace attention
}  // namespace onnx_light
