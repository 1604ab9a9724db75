// MatMulInteger (int32 output) and QLinearMatMul (requantized 8-bit output) on the integer
// GEMM engine (igemm/igemm.h): numpy.matmul batching, zero points per tensor, per row of A
// or per column of B, scales likewise. A constant 2-D B (with a constant or absent zero
// point) is packed once at creation.
#include <algorithm>
#include <memory>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/gemm/matmul_plan.h"
#include "native/kernels/quantized/igemm/igemm.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using quantized::PerAxis;

Status CheckEightBit(const std::string& where, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt8 || t.dtype() == DataType::kUint8) return Status::Ok();
  return InvalidArgument(where, ": ", what, " must be int8 or uint8, got ", t.TypeAndShape());
}

// The operands of one matmul node: input indices of A, B and their zero points.
struct MatMulInputs {
  int a, a_zp, b, b_zp;
};

// B packed at creation when it is a constant 2-D 8-bit initializer, with its zero point if
// that is constant (else none); used only when the run's B and zero point are those very
// tensors (a dynamic zero point never matches). When the zero point is constant or absent,
// the packed form is all a run needs: B is absorbed (registry/kernel.h) and matched by
// shape, its data being released.
class PrepackedMatMulB {
 public:
  Status Init(const KernelInfo& info, const MatMulInputs& in) {
    const Tensor* b = info.constant_input(in.b);
    const Tensor* zp = info.constant_input(in.b_zp);
    if (b == nullptr || b->shape().rank() != 2 || (b->dtype() != DataType::kInt8 && b->dtype() != DataType::kUint8)) {
      return Status::Ok();
    }
    const int64_t k = b->shape()[0], n = b->shape()[1];
    auto zps = quantized::ReadZeroPoint(zp, n, info.node_name(), "b_zero_point");
    if (!zps.ok()) return Status::Ok();  // reported at run time
    OL_ASSIGN_OR_RETURN(packed_, igemm::IgemmPackedB::Create(
                                     k, n, igemm::IgemmMatrix{b->raw_data(), b->dtype() == DataType::kInt8, n, 1},
                                     zps->values.data(), static_cast<int64_t>(zps->values.size())));
    if (zp != nullptr) zp_ = *zp;
    zp_data_ = zp != nullptr ? zp_.raw_data() : nullptr;
    b_shape_ = b->shape();
    if (zp != nullptr || in.b_zp >= info.num_inputs()) {
      absorbed_ = true;
      return info.AbsorbConstantInput(in.b, packed_->held_bytes());
    }
    b_ = *b;
    b_data_ = b_.raw_data();
    return Status::Ok();
  }
  const igemm::IgemmPackedB* Match(const Tensor& b, const Tensor* zp) const {
    if (packed_ == nullptr || (zp != nullptr ? zp->raw_data() : nullptr) != zp_data_) return nullptr;
    if (absorbed_ ? b.shape() != b_shape_ : b.raw_data() != b_data_) return nullptr;
    return packed_.get();
  }

 private:
  std::shared_ptr<const igemm::IgemmPackedB> packed_;
  bool absorbed_ = false;
  Shape b_shape_;
  Tensor b_, zp_;  // keep the constant buffers alive (and their addresses unique); b_ unless absorbed
  const void* b_data_ = nullptr;
  const void* zp_data_ = nullptr;
};

// Runs every batch of the (folded) plan through the engine, handing sink(t, block) the
// blocks of batch t (row indices within the folded batch), or, with `into`, writing batch
// t's int32 product to into + t * m * n directly.
template <typename Sink>
Status RunBatches(KernelContext& ctx, const gemm::GemmTuning& tuning, const gemm::MatMulPlan& plan, int64_t rows_per_zp,
                  const Tensor& a, const PerAxis<int32_t>& azp, const Tensor& b, const PerAxis<int32_t>& bzp,
                  const igemm::IgemmPackedB* prepacked, Sink sink, int32_t* into = nullptr) {
  std::shared_ptr<const igemm::IgemmPackedB> packed;
  int64_t packed_offset = -1;
  int64_t scratch = 0;
  for (size_t t = 0; t < plan.a_offsets.size(); ++t) {
    const igemm::IgemmPackedB* pb = plan.b_offsets[t] == 0 ? prepacked : nullptr;
    if (pb == nullptr) {
      if (packed_offset != plan.b_offsets[t]) {
        const auto* base = static_cast<const uint8_t*>(b.raw_data()) + plan.b_offsets[t];
        OL_ASSIGN_OR_RETURN(
            packed, igemm::IgemmPackedB::Create(plan.k, plan.n,
                                                igemm::IgemmMatrix{base, b.dtype() == DataType::kInt8, plan.n, 1},
                                                bzp.values.data(), static_cast<int64_t>(bzp.values.size())));
        packed_offset = plan.b_offsets[t];
      }
      pb = packed.get();
    }
    const igemm::IgemmA ia{igemm::IgemmMatrix{static_cast<const uint8_t*>(a.raw_data()) + plan.a_offsets[t],
                                              a.dtype() == DataType::kInt8, plan.k, 1},
                           azp.values.data(), azp.values.size() == 1 ? 1 : rows_per_zp};
    if (into != nullptr) {
      OL_RETURN_IF_ERROR(igemm::IgemmComputeInto(ctx.parallel(), ctx.allocator(), tuning.parallel_minimum_tasks, plan.m,
                                                 ia, *pb, into + static_cast<int64_t>(t) * plan.m * plan.n, plan.n,
                                                 &scratch));
      continue;
    }
    OL_RETURN_IF_ERROR(igemm::IgemmCompute(
        ctx.parallel(), ctx.allocator(), tuning.parallel_minimum_tasks, plan.m, ia, *pb,
        [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
          sink(static_cast<int64_t>(t), i0, rows, j0, cols, acc, ld);
        },
        &scratch));
  }
  ctx.RecordScratch(scratch);
  return Status::Ok();
}

class MatMulIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, MatMulInputs{0, 2, 1, 3});
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *a, "A"));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *b, "B"));
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan shape, gemm::PlanMatMul(where, a->shape(), b->shape(), false));
    OL_ASSIGN_OR_RETURN(const auto azp, quantized::ReadZeroPoint(ctx.input(2), shape.m, where, "a_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto bzp, quantized::ReadZeroPoint(ctx.input(3), shape.n, where, "b_zero_point"));
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan, gemm::PlanMatMul(where, a->shape(), b->shape(), true));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    // The engine writes the int32 product straight into Y.
    return RunBatches(
        ctx, tuning_, plan, shape.m, *a, azp, *b, bzp, prepacked_.Match(*b, ctx.input(3)),
        [](int64_t, int64_t, int, int64_t, int, const int32_t*, int64_t) {}, y->data<int32_t>());
  }

 private:
  gemm::GemmTuning tuning_;
  PrepackedMatMulB prepacked_;
};

class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, MatMulInputs{0, 2, 3, 5});
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *a, "a"));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *b, "b"));
    const Tensor* y_zp_tensor = ctx.input(7);
    const DataType out_type = y_zp_tensor != nullptr ? y_zp_tensor->dtype() : a->dtype();
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      return InvalidArgument(where, ": y_zero_point must be int8 or uint8, got ", y_zp_tensor->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan shape, gemm::PlanMatMul(where, a->shape(), b->shape(), false));
    OL_ASSIGN_OR_RETURN(const auto a_scale, quantized::ReadScale(ctx.input(1), shape.m, where, "a_scale"));
    OL_ASSIGN_OR_RETURN(const auto azp, quantized::ReadZeroPoint(ctx.input(2), shape.m, where, "a_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto b_scale, quantized::ReadScale(ctx.input(4), shape.n, where, "b_scale"));
    OL_ASSIGN_OR_RETURN(const auto bzp, quantized::ReadZeroPoint(ctx.input(5), shape.n, where, "b_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto y_scale, quantized::ReadScale(ctx.input(6), 1, where, "y_scale"));
    OL_ASSIGN_OR_RETURN(const auto yzp, quantized::ReadZeroPoint(y_zp_tensor, 1, where, "y_zero_point"));
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan, gemm::PlanMatMul(where, a->shape(), b->shape(), true));
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
    const int64_t m = plan.m, n = plan.n, rows_per_scale = shape.m;
    const int32_t y_zero = yzp.at(0);
    return RunBatches(ctx, tuning_, plan, shape.m, *a, azp, *b, bzp, prepacked_.Match(*b, ctx.input(5)),
                      [&](int64_t t, int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                        for (int r = 0; r < rows; ++r) {
                          const int64_t sr = scale_rows == 1 ? 0 : (i0 + r) % rows_per_scale;
                          igemm::Requantize(acc + r * ld, cols, 0, multipliers.data() + sr * columns + j0 * step, step,
                                            y_zero, is_signed, out + (t * m + i0 + r) * n + j0);
                        }
                      });
  }

 private:
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
