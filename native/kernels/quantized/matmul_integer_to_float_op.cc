// com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul (ONNX Runtime's contrib ops,
// version 1): the integer matmul of ONNX Runtime's dynamic quantization with its float
// epilogue, so that the int32 product is never materialised.
//
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?)
//     Y = (A - a_zero_point)(B - b_zero_point) * (a_scale * b_scale) (+ bias)
//   DynamicQuantizeMatMul(A float, B, b_scale, b_zero_point?, bias?)
//     A quantized per tensor as DynamicQuantizeLinear does (uint8, range including 0),
//     then MatMulIntegerToFloat with A's scale and zero point.
//
// Y is float, numpy.matmul batching (the integer matmul plan of MatMulInteger). A's scale
// and zero point are per tensor (ONNX Runtime's CPU kernels accept nothing else); B's are
// per tensor or per column (1 or N elements). bias has N elements.
//
// Each output element is float(acc) * (a_scale * b_scale[j]) (+ bias[j]): the scale product
// once in float, then the product and the sum each rounded (igemm::ScaleToFloat) -- exactly
// what the unfused DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (-> Add) chain of
// quantize_dynamic computes, so the fused nodes (python/onnx_light/qdq_rewrites.py) change
// no bit of a model's output. The epilogue runs on each engine block while it is in cache.
//
// A constant 2-D B (and zero point) is packed once at creation and absorbed, as for
// MatMulInteger. DynamicQuantizeMatMul quantizes A into scratch in two passes (range, then
// quantize: dynamic_range.h, SSE2 on x86-64), over fixed chunks of kQuantizeChunk elements in
// parallel when the product itself is large enough to run in parallel (the min/max merge is
// exact, so the bytes never depend on the participant count).
#include <algorithm>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantization/dynamic_range.h"
#include "native/kernels/quantized/integer_matmul.h"

namespace onnx_light {
namespace {

using quantized::AZeroPoint;
using quantized::CheckEightBit;
using quantized::CheckPerTensor;
using quantized::MatMulInputs;
using quantized::PerAxis;
using quantized::PrepackedMatMulB;
using quantized::ReadIntegerMatMulOperands;
using quantized::RunBatches;

// Elements of A per range/quantize block when A is quantized in parallel (64 KiB of floats).
constexpr int64_t kQuantizeChunk = int64_t{1} << 14;

// The per-column float factors a_scale * b_scale[j] (one when b_scale is per tensor), and
// the bias, checked against the product's N.
struct FloatEpilogue {
  std::vector<float> factor;
  const float* bias = nullptr;
  int64_t step() const { return factor.size() > 1 ? 1 : 0; }
};

StatusOr<FloatEpilogue> MakeEpilogue(const std::string& where, float a_scale, const Tensor* b_scale_t,
                                     const Tensor* bias, int64_t n) {
  if (b_scale_t == nullptr) return InvalidArgument(where, ": b_scale is required");
  if (b_scale_t->dtype() != DataType::kFloat || (b_scale_t->num_elements() != 1 && b_scale_t->num_elements() != n)) {
    return InvalidArgument(where, ": b_scale ", b_scale_t->TypeAndShape(), " must be float with 1 or ", n,
                           " elements (per tensor or per column of B)");
  }
  FloatEpilogue e;
  const float* bs = b_scale_t->data<float>();
  e.factor.resize(static_cast<size_t>(b_scale_t->num_elements()));
  for (size_t j = 0; j < e.factor.size(); ++j) e.factor[j] = a_scale * bs[j];  // one float product, as Mul
  if (bias != nullptr) {
    if (bias->dtype() != DataType::kFloat || bias->shape().rank() != 1 || bias->num_elements() != n) {
      return InvalidArgument(where, ": bias ", bias->TypeAndShape(), " must be a 1-D float tensor of ", n,
                             " elements (columns of B)");
    }
    e.bias = bias->data<float>();
  }
  return e;
}

// Runs the product of the plan with the float epilogue into y.
Status RunToFloat(KernelContext& ctx, const gemm::GemmTuning& tuning, const gemm::MatMulPlan& plan, const void* a_data,
                  bool a_signed, int32_t a_zero_point, const Tensor& b, const PerAxis<int32_t>& bzp,
                  const igemm::IgemmPackedB* prepacked, const FloatEpilogue& e, float* y) {
  const PerAxis<int32_t> azp{{a_zero_point}};
  const int64_t m = plan.m, n = plan.n, step = e.step();
  return RunBatches(ctx, tuning, plan, m, a_data, a_signed, azp, b, bzp, prepacked,
                    [&](int64_t t, int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                      for (int r = 0; r < rows; ++r) {
                        igemm::ScaleToFloat(acc + r * ld, cols, e.factor.data() + j0 * step, step,
                                            e.bias != nullptr ? e.bias + j0 : nullptr, y + (t * m + i0 + r) * n + j0);
                      }
                    });
}

class MatMulIntegerToFloatKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, kInputs);
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const auto in, ReadIntegerMatMulOperands(ctx, kInputs, AZeroPoint::kPerTensor));
    OL_ASSIGN_OR_RETURN(const Tensor* a_scale, ctx.RequiredInput(2));
    OL_RETURN_IF_ERROR(CheckPerTensor(where, a_scale, "a_scale"));
    if (a_scale->dtype() != DataType::kFloat) {
      return InvalidArgument(where, ": a_scale must be float, got ", a_scale->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const FloatEpilogue e,
                        MakeEpilogue(where, *a_scale->data<float>(), ctx.input(3), ctx.input(6), in.plan.n));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, in.plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    return RunToFloat(ctx, tuning_, in.plan, in.a->raw_data(), in.a->dtype() == DataType::kInt8, in.azp.at(0), *in.b,
                      in.bzp, prepacked_.Match(*in.b, ctx.input(kInputs.b_zp)), e, y->data<float>());
  }

 private:
  static constexpr MatMulInputs kInputs{0, 4, 1, 5};
  gemm::GemmTuning tuning_;
  PrepackedMatMulB prepacked_;
};

class DynamicQuantizeMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, MatMulInputs{0, -1, 1, 3});
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    if (a->dtype() != DataType::kFloat) return InvalidArgument(where, ": A must be float, got ", a->TypeAndShape());
    OL_RETURN_IF_ERROR(CheckEightBit(where, *b, "B"));
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan, gemm::PlanMatMul(where, a->shape(), b->shape(), true));
    OL_ASSIGN_OR_RETURN(const auto bzp, quantized::ReadZeroPoint(ctx.input(3), plan.n, where, "b_zero_point"));
    if (ctx.input(2) == nullptr) return InvalidArgument(where, ": b_scale is required");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, plan.output));
    if (y->num_elements() == 0) {
      return MakeEpilogue(where, 1.0f, ctx.input(2), ctx.input(4), plan.n).status();
    }
    // A quantized per tensor, as DynamicQuantizeLinear would (dynamic_range.h).
    const int64_t count = a->num_elements();
    const float* x = a->data<float>();
    std::vector<uint8_t> quantized(static_cast<size_t>(count));
    const bool parallel = gemm::GemmWorkUnits(plan.m * static_cast<int64_t>(plan.a_offsets.size()), plan.n, plan.k) >=
                              tuning_.parallel_minimum_tasks &&
                          count > kQuantizeChunk;
    const int64_t chunks = (count + kQuantizeChunk - 1) / kQuantizeChunk;
    quantization::DynamicRange range;
    if (!parallel) {
      range = quantization::DynamicRangeOf(x, 0, count);
    } else {
      std::vector<quantization::DynamicRange> partial(static_cast<size_t>(chunks));
      OL_RETURN_IF_ERROR(ParallelFor(
          ctx.parallel(), chunks, ParallelPlan{"DynamicQuantizeMatMul.range", 1}, [&](int64_t begin, int64_t end) {
            for (int64_t c = begin; c < end; ++c) {
              partial[c] =
                  quantization::DynamicRangeOf(x, c * kQuantizeChunk, std::min(count, (c + 1) * kQuantizeChunk));
            }
            return Status::Ok();
          }));
      for (const auto& p : partial) range = range.Merge(p);
    }
    const quantization::DynamicQuantParams params = quantization::DynamicQuantParamsOf(range);
    if (!parallel) {
      quantization::DynamicQuantizeSpan(x, quantized.data(), 0, count, params.scale, params.zero);
    } else {
      OL_RETURN_IF_ERROR(ParallelFor(
          ctx.parallel(), chunks, ParallelPlan{"DynamicQuantizeMatMul.quantize", 1}, [&](int64_t begin, int64_t end) {
            quantization::DynamicQuantizeSpan(x, quantized.data(), begin * kQuantizeChunk,
                                              std::min(count, end * kQuantizeChunk), params.scale, params.zero);
            return Status::Ok();
          }));
    }
    OL_ASSIGN_OR_RETURN(const FloatEpilogue e, MakeEpilogue(where, params.scale, ctx.input(2), ctx.input(4), plan.n));
    OL_RETURN_IF_ERROR(RunToFloat(ctx, tuning_, plan, quantized.data(), false, static_cast<int32_t>(params.zero), *b,
                                  bzp, prepacked_.Match(*b, ctx.input(3)), e, y->data<float>()));
    ctx.RecordScratch(ctx.peak_scratch() + static_cast<int64_t>(quantized.size()));  // beside the engine's
    return Status::Ok();
  }

 private:
  gemm::GemmTuning tuning_;
  PrepackedMatMulB prepacked_;
};

OL_REGISTER_KERNELS(matmul_integer_to_float_ops) {
  using EightBit = TypeList<int8_t, uint8_t>;
  // Dispatch on A (int8/uint8) and on B (A is float): one path per 8-bit type.
  Kernel("MatMulIntegerToFloat")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<MatMulIntegerToFloatKernel>())
      .AddTo(registry);
  Kernel("DynamicQuantizeMatMul")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .DispatchInput(1)
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<DynamicQuantizeMatMulKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
