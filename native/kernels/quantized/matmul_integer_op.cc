// MatMulInteger (int32 output) and QLinearMatMul (requantized 8-bit output): int32
// accumulation of zero-point-shifted 8-bit operands, numpy.matmul batching. Zero points
// and scales are per tensor, per row of A or per column of B.
#include <algorithm>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/gemm/matmul_plan.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using quantized::PerAxis;

// Calls sink(participant, batch, row, acc) with acc[j] = sum_k (A[i,k] - azp(i)) (B[k,j] - bzp(j))
// for every output row, rows spread over participants. B is shifted into int32 once.
template <typename Sink>
Status ForEachAccumulatedRow(KernelContext& ctx, const gemm::GemmTuning& tuning, const gemm::MatMulPlan& plan,
                             const Tensor& a, const PerAxis<int32_t>& azp, const Tensor& b, const PerAxis<int32_t>& bzp,
                             Sink sink) {
  const int64_t m = plan.m, n = plan.n, k = plan.k;
  const int64_t b_count = b.num_elements();
  ScratchArena arena(ctx.allocator(), sizeof(uint32_t) * b_count + 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(uint32_t * shifted_b, arena.AllocateArray<uint32_t>(b_count));
  for (int64_t e = 0; e < b_count; ++e) shifted_b[e] = static_cast<uint32_t>(quantized::Int8At(b, e) - bzp.at(e % n));
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const int64_t batches = static_cast<int64_t>(plan.a_offsets.size());
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t = r / m, i = r % m;
      uint32_t* acc = reinterpret_cast<uint32_t*>(sink.Row(participant, t, i));
      std::fill(acc, acc + n, 0u);
      const uint32_t* bt = shifted_b + plan.b_offsets[t];
      const int64_t a_row = plan.a_offsets[t] + i * k;
      for (int64_t kk = 0; kk < k; ++kk) {
        const uint32_t av = static_cast<uint32_t>(quantized::Int8At(a, a_row + kk) - azp.at(i));
        if (av == 0) continue;
        const uint32_t* brow = bt + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
      }
      sink.Finish(participant, t, i);
    }
    return Status::Ok();
  };
  const int64_t rows = batches * m;
  if (gemm::GemmWorkUnits(rows, n, k) < tuning.parallel_minimum_tasks) return run(0, 0, rows);
  const int64_t grain = std::max<int64_t>(1, gemm::kMacsPerWorkUnit / std::max<int64_t>(1, n * k));
  return ParallelForWithParticipant(ctx.parallel(), rows,
                                    ParallelPlan{"matmul_integer.rows", grain, sink.participants()}, run);
}

Status CheckEightBit(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt8 || t.dtype() == DataType::kUint8) return Status::Ok();
  return InvalidArgument(ctx.Where(), ": ", what, " must be int8 or uint8, got ", t.TypeAndShape());
}

class MatMulIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *a, "A"));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *b, "B"));
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan, gemm::PlanMatMul(ctx.Where(), a->shape(), b->shape(), false));
    OL_ASSIGN_OR_RETURN(const auto azp, quantized::ReadZeroPoint(ctx.input(2), plan.m, ctx.Where(), "a_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto bzp, quantized::ReadZeroPoint(ctx.input(3), plan.n, ctx.Where(), "b_zero_point"));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    // Rows accumulate straight into the output.
    struct Sink {
      int32_t* y;
      int64_t m, n;
      int participants() const { return 0; }
      int32_t* Row(int, int64_t t, int64_t i) const { return y + (t * m + i) * n; }
      void Finish(int, int64_t, int64_t) const {}
    } sink{y->data<int32_t>(), plan.m, plan.n};
    return ForEachAccumulatedRow(ctx, tuning_, plan, *a, azp, *b, bzp, sink);
  }

 private:
  gemm::GemmTuning tuning_;
};

class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *a, "a"));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *b, "b"));
    const Tensor* y_zp_tensor = ctx.input(7);
    const DataType out_type = y_zp_tensor != nullptr ? y_zp_tensor->dtype() : a->dtype();
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      return InvalidArgument(ctx.Where(), ": y_zero_point must be int8 or uint8, got ", y_zp_tensor->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan, gemm::PlanMatMul(ctx.Where(), a->shape(), b->shape(), false));
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const auto a_scale, quantized::ReadScale(ctx.input(1), plan.m, where, "a_scale"));
    OL_ASSIGN_OR_RETURN(const auto azp, quantized::ReadZeroPoint(ctx.input(2), plan.m, where, "a_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto b_scale, quantized::ReadScale(ctx.input(4), plan.n, where, "b_scale"));
    OL_ASSIGN_OR_RETURN(const auto bzp, quantized::ReadZeroPoint(ctx.input(5), plan.n, where, "b_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto y_scale, quantized::ReadScale(ctx.input(6), 1, where, "y_scale"));
    OL_ASSIGN_OR_RETURN(const auto yzp, quantized::ReadZeroPoint(y_zp_tensor, 1, where, "y_zero_point"));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    // One int32 accumulator row per participant, requantized when complete.
    const ParallelPlan probe{"matmul_integer.rows", 1};
    const int participants = AvailableParticipants(ctx.parallel(), probe);
    ScratchArena arena(ctx.allocator(), (sizeof(int32_t) * plan.n + 64) * participants);
    OL_RETURN_IF_ERROR(arena.status());
    std::vector<int32_t*> rows(participants);
    for (auto& r : rows) {
      OL_ASSIGN_OR_RETURN(r, arena.AllocateArray<int32_t>(plan.n));
    }
    struct Sink {
      const std::vector<int32_t*>& rows;
      const PerAxis<float>&a_scale, &b_scale;
      float y_scale;
      int32_t y_zp;
      Tensor* y;
      int64_t m, n;
      int participants() const { return static_cast<int>(rows.size()); }
      int32_t* Row(int p, int64_t, int64_t) const { return rows[p]; }
      void Finish(int p, int64_t t, int64_t i) const {
        const int64_t base = (t * m + i) * n;
        for (int64_t j = 0; j < n; ++j) {
          const float multiplier = a_scale.at(i) * b_scale.at(j) / y_scale;
          if (y->dtype() == DataType::kInt8) {
            y->data<int8_t>()[base + j] = quantized::Requantize<int8_t>(rows[p][j], multiplier, y_zp);
          } else {
            y->data<uint8_t>()[base + j] = quantized::Requantize<uint8_t>(rows[p][j], multiplier, y_zp);
          }
        }
      }
    } sink{rows, a_scale, b_scale, y_scale.at(0), yzp.at(0), y, plan.m, plan.n};
    OL_RETURN_IF_ERROR(ForEachAccumulatedRow(ctx, tuning_, plan, *a, azp, *b, bzp, sink));
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
    return Status::Ok();
  }

 private:
  gemm::GemmTuning tuning_;
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
