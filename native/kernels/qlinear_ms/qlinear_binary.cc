// QLinearAdd and QLinearMul (com.microsoft, 1): numpy-broadcast binary ops on uint8 or int8
// with per-tensor scales and zero points: C = Quantize(Dequantize(A) op Dequantize(B)).
//
// The element loop is one tight loop (Span) with compile-time input steps (1, or 0 for a
// broadcast scalar), 16 elements per SSE2 step on x86-64 (byte_lanes.h): same-shape
// inputs run it over the whole block directly; other shapes go through the broadcast
// helper's runs, whose inner steps are 0 or 1 (row, column and scalar broadcasts).
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/elementwise/broadcast.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"
#include "native/kernels/quantization/byte_lanes.h"

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
      const Operands ops{pa, pb, pc};
      if (a->shape() == b->shape()) {
        return parallel_.Run(
            ctx.parallel(), "qlinear_binary.elements", plan.output_size, 1,
            [&](int64_t begin, int64_t end) { Span<Q, 1, 1>(av + begin, bv + begin, cv + begin, end - begin, ops); });
      }
      return parallel_.Run(ctx.parallel(), "qlinear_binary.elements", plan.output_size, 1,
                           [&](int64_t begin, int64_t end) {
                             elementwise::ForEachRun(
                                 plan, begin, end, [&](int64_t out, const int64_t* in, const int64_t* step, int64_t n) {
                                   const Q* x = av + in[0];
                                   const Q* y = bv + in[1];
                                   if (step[0] != 0 && step[1] != 0) {
                                     Span<Q, 1, 1>(x, y, cv + out, n, ops);
                                   } else if (step[0] != 0) {
                                     Span<Q, 1, 0>(x, y, cv + out, n, ops);
                                   } else if (step[1] != 0) {
                                     Span<Q, 0, 1>(x, y, cv + out, n, ops);
                                   } else {
                                     Span<Q, 0, 0>(x, y, cv + out, n, ops);
                                   }
                                 });
                           });
    });
  }

 private:
  static float Apply(float x, float y) { return kKind == BinaryKind::kAdd ? x + y : x * y; }

  struct Operands {
    QParams a, b, c;
  };

#if defined(__x86_64__)
  static __m128 Apply(__m128 x, __m128 y) { return kKind == BinaryKind::kAdd ? _mm_add_ps(x, y) : _mm_mul_ps(x, y); }
#endif

  // c[e] = Quantize(Apply(Dequantize(a[e * kAStep]), Dequantize(b[e * kBStep]))), e < n:
  // 16 elements per step on x86-64 (the same float operations on SSE2 lanes; QuantizeLanes'
  // clamp, round half to even and saturation as in byte_lanes.h), the scalar loop for the
  // tail and elsewhere.
  template <typename Q, int kAStep, int kBStep>
  static void Span(const Q* a, const Q* b, Q* c, int64_t n, const Operands& ops) {
    const float sa = ops.a.scale, sb = ops.b.scale, sc = ops.c.scale;
    const int32_t za = ops.a.zero_point, zb = ops.b.zero_point;
    const float zc = static_cast<float>(ops.c.zero_point);
    int64_t e = 0;
#if defined(__x86_64__)
    if constexpr (kAStep != 0 || kBStep != 0) {
      namespace lanes = quantization::lanes;
      const __m128 vsa = _mm_set1_ps(sa), vsb = _mm_set1_ps(sb), vsc = _mm_set1_ps(sc);
      const __m128i vza = _mm_set1_epi32(za), vzb = _mm_set1_epi32(zb), vzc = _mm_set1_epi32(ops.c.zero_point);
      // A broadcast operand's one value, dequantized once.
      const __m128 xa =
          kAStep == 0 ? _mm_set1_ps(sa * static_cast<float>(static_cast<int32_t>(a[0]) - za)) : _mm_setzero_ps();
      const __m128 xb =
          kBStep == 0 ? _mm_set1_ps(sb * static_cast<float>(static_cast<int32_t>(b[0]) - zb)) : _mm_setzero_ps();
      for (; e + 16 <= n; e += 16) {
        __m128i wa[4], wb[4], out[4];
        if constexpr (kAStep != 0) lanes::Widen16(a + e, wa);
        if constexpr (kBStep != 0) lanes::Widen16(b + e, wb);
        for (int v = 0; v < 4; ++v) {
          const __m128 x = kAStep != 0 ? _mm_mul_ps(vsa, _mm_cvtepi32_ps(_mm_sub_epi32(wa[v], vza))) : xa;
          const __m128 y = kBStep != 0 ? _mm_mul_ps(vsb, _mm_cvtepi32_ps(_mm_sub_epi32(wb[v], vzb))) : xb;
          out[v] = _mm_add_epi32(lanes::RoundClamped(_mm_div_ps(Apply(x, y), vsc)), vzc);
        }
        lanes::Narrow16(out, c + e);
      }
    }
#endif
    for (; e < n; ++e) {
      const float x = sa * static_cast<float>(static_cast<int32_t>(a[e * kAStep]) - za);
      const float y = sb * static_cast<float>(static_cast<int32_t>(b[e * kBStep]) - zb);
      c[e] = QuantizeLanes<Q>(Apply(x, y), sc, zc);
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
