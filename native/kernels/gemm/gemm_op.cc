// ONNX Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast unidirectionally to (M, N).
// com.microsoft FusedGemm (ORT's contrib op, float): Gemm followed by an activation
// (attributes activation, activation_alpha/beta/gamma), applied by the engine to each
// output block right after its K reduction (epilogue.h). Two extensions beyond ORT's
// FusedGemm, for MatMul + Add [+ activation] as transformers have it (graph_rewrites'
// fuse_matmul_add_into_gemm):
//   - A may have rank > 2 when transA is 0: its leading dims flatten into M (a view of the
//     same bytes), and Y has A's leading dims and N: [..., K] x [K, N] -> [..., N];
//   - a C of one row ([N], [1, N], or ones then N) with beta 1 is a bias added in the
//     epilogue, after the K reduction: Y equals MatMul then Add then the activation bit
//     for bit. Any other C is copied into Y first and accumulated (Gemm's beta path); with
//     rank(A) > 2, C must be such a row (or a scalar): it may not broadcast over A's axes.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/typed_gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

template <bool kFused>
class GemmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    if (kFused) {
      const float unset = std::numeric_limits<float>::quiet_NaN();
      OL_ASSIGN_OR_RETURN(const std::string activation, info.GetString("activation", ""));
      OL_ASSIGN_OR_RETURN(const float activation_alpha, info.GetFloat("activation_alpha", unset));
      OL_ASSIGN_OR_RETURN(const float activation_beta, info.GetFloat("activation_beta", unset));
      OL_ASSIGN_OR_RETURN(epilogue_,
                          gemm::ParseGemmActivation(info.Where(), activation, activation_alpha, activation_beta));
    }
    OL_ASSIGN_OR_RETURN(const int64_t trans_a, info.GetInt("transA", 0));
    OL_ASSIGN_OR_RETURN(const int64_t trans_b, info.GetInt("transB", 0));
    OL_ASSIGN_OR_RETURN(alpha_, info.GetFloat("alpha", 1.0f));
    OL_ASSIGN_OR_RETURN(beta_, info.GetFloat("beta", 1.0f));
    trans_a_ = trans_a != 0;
    trans_b_ = trans_b != 0;
    // A constant float B (a fully connected layer's weights) is packed once here and
    // absorbed: only the packed form is read from now on.
    const Tensor* b = info.constant_input(1);
    if (b != nullptr && b->dtype() == DataType::kFloat && b->shape().rank() == 2) {
      const int64_t k = b->shape()[trans_b_ ? 1 : 0], n = b->shape()[trans_b_ ? 0 : 1];
      // Consumed when the session allows it: B's rows go back to the system as they are
      // packed, so B and its packed form never coexist whole (registry/kernel.h).
      const int64_t ldb = b->shape()[1];
      ConstantConsumer consumer = info.ConsumeConstantInput(1);
      OL_ASSIGN_OR_RETURN(prepacked_b_, gemm::PrepackedB::Create(Allocator::Default(), trans_b_, k, n, b->data<float>(),
                                                                 ldb, [&consumer, ldb](int64_t rows) {
                                                                   consumer.ReleaseThrough(
                                                                       static_cast<size_t>(rows * ldb) * sizeof(float));
                                                                 }));
      OL_RETURN_IF_ERROR(info.AbsorbConstantInput(1, static_cast<int64_t>(prepacked_b_->bytes())));
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    const Tensor* c = ctx.input(2);
    // FusedGemm: A [..., K] (not transposed) flattens its leading dims into M.
    const bool flatten_a = kFused && !trans_a_ && a->shape().rank() > 2;
    if ((a->shape().rank() != 2 && !flatten_a) || b->shape().rank() != 2) {
      return InvalidArgument(ctx.Where(), ": A and B must be 2-D", (kFused ? " (or A [..., K] with transA 0)" : ""),
                             ", got ", a->TypeAndShape(), " and ", b->TypeAndShape());
    }
    if (a->dtype() != b->dtype() || (c != nullptr && c->dtype() != a->dtype())) {
      return InvalidArgument(ctx.Where(), ": element types differ: A ", a->TypeAndShape(), ", B ", b->TypeAndShape(),
                             c != nullptr ? ", C " + c->TypeAndShape() : "");
    }
    if (kFused && a->dtype() != DataType::kFloat) {
      return NotImplemented(ctx.Where(), ": element type ", DataTypeName(a->dtype()), " is not supported (float only)");
    }
    const int rank = a->shape().rank();
    int64_t m = a->shape()[trans_a_ ? 1 : 0];
    const int64_t k = a->shape()[trans_a_ ? 0 : rank - 1];
    std::vector<int64_t> y_dims;
    for (int i = 0; i + 1 < rank; ++i) y_dims.push_back(a->shape()[i]);
    if (flatten_a) {
      m = 1;
      for (int64_t d : y_dims) m *= d;
    }
    const int64_t kb = b->shape()[trans_b_ ? 1 : 0], n = b->shape()[trans_b_ ? 0 : 1];
    if (k != kb) {
      return InvalidArgument(ctx.Where(), ": inner dimensions differ: A ", a->shape(),
                             (trans_a_ ? " (transposed)" : ""), ", B ", b->shape(), (trans_b_ ? " (transposed)" : ""));
    }
    if (!flatten_a) y_dims = {m};
    y_dims.push_back(n);
    const bool row_c = c != nullptr && IsRow(c->shape(), n);
    if (flatten_a && c != nullptr && !row_c && c->shape().num_elements() != 1) {
      return InvalidArgument(ctx.Where(), ": C ", c->TypeAndShape(), " must be a scalar or one row of ", n,
                             " values when A ", a->TypeAndShape(), " has more than 2 dims");
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), Shape(std::move(y_dims))));
    const bool use_c = c != nullptr && beta_ != 0.0f && m > 0 && n > 0;
    // FusedGemm's bias: a row C with beta 1 goes into the epilogue (float: checked above).
    gemm::Epilogue epilogue_with_bias = epilogue_;
    const bool bias_epilogue = kFused && use_c && beta_ == 1.0f && row_c && c->shape().num_elements() == n;
    if (bias_epilogue) {
      epilogue_with_bias.bias = c->data<float>();
      epilogue_with_bias.bias_columns = n;
    } else if (use_c) {
      OL_RETURN_IF_ERROR(BroadcastC(ctx, *c, m, n, flatten_a, y));
    }
    const gemm::Epilogue* epilogue = kFused && !epilogue_with_bias.empty() ? &epilogue_with_bias : nullptr;
    const float c_beta = use_c && !bias_epilogue ? beta_ : 0.0f;
    const int64_t lda = a->shape()[rank - 1];
    if (prepacked_b_ != nullptr) {  // B absorbed; A is float too (the types agree)
      gemm::GemmStats stats;
      OL_RETURN_IF_ERROR(gemm::SgemmPrepackedB(ctx.parallel(), ctx.allocator(), tuning_, trans_a_, m, alpha_,
                                               a->data<float>(), lda, *prepacked_b_, c_beta, y->data<float>(), n,
                                               &stats, epilogue)
                             .WithContext(ctx.Where() + ": "));
      ctx.RecordScratch(stats.scratch_bytes);
      return Status::Ok();
    }
    if (kFused) {  // float (checked above)
      gemm::GemmStats stats;
      OL_RETURN_IF_ERROR(gemm::Sgemm(ctx.parallel(), ctx.allocator(), tuning_, trans_a_, trans_b_, m, n, k, alpha_,
                                     a->data<float>(), lda, b->data<float>(), b->shape()[1], c_beta, y->data<float>(),
                                     n, &stats, epilogue)
                             .WithContext(ctx.Where() + ": "));
      ctx.RecordScratch(stats.scratch_bytes);
      return Status::Ok();
    }
    gemm::TypedGemmArgs args;
    args.trans_a = trans_a_;
    args.trans_b = trans_b_;
    args.m = m;
    args.n = n;
    args.k = k;
    args.alpha = alpha_;
    args.beta = c_beta;
    args.a = a->raw_data();
    args.lda = lda;
    args.b = b->raw_data();
    args.ldb = b->shape()[1];
    args.c = y->raw_data();
    args.ldc = n;
    gemm::GemmStats stats;
    OL_RETURN_IF_ERROR(gemm::TypedGemm(a->dtype(), ctx.parallel(), ctx.allocator(), tuning_, args, &stats)
                           .WithContext(ctx.Where() + ": "));
    ctx.RecordScratch(stats.scratch_bytes);
    return Status::Ok();
  }

 private:
  // Whether C is one row of n values (or a scalar-like single value when n is 1): [n], [1, n],
  // [1, ..., 1, n], broadcasting over every leading axis of the output.
  static bool IsRow(const Shape& s, int64_t n) {
    if (s.rank() == 0) return n == 1;
    for (int i = 0; i + 1 < s.rank(); ++i) {
      if (s[i] != 1) return false;
    }
    return s[s.rank() - 1] == n;
  }

  // Y = C broadcast to (m, n): C may be a scalar, (n), (1|m, 1|n); with `leading_ones` (A
  // of rank > 2 flattened into m rows) also (1, ..., 1, 1|n).
  static Status BroadcastC(KernelContext& ctx, const Tensor& c, int64_t m, int64_t n, bool leading_ones, Tensor* y) {
    const Shape& s = c.shape();
    const int64_t c_rows = s.rank() == 2 ? s[0] : 1;
    const int64_t c_cols = s.rank() >= 1 ? s[s.rank() - 1] : 1;
    for (int i = 0; i + 2 < s.rank(); ++i) leading_ones = leading_ones && s[i] == 1;
    if ((s.rank() > 2 && (!leading_ones || s[s.rank() - 2] != 1)) || (c_rows != 1 && c_rows != m) ||
        (c_cols != 1 && c_cols != n)) {
      return InvalidArgument(ctx.Where(), ": C ", c.TypeAndShape(), " does not broadcast to [", m, ",", n, "]");
    }
    const size_t es = ElementSize(c.dtype());
    const char* src = static_cast<const char*>(c.raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    for (int64_t i = 0; i < m; ++i) {
      const char* row = src + (c_rows == 1 ? 0 : i) * c_cols * es;
      char* out = dst + i * n * es;
      if (c_cols == n) {
        std::memcpy(out, row, n * es);
      } else {
        for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * es, row, es);
      }
    }
    ctx.RecordCopy();
    return Status::Ok();
  }

  gemm::GemmTuning tuning_;
  std::shared_ptr<const gemm::PrepackedB> prepacked_b_;  // the constant B, absorbed
  bool trans_a_ = false, trans_b_ = false;
  float alpha_ = 1.0f, beta_ = 1.0f;
  gemm::Epilogue epilogue_;  // FusedGemm's activation (no residual)
};

OL_REGISTER_KERNELS(gemm_op) {
  using WithInts = decltype(Floats{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});
  using WithBf16 = decltype(WithInts{} + TypeList<BFloat16>{});
  // Opset ranges: 1-6 (broadcast attribute), 7-8 (numpy broadcast), 9-10 (integers),
  // 11-12 (optional C), 13+ (bfloat16).
  Kernel("Gemm")
      .Opsets(
          {Since(1, Floats{}), Since(7, Floats{}), Since(9, WithInts{}), Since(11, WithInts{}), Since(13, WithBf16{})})
      .Tuning(gemm::GemmTuningParams())
      .Calibratable()
      .Factory(MakeKernel<GemmKernel<false>>())
      .AddTo(registry);
  // ORT's contrib schema (since 1): Gemm's inputs and attributes plus the activation.
  Kernel("FusedGemm")
      .Domain("com.microsoft")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<GemmKernel<true>>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
