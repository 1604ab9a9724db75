// ONNX MatMul: numpy.matmul semantics (1-D operands, broadcast batch dimensions).
#include <algorithm>
#include <vector>

#include "native/kernels/gemm/typed_gemm.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// The batched product C[b] = A[a_offset(b)] x B[b_offset(b)] of two operands.
struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  Shape output;
  std::vector<int64_t> a_offsets, b_offsets;  // element offsets of each output batch's matrices
};

StatusOr<MatMulPlan> PlanMatMul(const KernelContext& ctx, const Shape& a, const Shape& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return InvalidArgument(ctx.Where(), ": operands must have rank >= 1, got ", a, " and ", b);
  }
  MatMulPlan p;
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  const bool a_vector = ad.size() == 1, b_vector = bd.size() == 1;
  if (a_vector) ad.insert(ad.begin(), 1);
  if (b_vector) bd.push_back(1);
  p.m = ad[ad.size() - 2];
  p.k = ad.back();
  p.n = bd.back();
  if (bd[bd.size() - 2] != p.k) {
    return InvalidArgument(ctx.Where(), ": inner dimensions differ: ", a, " x ", b);
  }
  const size_t batch_rank = std::max(ad.size(), bd.size()) - 2;
  std::vector<int64_t> out_batch(batch_rank), a_batch(batch_rank, 1), b_batch(batch_rank, 1);
  std::copy(ad.begin(), ad.end() - 2, a_batch.end() - (ad.size() - 2));
  std::copy(bd.begin(), bd.end() - 2, b_batch.end() - (bd.size() - 2));
  for (size_t i = 0; i < batch_rank; ++i) {
    if (a_batch[i] != b_batch[i] && a_batch[i] != 1 && b_batch[i] != 1) {
      return InvalidArgument(ctx.Where(), ": batch dimensions do not broadcast: ", a, " x ", b);
    }
    out_batch[i] = a_batch[i] == 1 ? b_batch[i] : a_batch[i];
  }
  std::vector<int64_t> out_dims = out_batch;
  if (!a_vector) out_dims.push_back(p.m);
  if (!b_vector) out_dims.push_back(p.n);
  OL_ASSIGN_OR_RETURN(p.output, Shape::Create(out_dims));
  // Batch offsets: odometer over the output batch, operands' broadcast dims stride 0.
  const int64_t batches = Shape(out_batch).num_elements();
  p.a_offsets.resize(batches);
  p.b_offsets.resize(batches);
  std::vector<int64_t> index(batch_rank, 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t ao = 0, bo = 0, a_stride = p.m * p.k, b_stride = p.k * p.n;
    for (size_t d = batch_rank; d-- > 0;) {
      if (a_batch[d] != 1) ao += index[d] * a_stride;
      if (b_batch[d] != 1) bo += index[d] * b_stride;
      a_stride *= a_batch[d];
      b_stride *= b_batch[d];
    }
    p.a_offsets[t] = ao;
    p.b_offsets[t] = bo;
    for (size_t d = batch_rank; d-- > 0;) {
      if (++index[d] < out_batch[d]) break;
      index[d] = 0;
    }
  }
  // B shared by every batch and A's batches consecutive: one (batches * m) x k product.
  bool a_consecutive = true;
  for (int64_t t = 0; t < batches; ++t) a_consecutive = a_consecutive && p.a_offsets[t] == t * p.m * p.k;
  bool b_shared = true;
  for (int64_t t = 0; t < batches; ++t) b_shared = b_shared && p.b_offsets[t] == 0;
  if (batches > 1 && a_consecutive && b_shared) {
    p.m *= batches;
    p.a_offsets = {0};
    p.b_offsets = {0};
  }
  return p;
}

class MatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    if (a->dtype() != b->dtype()) {
      return InvalidArgument(ctx.Where(), ": element types differ: ", a->TypeAndShape(), " x ", b->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const MatMulPlan plan, PlanMatMul(ctx, a->shape(), b->shape()));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), plan.output));
    if (y->num_elements() == 0) return Status::Ok();
    const int64_t batches = static_cast<int64_t>(plan.a_offsets.size());
    const size_t es = ElementSize(a->dtype());
    const char* a_data = static_cast<const char*>(a->raw_data());
    const char* b_data = static_cast<const char*>(b->raw_data());
    char* y_data = static_cast<char*>(y->raw_data());
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
  // Many products each below the parallel threshold: one serial GEMM per batch, batches
  // spread over participants, each with its own packing scratch.
  Status SmallBatches(KernelContext& ctx, const MatMulPlan& plan, const float* a, const float* b, float* y) {
    const int64_t batches = static_cast<int64_t>(plan.a_offsets.size());
    const int64_t units = gemm::GemmWorkUnits(plan.m, plan.n, plan.k) * batches;
    const int64_t batch_units = std::max<int64_t>(1, gemm::GemmWorkUnits(plan.m, plan.n, plan.k));
    const ParallelPlan region{"matmul.batches", std::max<int64_t>(1, tuning_.parallel_minimum_tasks / batch_units)};
    const int participants = units < tuning_.parallel_minimum_tasks ? 1 : AvailableParticipants(ctx.parallel(), region);
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
};

OL_REGISTER_KERNELS(matmul_op) {
  using T = DataType;
  const std::vector<T> floats = {T::kFloat, T::kDouble, T::kFloat16};
  const std::vector<T> with_ints = {T::kFloat, T::kDouble, T::kFloat16, T::kInt32, T::kInt64, T::kUint32, T::kUint64};
  std::vector<T> with_bf16 = with_ints;
  with_bf16.push_back(T::kBFloat16);
  const struct {
    int since, end;
    const std::vector<T>& types;
  } ranges[] = {{1, 8, floats}, {9, 12, with_ints}, {13, kOpenEnded, with_bf16}};
  for (const auto& r : ranges) {
    registry.Add(KernelDef{"", "MatMul", r.since, r.end, "gemm", r.types, 0, gemm::GemmTuningParams(), false,
                           MakeKernel<MatMulKernel>()});
  }
}

}  // namespace
}  // namespace onnx_light
