// MatMulInteger (int32 output) and QLinearMatMul (requantized 8-bit output) on the integer
// GEMM engine (igemm/igemm.h): numpy.matmul batching, zero points per tensor, per row of A
// or per column of B, scales likewise. A constant 2-D B (with a constant or absent zero
// point) is packed once at creation.
#include <algorithm>
#include <memory>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantized/integer_matmul.h"

namespace onnx_light {
namespace {

using quantized::AZeroPoint;
using quantized::MatMulInputs;
using quantized::PerAxis;
using quantized::PrepackedMatMulB;
using quantized::ReadIntegerMatMulOperands;
using quantized::RunBatches;

class MatMulIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, kInputs);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const auto in, ReadIntegerMatMulOperands(ctx, kInputs, AZeroPoint::kPerRow));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, in.plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    // The engine writes the int32 product straight into Y.
    return RunBatches(
        ctx, tuning_, in.plan, in.rows_per_zp, in.a->raw_data(), in.a->dtype() == DataType::kInt8, in.azp, *in.b,
        in.bzp, prepacked_.Match(*in.b, ctx.input(kInputs.b_zp)),
        [](int64_t, int64_t, int, int64_t, int, const int32_t*, int64_t) {}, y->data<int32_t>());
  }

 private:
  static constexpr MatMulInputs kInputs{0, 2, 1, 3};
  gemm::GemmTuning tuning_;
  PrepackedMatMulB prepacked_;
};

class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, kInputs);
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const auto in, ReadIntegerMatMulOperands(ctx, kInputs, AZeroPoint::kPerRow, "a", "b"));
    const Tensor* y_zp_tensor = ctx.input(7);
    const DataType out_type = y_zp_tensor != nullptr ? y_zp_tensor->dtype() : in.a->dtype();
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      return InvalidArgument(where, ": y_zero_point must be int8 or uint8, got ", y_zp_tensor->TypeAndShape());
    }
    const gemm::MatMulPlan& plan = in.plan;
    OL_ASSIGN_OR_RETURN(const auto a_scale, quantized::ReadScale(ctx.input(1), in.rows_per_zp, where, "a_scale"));
    OL_ASSIGN_OR_RETURN(const auto b_scale, quantized::ReadScale(ctx.input(4), plan.n, where, "b_scale"));
    OL_ASSIGN_OR_RETURN(const auto y_scale, quantized::ReadScale(ctx.input(6), 1, where, "y_scale"));
    OL_ASSIGN_OR_RETURN(const auto yzp, quantized::ReadZeroPoint(y_zp_tensor, 1, where, "y_zero_point"));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    // multipliers[r * columns + j] = a_scale(r) * b_scale(j) / y_scale, in float as the
    // reference computes it; one row per a_scale value, one column per b_scale value.
    const int64_t scale_rows = static_cast<int64_t>(a_scale.values.size());
    const int64_t columns = static_cast<int64_t>(b_scale.values.size());
    std::vector<float> multipliers(static_cast<size_t>(scale_rows * columns));
    for (int64_t r = 0; r < scale_rows; ++r) {
      for (int64_t j = 0; j < columns; ++j) {
        multipliers[r * columns + j] = a_scale.values[r] * b_scale.values[j] / y_scale.at(0);
      }
    }
    const int64_t step = columns > 1 ? 1 : 0;
    const bool is_signed = out_type == DataType::kInt8;
    auto* out = static_cast<uint8_t*>(y->raw_data());
    const int64_t m = plan.m, n = plan.n, rows_per_scale = in.rows_per_zp;
    const int32_t y_zero = yzp.at(0);
    return RunBatches(ctx, tuning_, plan, in.rows_per_zp, in.a->raw_data(), in.a->dtype() == DataType::kInt8, in.azp,
                      *in.b, in.bzp, prepacked_.Match(*in.b, ctx.input(kInputs.b_zp)),
                      [&](int64_t t, int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                        for (int r = 0; r < rows; ++r) {
                          const int64_t sr = scale_rows == 1 ? 0 : (i0 + r) % rows_per_scale;
                          igemm::Requantize(acc + r * ld, cols, 0, multipliers.data() + sr * columns + j0 * step, step,
                                            y_zero, is_signed, out + (t * m + i0 + r) * n + j0);
                        }
                      });
  }

 private:
  static constexpr MatMulInputs kInputs{0, 2, 3, 5};
  gemm::GemmTuning tuning_;
  PrepackedMatMulB prepacked_;
};

OL_REGISTER_KERNELS(matmul_integer_ops) {
  using EightBit = TypeList<int8_t, uint8_t>;
  Kernel("MatMulInteger")
      .Opsets({Since(10, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<MatMulIntegerKernel>())
      .AddTo(registry);
  Kernel("QLinearMatMul")
      .Opsets({Since(10, EightBit{}), Since(21, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<QLinearMatMulKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
