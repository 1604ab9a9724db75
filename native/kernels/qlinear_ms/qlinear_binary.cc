// QLinearAdd and QLinearMul (com.microsoft, 1): numpy-broadcast binary ops on uint8 or int8
// with per-tensor scales and zero points: C = Quantize(Dequantize(A) op Dequantize(B)).
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/elementwise/broadcast.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

enum class BinaryKind { kAdd, kMul };

template <BinaryKind kKind>
class QLinearBinaryKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return parallel_.Init(info); }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(*a, where, "A"));
    if (b->dtype() != a->dtype()) {
      return InvalidArgument(where, ": B ", b->TypeAndShape(), " must have A's type ", a->TypeAndShape());
    }
    const DataType type = a->dtype();
    OL_ASSIGN_OR_RETURN(const QParams pa,
                        ReadQParams(ctx.input(1), ctx.input(2), type, where, "A_scale", "A_zero_point"));
    OL_ASSIGN_OR_RETURN(const QParams pb,
                        ReadQParams(ctx.input(4), ctx.input(5), type, where, "B_scale", "B_zero_point"));
    OL_ASSIGN_OR_RETURN(const QParams pc,
                        ReadQParams(ctx.input(6), ctx.input(7), type, where, "C_scale", "C_zero_point"));
    OL_ASSIGN_OR_RETURN(const elementwise::BroadcastPlan plan,
                        elementwise::PlanBroadcast({a->shape(), b->shape()}, where));
    OL_ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateOutput(0, type, plan.output_shape));
    return DispatchType(EightBit{}, type, where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const Q* av = a->data<Q>();
      const Q* bv = b->data<Q>();
      Q* cv = c->data<Q>();
      return parallel_.Run(ctx.parallel(), "qlinear_binary.elements", plan.output_size, 1,
                           [&](int64_t begin, int64_t end) {
                             elementwise::ForEachRun(
                                 plan, begin, end, [&](int64_t out, const int64_t* in, const int64_t* step, int64_t n) {
                                   for (int64_t e = 0; e < n; ++e) {
                                     const float x = Dequantize(av[in[0] + e * step[0]], pa);
                                     const float y = Dequantize(bv[in[1] + e * step[1]], pb);
                                     cv[out + e] = Quantize<Q>(Apply(x, y), pc);
                                   }
                                 });
                           });
    });
  }

 private:
  static float Apply(float x, float y) { return kKind == BinaryKind::kAdd ? x + y : x * y; }

  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(qlinear_binary_ops) {
  Kernel("QLinearAdd")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(ElementTuning())
      .Factory(MakeKernel<QLinearBinaryKernel<BinaryKind::kAdd>>())
      .AddTo(registry);
  Kernel("QLinearMul")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(ElementTuning())
      .Factory(MakeKernel<QLinearBinaryKernel<BinaryKind::kMul>>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
