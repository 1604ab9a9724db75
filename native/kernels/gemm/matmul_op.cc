// ONNX MatMul: numpy.matmul semantics (1-D operands, broadcast batch dimensions).
#include <algorithm>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/matmul_plan.h"
#include "native/kernels/gemm/typed_gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// Batches per block of the matmul.batches region. The threshold grain (blocks of at least
// parallel.minimum_tasks work units) can leave the participants' own runs uneven: 12 heads
// of 4 units in blocks of 4 make 3 blocks, 8 heads on one of 2 participants. Of the grains
// up to it, the one whose partition (ComputePartition, parallel_for.h) gives the shortest
// longest own run, the largest of those: 12 heads over 2 participants in blocks of 3.
// (At most `batches` grains are tried, each a few integer operations per participant:
// little beside the batches' products themselves.)
int64_t BalancedBatchGrain(int64_t batches, int64_t threshold_batches, int participants) {
  if (participants <= 1) return std::max<int64_t>(1, threshold_batches);
  const auto longest_run = [&](int64_t grain) {
    const Partition part = ComputePartition(batches, grain, participants);
    int64_t longest = 0;
    for (int p = 0; p < part.participants; ++p) {
      const int64_t first = part.FirstBlock(p) * part.block_size;
      longest = std::max(longest, std::min(batches, part.LastBlock(p) * part.block_size) - first);
    }
    return longest;
  };
  int64_t best = std::max<int64_t>(1, std::min(threshold_batches, batches));
  int64_t best_run = longest_run(best);
  for (int64_t grain = best - 1; grain >= 1; --grain) {
    const int64_t run = longest_run(grain);
    if (run < best_run) best = grain, best_run = run;
  }
  return best;
}

class MatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    // A constant 2-D float B (a weight matrix) is packed once here, not on every run, and
    // absorbed: only the packed form is read from now on.
    const Tensor* b = info.constant_input(1);
    if (b != nullptr && b->dtype() == DataType::kFloat && b->shape().rank() == 2) {
      // Consumed when the session allows it: B's rows go back to the system as they are
      // packed, so B and its packed form never coexist whole (registry/kernel.h).
      const int64_t ldb = b->shape()[1];
      ConstantConsumer consumer = info.ConsumeConstantInput(1);
      OL_ASSIGN_OR_RETURN(prepacked_b_, gemm::PrepackedB::Create(
                                            Allocator::Default(), false, b->shape()[0], b->shape()[1], b->data<float>(),
                                            ldb, [&consumer, ldb](int64_t rows) {
                                              consumer.ReleaseThrough(static_cast<size_t>(rows * ldb) * sizeof(float));
                                            }));
      OL_RETURN_IF_ERROR(info.AbsorbConstantInput(1, static_cast<int64_t>(prepacked_b_->bytes())));
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    if (a->dtype() != b->dtype()) {
      return InvalidArgument(ctx.Where(), ": element types differ: ", a->TypeAndShape(), " x ", b->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan plan,
                        gemm::PlanMatMul(ctx.Where(), a->shape(), b->shape(), /*fold_shared_b=*/true));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    const int64_t batches = static_cast<int64_t>(plan.a_offsets.size());
    const size_t es = ElementSize(a->dtype());
    const char* a_data = static_cast<const char*>(a->raw_data());
    const char* b_data = static_cast<const char*>(b->raw_data());
    char* y_data = static_cast<char*>(y->raw_data());
    if (prepacked_b_ != nullptr) {  // B absorbed (a float 2-D constant): only the packed form exists
      if (batches != 1 || plan.k != prepacked_b_->k() || plan.n != prepacked_b_->n()) {
        return Internal(ctx.Where(), ": A ", a->TypeAndShape(), " folds to ", batches,
                        " products, not one against the constant B packed at creation ", b->TypeAndShape());
      }
      gemm::GemmStats stats;
      OL_RETURN_IF_ERROR(gemm::SgemmPrepackedB(ctx.parallel(), ctx.allocator(), tuning_, false, plan.m, 1.0f,
                                               a->data<float>() + plan.a_offsets[0], plan.k, *prepacked_b_, 0.0f,
                                               y->data<float>(), plan.n, &stats)
                             .WithContext(ctx.Where() + ": "));
      ctx.RecordScratch(stats.scratch_bytes);
      return Status::Ok();
    }
    if (a->dtype() == DataType::kFloat && batches > 1 &&
        gemm::GemmWorkUnits(plan.m, plan.n, plan.k) < tuning_.parallel_minimum_tasks) {
      return SmallBatches(ctx, plan, a->data<float>(), b->data<float>(), y->data<float>());
    }
    gemm::TypedGemmArgs args;
    args.m = plan.m;
    args.n = plan.n;
    args.k = plan.k;
    args.lda = plan.k;
    args.ldb = plan.n;
    args.ldc = plan.n;
    int64_t peak_scratch = 0;
    for (int64_t t = 0; t < batches; ++t) {
      args.a = a_data + plan.a_offsets[t] * es;
      args.b = b_data + plan.b_offsets[t] * es;
      args.c = y_data + t * plan.m * plan.n * es;
      gemm::GemmStats stats;
      OL_RETURN_IF_ERROR(gemm::TypedGemm(a->dtype(), ctx.parallel(), ctx.allocator(), tuning_, args, &stats)
                             .WithContext(ctx.Where() + ": "));
      peak_scratch = std::max(peak_scratch, stats.scratch_bytes);
    }
    ctx.RecordScratch(peak_scratch);
    return Status::Ok();
  }

 private:
  // Many products each below the parallel threshold (attention's heads): one serial GEMM
  // per batch, batches spread over participants, each with its own packing scratch.
  // Blocks hold up to parallel.minimum_tasks work units, cut so that the longest own run is
  // as short as it gets (BalancedBatchGrain): 12 heads of 4 units over 2 participants in
  // blocks of 3 (6 + 6), not 3 blocks of 4 (8 + 4).
  Status SmallBatches(KernelContext& ctx, const gemm::MatMulPlan& plan, const float* a, const float* b, float* y) {
    const int64_t batches = static_cast<int64_t>(plan.a_offsets.size());
    const int64_t units = gemm::GemmWorkUnits(plan.m, plan.n, plan.k) * batches;
    const int64_t batch_units = std::max<int64_t>(1, gemm::GemmWorkUnits(plan.m, plan.n, plan.k));
    const int participants = units < tuning_.parallel_minimum_tasks
                                 ? 1
                                 : AvailableParticipants(ctx.parallel(), ParallelPlan{"matmul.batches", 1});
    const ParallelPlan region{"matmul.batches",
                              BalancedBatchGrain(batches, tuning_.parallel_minimum_tasks / batch_units, participants)};
    const size_t slice = gemm::SgemmSerialScratchBytes(plan.m, plan.n, plan.k);
    ScratchArena arena(ctx.allocator(), slice * participants);
    OL_RETURN_IF_ERROR(arena.status());
    std::vector<float*> scratch(participants);
    for (auto& s : scratch) {
      OL_ASSIGN_OR_RETURN(s, arena.AllocateArray<float>(slice / sizeof(float)));
    }
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
    const auto run = [&](int participant, int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        gemm::SgemmSerial(false, false, plan.m, plan.n, plan.k, 1.0f, a + plan.a_offsets[t], plan.k,
                          b + plan.b_offsets[t], plan.n, 0.0f, y + t * plan.m * plan.n, plan.n, scratch[participant]);
      }
      return Status::Ok();
    };
    if (participants == 1) return run(0, 0, batches);
    return ParallelForWithParticipant(ctx.parallel(), batches, ParallelPlan{region.label, region.grain, participants},
                                      run);
  }

  gemm::GemmTuning tuning_;
  std::shared_ptr<const gemm::PrepackedB> prepacked_b_;  // the constant B, absorbed
};

OL_REGISTER_KERNELS(matmul_op) {
  using WithInts = decltype(Floats{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});
  using WithBf16 = decltype(WithInts{} + TypeList<BFloat16>{});
  Kernel("MatMul")
      .Opsets({Since(1, Floats{}), Since(9, WithInts{}), Since(13, WithBf16{})})
      .Tuning(gemm::GemmTuningParams())
      .Calibratable()
      .Factory(MakeKernel<MatMulKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
