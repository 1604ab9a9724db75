// QGemm (com.microsoft, 1): Y = alpha * (A - a_zero_point) (B - b_zero_point) * a_scale *
// b_scale + C, with A uint8/int8 [M, K] (transA: [K, M]), B uint8/int8 [K, N] (transB:
// [N, K]), b_scale and b_zero_point per tensor or per column, C int32 broadcastable to
// [M, N] in the accumulator's scale. Y is float when y_scale and y_zero_point are absent,
// else Quantize with them (the element type of y_zero_point).
//
// The integer product is IntegerGemmRows below: a straightforward blocked int32 loop over
// B shifted into int32 once (at creation when B and b_zero_point are constant), the place
// where the integer GEMM engine (native/kernels/quantized) plugs in.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

// K elements per block of the inner loop: a block of shifted B rows (kKBlock x N int32)
// is reused across the row's accumulators before the next block is touched.
constexpr int64_t kKBlock = 64;

// B - b_zero_point as int32, [K, N] row-major whatever transB was.
struct PackedB {
  int64_t k = 0, n = 0;
  std::vector<int32_t> values;
};

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

StatusOr<PackedB> PackB(const Tensor& b, const Tensor* b_zp, bool trans_b, const std::string& where) {
  if (b.shape().rank() != 2) return InvalidArgument(where, ": B must be 2-D, got ", b.TypeAndShape());
  PackedB p;
  p.k = trans_b ? b.shape()[1] : b.shape()[0];
  p.n = trans_b ? b.shape()[0] : b.shape()[1];
  OL_ASSIGN_OR_RETURN(const std::vector<int32_t> zp, ReadBZeroPoint(b_zp, b, p.n, where));
  p.values.resize(static_cast<size_t>(p.k * p.n));
  for (int64_t kk = 0; kk < p.k; ++kk) {
    for (int64_t j = 0; j < p.n; ++j) {
      const int64_t src = trans_b ? j * p.k + kk : kk * p.n + j;
      p.values[kk * p.n + j] = EightBitAt(b, src) - zp[zp.size() == 1 ? 0 : j];
    }
  }
  return p;
}

// acc[r][j] = sum_k a[r][k] * B[k][j] for `rows` rows of shifted A (int32, K each):
// the integer product of QGemm.
void IntegerGemmRows(const int32_t* a, int64_t rows, const PackedB& b, int32_t* acc) {
  const int64_t k = b.k, n = b.n;
  std::fill(acc, acc + rows * n, 0);
  for (int64_t k0 = 0; k0 < k; k0 += kKBlock) {
    const int64_t k1 = std::min(k, k0 + kKBlock);
    for (int64_t r = 0; r < rows; ++r) {
      int32_t* out = acc + r * n;
      for (int64_t kk = k0; kk < k1; ++kk) {
        const int32_t av = a[r * k + kk];
        if (av == 0) continue;
        const int32_t* brow = b.values.data() + kk * n;
        for (int64_t j = 0; j < n; ++j) out[j] += av * brow[j];
      }
    }
  }
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
      prepacked_ = true;
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
    PackedB per_run;
    const PackedB* packed = &packed_;
    if (!prepacked_) {
      OL_ASSIGN_OR_RETURN(per_run, PackB(*b, ctx.input(5), trans_b_, where));
      packed = &per_run;
    }
    const int64_t m = trans_a_ ? a->shape()[1] : a->shape()[0];
    const int64_t k = trans_a_ ? a->shape()[0] : a->shape()[1];
    const int64_t n = packed->n;
    if (k != packed->k) {
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
    // One unit = one row of Y, costing N * K multiply-adds; each block has its own scratch.
    return parallel_.Run(ctx.parallel(), "qgemm.rows", m, n * k, [&](int64_t begin, int64_t end) -> Status {
      const int64_t rows = end - begin;
      std::vector<int32_t> a_rows(static_cast<size_t>(rows * k)), acc(static_cast<size_t>(rows * n));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t kk = 0; kk < k; ++kk) {
          const int64_t i = begin + r;
          a_rows[r * k + kk] = EightBitAt(*a, trans_a_ ? kk * m + i : i * k + kk) - pa.zero_point;
        }
      }
      IntegerGemmRows(a_rows.data(), rows, *packed, acc.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = begin + r;
        for (int64_t j = 0; j < n; ++j) {
          const int32_t total = acc[r * n + j] + (cv != nullptr ? cv[i * c_row_stride + j * c_col_stride] : 0);
          const float v = static_cast<float>(total) * factor[j];
          if (out_type == DataType::kFloat) {
            y->data<float>()[i * n + j] = v;
          } else if (out_type == DataType::kUint8) {
            y->data<uint8_t>()[i * n + j] = Saturate<uint8_t>(v, py.zero_point);
          } else {
            y->data<int8_t>()[i * n + j] = Saturate<int8_t>(v, py.zero_point);
          }
        }
      }
      return Status::Ok();
    });
  }

 private:
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
  bool prepacked_ = false;
  PackedB packed_;
  ThresholdedParallel parallel_;
};

// Multiply-adds below which QGemm runs serially (as the float GEMM's order of magnitude).
constexpr int64_t kQGemmMinimumMultiplyAdds = 1 << 18;

}  // namespace

OL_REGISTER_KERNELS(qgemm_op) {
  Kernel("QGemm")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(WorkUnitTuning(kQGemmMinimumMultiplyAdds, "row"))
      .Factory(MakeKernel<QGemmKernel>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
