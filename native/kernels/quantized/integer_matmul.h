// What the integer matmul kernels share (MatMulInteger, QLinearMatMul, com.microsoft
// MatMulIntegerToFloat and DynamicQuantizeMatMul): B packed at creation when constant, and
// the numpy.matmul batch loop over the integer GEMM engine (igemm/igemm.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "native/kernels/gemm/gemm.h"
#include "native/kernels/gemm/matmul_plan.h"
#include "native/kernels/quantized/igemm/igemm.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace quantized {

inline Status CheckEightBit(const std::string& where, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt8 || t.dtype() == DataType::kUint8) return Status::Ok();
  return InvalidArgument(where, ": ", what, " must be int8 or uint8, got ", t.TypeAndShape());
}

// A parameter of A quantized per tensor: absent, a scalar or a tensor of one element.
inline Status CheckPerTensor(const std::string& where, const Tensor* t, const char* what) {
  if (t == nullptr || t->num_elements() == 1) return Status::Ok();
  return InvalidArgument(where, ": ", what,
                         " must be a scalar or hold one element (per-tensor quantization of A), got ",
                         t->TypeAndShape());
}

// The operands of one matmul node: input indices of A, B and their zero points.
struct MatMulInputs {
  int a, a_zp, b, b_zp;
};

// How a node quantizes A: MatMulInteger and QLinearMatMul take a zero point per tensor or
// per row of A (of any zero-point type ReadZeroPoint reads); com.microsoft
// MatMulIntegerToFloat one per tensor only, of A's own type (ONNX Runtime accepts no other).
enum class AZeroPoint { kPerRow, kPerTensor };

// The checked operands of an integer matmul node.
struct IntegerMatMulOperands {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  gemm::MatMulPlan plan;      // batches sharing B folded into rows
  int64_t rows_per_zp = 0;    // rows of A per unfolded batch: the period of a per-row zero point
  PerAxis<int32_t> azp, bzp;  // per tensor, per row of A, or per column of B
};

// Reads and checks A, B and their zero points (the inputs `in` names; a_zp < 0: none), the
// checks every integer matmul makes: A and B int8/uint8, numpy.matmul shapes, zero-point
// counts and types. Errors are InvalidArgument naming the op and node (ctx.Where()), the
// input (a_name/b_name and "a_zero_point"/"b_zero_point") and its type and shape.
StatusOr<IntegerMatMulOperands> ReadIntegerMatMulOperands(KernelContext& ctx, const MatMulInputs& in,
                                                          AZeroPoint a_zp_kind, const char* a_name = "A",
                                                          const char* b_name = "B");

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
    auto zps = ReadZeroPoint(zp, n, info.node_name(), "b_zero_point");
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
// t's int32 product to into + t * m * n directly. A's bytes are a_data (laid out as the
// plan's A: batch t's matrix at a_data + plan.a_offsets[t]), int8 if a_signed.
template <typename Sink>
Status RunBatches(KernelContext& ctx, const gemm::GemmTuning& tuning, const gemm::MatMulPlan& plan, int64_t rows_per_zp,
                  const void* a_data, bool a_signed, const PerAxis<int32_t>& azp, const Tensor& b,
                  const PerAxis<int32_t>& bzp, const igemm::IgemmPackedB* prepacked, Sink sink,
                  int32_t* into = nullptr) {
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
    const igemm::IgemmA ia{
        igemm::IgemmMatrix{static_cast<const uint8_t*>(a_data) + plan.a_offsets[t], a_signed, plan.k, 1},
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

}  // namespace quantized
}  // namespace onnx_light
