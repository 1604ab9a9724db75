#include "native/kernels/quantized/integer_matmul.h"

namespace onnx_light {
namespace quantized {

StatusOr<IntegerMatMulOperands> ReadIntegerMatMulOperands(KernelContext& ctx, const MatMulInputs& in,
                                                          AZeroPoint a_zp_kind, const char* a_name,
                                                          const char* b_name) {
  const std::string where = ctx.Where();
  IntegerMatMulOperands o;
  OL_ASSIGN_OR_RETURN(o.a, ctx.RequiredInput(in.a));
  OL_ASSIGN_OR_RETURN(o.b, ctx.RequiredInput(in.b));
  OL_RETURN_IF_ERROR(CheckEightBit(where, *o.a, a_name));
  OL_RETURN_IF_ERROR(CheckEightBit(where, *o.b, b_name));
  OL_ASSIGN_OR_RETURN(const gemm::MatMulPlan unfolded, gemm::PlanMatMul(where, o.a->shape(), o.b->shape(), false));
  OL_ASSIGN_OR_RETURN(o.plan, gemm::PlanMatMul(where, o.a->shape(), o.b->shape(), true));
  o.rows_per_zp = unfolded.m;
  const Tensor* a_zp = in.a_zp >= 0 ? ctx.input(in.a_zp) : nullptr;
  if (a_zp_kind == AZeroPoint::kPerRow) {
    OL_ASSIGN_OR_RETURN(o.azp, ReadZeroPoint(a_zp, unfolded.m, where, "a_zero_point"));
  } else if (a_zp == nullptr) {
    o.azp.values = {0};
  } else {
    OL_RETURN_IF_ERROR(CheckPerTensor(where, a_zp, "a_zero_point"));
    if (a_zp->dtype() != o.a->dtype()) {
      return InvalidArgument(where, ": a_zero_point ", a_zp->TypeAndShape(), " must have ", a_name, "'s type ",
                             DataTypeName(o.a->dtype()));
    }
    o.azp.values = {Int8At(*a_zp, 0)};
  }
  OL_ASSIGN_OR_RETURN(o.bzp, ReadZeroPoint(ctx.input(in.b_zp), unfolded.n, where, "b_zero_point"));
  return o;
}

}  // namespace quantized
}  // namespace onnx_light
