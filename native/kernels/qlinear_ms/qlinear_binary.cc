// QLinearAdd and QLinearMul (com.microsoft, 1): numpy-broadcast binary ops on uint8 or int8
// with per-tensor scales and zero points: C = Quantize(Dequantize(A) op Dequantize(B)).
//
// The element loops are qlinear_binary_spans.h's (AVX-512, AVX2, SSE2 or scalar, chosen once
// by the ISA cap; the same bytes from every one), with input steps 1, or 0 for a broadcast
// scalar: same-shape inputs run one span over the whole block; other shapes go through the
// broadcast helper's runs, whose inner steps are 0 or 1 (row, column and scalar broadcasts).
#include <string>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/elementwise/broadcast.h"
#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"
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
    const QLinearBinaryParams params{
        pa.scale, pb.scale, pc.scale, pa.zero_point, pb.zero_point, pc.zero_point, kKind == BinaryKind::kMul};
    return DispatchType(EightBit{}, type, where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const QLinearBinarySpanFn<Q> span = SpanFor<Q>(BestQLinearBinarySpans());
      const Q* av = a->data<Q>();
      const Q* bv = b->data<Q>();
      Q* cv = c->data<Q>();
      if (a->shape() == b->shape()) {
        return parallel_.Run(
            ctx.parallel(), "qlinear_binary.elements", plan.output_size, 1,
            [&](int64_t begin, int64_t end) { span(av + begin, 1, bv + begin, 1, cv + begin, end - begin, params); });
      }
      return parallel_.Run(ctx.parallel(), "qlinear_binary.elements", plan.output_size, 1,
                           [&](int64_t begin, int64_t end) {
                             elementwise::ForEachRun(
                                 plan, begin, end, [&](int64_t out, const int64_t* in, const int64_t* step, int64_t n) {
                                   span(av + in[0], step[0] != 0, bv + in[1], step[1] != 0, cv + out, n, params);
                                 });
                           });
    });
  }

 private:
  template <typename Q>
  static QLinearBinarySpanFn<Q> SpanFor(const QLinearBinarySpans& spans) {
    if constexpr (std::is_same_v<Q, uint8_t>) {
      return spans.u8;
    } else {
      return spans.s8;
    }
  }

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
