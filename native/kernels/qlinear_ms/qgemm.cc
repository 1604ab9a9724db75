// QGemm (com.microsoft, 1): Y = alpha * (A - a_zero_point) (B - b_zero_point) * a_scale *
// b_scale + C, with A uint8/int8 [M, K] (transA: [K, M]), B uint8/int8 [K, N] (transB:
// [N, K]), b_scale and b_zero_point per tensor or per column, C int32 broadcastable to
// [M, N] in the accumulator's scale. Y is float when y_scale and y_zero_point are absent,
// else Quantize with them (the element type of y_zero_point).
//
// The integer product runs on the integer GEMM engine (native/kernels/quantized/igemm):
// B is packed at creation when it and b_zero_point are constant (transB is a stride of the
// packing), A is used in place (transA: transposed once per run into scratch), and the
// epilogue turns each int32 block into Y as it leaves the engine.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"
#include "native/kernels/quantized/igemm/igemm.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

int32_t EightBitAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? static_cast<int32_t>(t.data<int8_t>()[i])
                                      : static_cast<int32_t>(t.data<uint8_t>()[i]);
}

// Zero point of B: scalar or one per column (absent: 0), with B's type.
StatusOr<std::vector<int32_t>> ReadBZeroPoint(const Tensor* zp, const Tensor& b, int64_t n, const std::string& where) {
  if (zp == nullptr) return std::vector<int32_t>{0};
  if (zp->dtype() != b.dtype() || zp->shape().rank() > 1 || (zp->num_elements() != 1 && zp->num_elements() != n)) {
    return InvalidArgument(where, ": b_zero_point ", zp->TypeAndShape(), " must be a ", DataTypeName(b.dtype()),
                           " scalar or have ", n, " elements (columns of B)");
  }
  std::vector<int32_t> v(zp->num_elements());
  for (int64_t i = 0; i < zp->num_elements(); ++i) v[i] = EightBitAt(*zp, i);
  return v;
}

StatusOr<std::vector<float>> ReadBScale(const Tensor* s, int64_t n, const std::string& where) {
  if (s == nullptr) return InvalidArgument(where, ": b_scale is required");
  if (s->dtype() != DataType::kFloat || s->shape().rank() > 1 || (s->num_elements() != 1 && s->num_elements() != n)) {
    return InvalidArgument(where, ": b_scale ", s->TypeAndShape(), " must be a float scalar or have ", n,
                           " elements (columns of B)");
  }
  return std::vector<float>(s->data<float>(), s->data<float>() + s->num_elements());
}

// B (K x N; transB: stored [N, K]) packed for the engine with its zero points.
StatusOr<std::shared_ptr<const igemm::IgemmPackedB>> PackB(const Tensor& b, const Tensor* b_zp, bool trans_b,
                                                           const std::string& where) {
  if (b.shape().rank() != 2) return InvalidArgument(where, ": B must be 2-D, got ", b.TypeAndShape());
  const int64_t k = trans_b ? b.shape()[1] : b.shape()[0];
  const int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  OL_ASSIGN_OR_RETURN(const std::vector<int32_t> zp, ReadBZeroPoint(b_zp, b, n, where));
  // Element (kk, j) of B is at kk * n + j, or at j * k + kk when transposed.
  const igemm::IgemmMatrix matrix{b.raw_data(), b.dtype() == DataType::kInt8, trans_b ? 1 : n, trans_b ? k : 1};
  return igemm::IgemmPackedB::Create(k, n, matrix, zp.data(), static_cast<int64_t>(zp.size()));
}

class QGemmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_ASSIGN_OR_RETURN(alpha_, info.GetFloat("alpha", 1.0f));
    OL_ASSIGN_OR_RETURN(const int64_t ta, info.GetInt("transA", 0));
    OL_ASSIGN_OR_RETURN(const int64_t tb, info.GetInt("transB", 0));
    trans_a_ = ta != 0;
    trans_b_ = tb != 0;
    const Tensor* b = info.constant_input(3);
    const Tensor* b_zp = info.constant_input(5);
    if (b != nullptr && (b_zp != nullptr || info.num_inputs() <= 5) &&
        (b->dtype() == DataType::kInt8 || b->dtype() == DataType::kUint8)) {
      OL_ASSIGN_OR_RETURN(packed_, PackB(*b, b_zp, trans_b_, info.Where()));
      // Compute reads only packed_ (and B's type and shape).
      OL_RETURN_IF_ERROR(info.AbsorbConstantInput(3, packed_->held_bytes()));
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(*a, where, "A"));
    OL_RETURN_IF_ERROR(CheckEightBit(*b, where, "B"));
    if (a->shape().rank() != 2) return InvalidArgument(where, ": A must be 2-D, got ", a->TypeAndShape());
    std::shared_ptr<const igemm::IgemmPackedB> packed = packed_;
    if (packed == nullptr) {
      OL_ASSIGN_OR_RETURN(packed, PackB(*b, ctx.input(5), trans_b_, where));
    }
    const int64_t m = trans_a_ ? a->shape()[1] : a->shape()[0];
    const int64_t k = trans_a_ ? a->shape()[0] : a->shape()[1];
    const int64_t n = packed->n();
    if (k != packed->k()) {
      return InvalidArgument(where, ": inner dimensions differ: A ", a->shape().ToString(),
                             (trans_a_ ? " (transA)" : ""), " and B ", b->shape().ToString(),
                             (trans_b_ ? " (transB)" : ""));
    }
    OL_ASSIGN_OR_RETURN(const QParams pa,
                        ReadQParams(ctx.input(1), ctx.input(2), a->dtype(), where, "a_scale", "a_zero_point"));
    OL_ASSIGN_OR_RETURN(const std::vector<float> b_scale, ReadBScale(ctx.input(4), n, where));
    // C: int32, unidirectionally broadcastable to [M, N].
    const Tensor* c = ctx.input(6);
    int64_t c_row_stride = 0, c_col_stride = 0;
    if (c != nullptr) {
      const Shape& cs = c->shape();
      const int64_t c_rows = cs.rank() == 2 ? cs[0] : 1, c_cols = cs.rank() >= 1 ? cs[cs.rank() - 1] : 1;
      if (c->dtype() != DataType::kInt32 || cs.rank() > 2 || (c_rows != 1 && c_rows != m) ||
          (c_cols != 1 && c_cols != n)) {
        return InvalidArgument(where, ": C ", c->TypeAndShape(), " must be int32 and broadcastable to [", m, ", ", n,
                               "]");
      }
      c_row_stride = c_rows == 1 ? 0 : c_cols;
      c_col_stride = c_cols == 1 ? 0 : 1;
    }
    const Tensor* y_scale_t = ctx.input(7);
    const Tensor* y_zp_t = ctx.input(8);
    if ((y_scale_t == nullptr) != (y_zp_t == nullptr)) {
      return InvalidArgument(where,
                             ": give both y_scale and y_zero_point (quantized output) or neither (float output)");
    }
    QParams py;
    DataType out_type = DataType::kFloat;
    if (y_zp_t != nullptr) {
      OL_RETURN_IF_ERROR(CheckEightBit(*y_zp_t, where, "y_zero_point"));
      out_type = y_zp_t->dtype();
      OL_ASSIGN_OR_RETURN(py, ReadQParams(y_scale_t, y_zp_t, out_type, where, "y_scale", "y_zero_point"));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, Shape({m, n})));
    if (m == 0 || n == 0) return Status::Ok();
    // Per column: the float factor of the int32 accumulator (alpha * a_scale * b_scale[j]),
    // divided by y_scale for a quantized output.
    std::vector<float> factor(n);
    for (int64_t j = 0; j < n; ++j) {
      factor[j] = alpha_ * pa.scale * b_scale[b_scale.size() == 1 ? 0 : j];
      if (out_type != DataType::kFloat) factor[j] /= py.scale;
    }
    const int32_t* cv = c != nullptr ? c->data<int32_t>() : nullptr;
    // A as the engine reads it: row-major [M, K], transposed into scratch for transA.
    const void* a_rows = a->raw_data();
    std::vector<uint8_t> a_transposed;
    if (trans_a_ && m > 1 && k > 1) {
      a_transposed.resize(static_cast<size_t>(m * k));
      const auto* src = static_cast<const uint8_t*>(a->raw_data());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t kk = 0; kk < k; ++kk) a_transposed[i * k + kk] = src[kk * m + i];
      }
      a_rows = a_transposed.data();
    }
    const igemm::IgemmA ia{igemm::IgemmMatrix{a_rows, a->dtype() == DataType::kInt8, k, 1}, &pa.zero_point, 1};
    // Serial below parallel.minimum_elements multiply-adds; above, the engine splits C into
    // its own shape-determined blocks (so results do not depend on the participant count).
    const bool serial = parallel_.Serial(m, n * k);
    const int64_t minimum_units = serial ? std::numeric_limits<int64_t>::max() : 0;
    int64_t scratch = 0;
    OL_RETURN_IF_ERROR(igemm::IgemmCompute(
        ctx.parallel(), ctx.allocator(), minimum_units, m, ia, *packed,
        [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
          for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            const int32_t* acc_row = acc + r * ld;
            const int32_t* c_row = cv != nullptr ? cv + i * c_row_stride : nullptr;
            if (out_type == DataType::kFloat) {
              Epilogue(acc_row, c_row, c_col_stride, factor.data(), j0, cols, y->data<float>() + i * n,
                       [](float v) { return v; });
            } else if (out_type == DataType::kUint8) {
              Epilogue(acc_row, c_row, c_col_stride, factor.data(), j0, cols, y->data<uint8_t>() + i * n,
                       [zp = py.zero_point](float v) { return Saturate<uint8_t>(v, zp); });
            } else {
              Epilogue(acc_row, c_row, c_col_stride, factor.data(), j0, cols, y->data<int8_t>() + i * n,
                       [zp = py.zero_point](float v) { return Saturate<int8_t>(v, zp); });
            }
          }
        },
        &scratch));
    ctx.RecordScratch(scratch + static_cast<int64_t>(a_transposed.size()));
    return Status::Ok();
  }

 private:
  // y[j] = out(float(acc[j - j0] + C(i, j)) * factor[j]) for j in [j0, j0 + cols): the int32
  // sum wraps as the accumulator does; one float product per element, as the reference.
  template <typename T, typename Out>
  static void Epilogue(const int32_t* acc, const int32_t* c_row, int64_t c_col_stride, const float* factor, int64_t j0,
                       int cols, T* y, Out out) {
    for (int c = 0; c < cols; ++c) {
      const int64_t j = j0 + c;
      const uint32_t bias = c_row != nullptr ? static_cast<uint32_t>(c_row[j * c_col_stride]) : 0u;
      const auto total = static_cast<int32_t>(static_cast<uint32_t>(acc[c]) + bias);
      y[j] = out(static_cast<float>(total) * factor[j]);
    }
  }

  // round_half_to_even(v) + zero_point, saturated (v is already in y's scale).
  template <typename Q>
  static Q Saturate(float v, int32_t zero_point) {
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    float r = std::nearbyint(v) + static_cast<float>(zero_point);
    if (!(r >= lo)) r = lo;
    if (r > hi) r = hi;
    return static_cast<Q>(r);
  }

  float alpha_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
  std::shared_ptr<const igemm::IgemmPackedB> packed_;  // B packed at creation when constant
  ThresholdedParallel parallel_;
};

// Multiply-adds below which QGemm runs serially. Above it the engine's blocks are fixed by
// the shape (96 rows x 256 columns of C each), so the schema has no block parameter.
// 2^20, not 2^18: at 2^18 (64^3, the corpus's small size) C is one engine block, so the
// region it opened had one task for two participants and paid its set-up (a second
// participant's scratch, the region) for nothing: 0.95x of serial in all three runs of the
// bb90c10 report (Zen 4). A product needs 128 rows (two row blocks) before two participants
// can share it; at 2^20 multiply-adds each of two participants has about 60 us of work at
// that report's serial rate (30.6 us per 2^18, B packed per run), against a region's
// 0.7 us dispatch (benchmarks/parallel_for_overhead) and a parked worker's wake-up. The
// calibrated crossover of that machine was 741,455 (between the losing 2^18 and the
// winning 2^21, 128^3: 1.13-1.18x), below this default.
constexpr int64_t kQGemmMinimumMultiplyAdds = 1 << 20;

}  // namespace

OL_REGISTER_KERNELS(qgemm_op) {
  Kernel("QGemm")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning({MinimumElementsParam(kQGemmMinimumMultiplyAdds,
                                    "multiply-adds (M x N x K) below which the product runs serially")})
      .Factory(MakeKernel<QGemmKernel>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
