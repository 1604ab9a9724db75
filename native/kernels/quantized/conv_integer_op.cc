// ConvInteger (int32 output) and QLinearConv (requantized 8-bit output): operands shifted
// by their zero points into 32-bit integers once, then a direct convolution with wrapping
// int32 accumulation, parallel over output planes. w's zero point and scale may be per
// output channel.
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_direct.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using quantized::PerAxis;

struct IntegerConvInputs {
  const Tensor* x;
  PerAxis<int32_t> x_zp;
  const Tensor* w;
  PerAxis<int32_t> w_zp;
  const Tensor* bias;  // int32, may be null
};

// acc = conv(x - x_zp, w - w_zp[m]) + bias in wrapping 32-bit arithmetic (uint32 carries
// the int32 bit patterns).
Status AccumulateConv(KernelContext& ctx, const conv::ConvGeometry& g, const gemm::GemmTuning& tuning,
                      const IntegerConvInputs& in, uint32_t* acc) {
  const int64_t xn = in.x->num_elements(), wn = in.w->num_elements(), per_m = wn / std::max<int64_t>(1, g.out_channels);
  ScratchArena arena(ctx.allocator(), sizeof(uint32_t) * (xn + wn + g.out_channels) + 3 * 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(uint32_t * x, arena.AllocateArray<uint32_t>(xn));
  OL_ASSIGN_OR_RETURN(uint32_t * w, arena.AllocateArray<uint32_t>(wn));
  OL_ASSIGN_OR_RETURN(uint32_t * bias, arena.AllocateArray<uint32_t>(g.out_channels));
  for (int64_t e = 0; e < xn; ++e) x[e] = static_cast<uint32_t>(quantized::Int8At(*in.x, e) - in.x_zp.at(0));
  for (int64_t e = 0; e < wn; ++e) w[e] = static_cast<uint32_t>(quantized::Int8At(*in.w, e) - in.w_zp.at(e / per_m));
  for (int64_t m = 0; m < g.out_channels; ++m) {
    bias[m] = in.bias != nullptr ? static_cast<uint32_t>(in.bias->data<int32_t>()[m]) : 0u;
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  return conv::DirectConv<uint32_t, false>(ctx, g, x, w, bias, acc, tuning);
}

Status CheckEightBit(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt8 || t.dtype() == DataType::kUint8) return Status::Ok();
  return InvalidArgument(ctx.Where(), ": ", what, " must be int8 or uint8, got ", t.TypeAndShape());
}

class ConvIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    IntegerConvInputs in;
    OL_ASSIGN_OR_RETURN(in.x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(in.w, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *in.x, "x"));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *in.w, "w"));
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry g,
                        conv::ResolveConv(attrs_, in.x->shape(), in.w->shape(), ctx.Where()));
    OL_ASSIGN_OR_RETURN(in.x_zp, quantized::ReadZeroPoint(ctx.input(2), 1, ctx.Where(), "x_zero_point"));
    OL_ASSIGN_OR_RETURN(in.w_zp, quantized::ReadZeroPoint(ctx.input(3), g.out_channels, ctx.Where(), "w_zero_point"));
    in.bias = nullptr;
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, g.output_shape()));
    if (y->num_elements() == 0) return Status::Ok();
    return AccumulateConv(ctx, g, tuning_, in, reinterpret_cast<uint32_t*>(y->data<int32_t>()));
  }

 private:
  conv::ConvAttributes attrs_;
  gemm::GemmTuning tuning_;
};

class QLinearConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    IntegerConvInputs in;
    OL_ASSIGN_OR_RETURN(in.x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(in.w, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *in.x, "x"));
    OL_RETURN_IF_ERROR(CheckEightBit(ctx, *in.w, "w"));
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry g, conv::ResolveConv(attrs_, in.x->shape(), in.w->shape(), where));
    OL_ASSIGN_OR_RETURN(const auto x_scale, quantized::ReadScale(ctx.input(1), 1, where, "x_scale"));
    OL_ASSIGN_OR_RETURN(in.x_zp, quantized::ReadZeroPoint(ctx.input(2), 1, where, "x_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto w_scale, quantized::ReadScale(ctx.input(4), g.out_channels, where, "w_scale"));
    OL_ASSIGN_OR_RETURN(in.w_zp, quantized::ReadZeroPoint(ctx.input(5), g.out_channels, where, "w_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto y_scale, quantized::ReadScale(ctx.input(6), 1, where, "y_scale"));
    const Tensor* y_zp_tensor = ctx.input(7);
    OL_ASSIGN_OR_RETURN(const auto y_zp, quantized::ReadZeroPoint(y_zp_tensor, 1, where, "y_zero_point"));
    in.bias = ctx.input(8);
    if (in.bias != nullptr && (in.bias->dtype() != DataType::kInt32 || in.bias->num_elements() != g.out_channels)) {
      return InvalidArgument(where, ": B ", in.bias->TypeAndShape(), " must be int32 with ", g.out_channels,
                             " elements");
    }
    const DataType out_type = y_zp_tensor != nullptr ? y_zp_tensor->dtype() : in.x->dtype();
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      return InvalidArgument(where, ": y_zero_point must be int8 or uint8, got ", DataTypeName(out_type));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, g.output_shape()));
    if (y->num_elements() == 0) return Status::Ok();
    ScratchArena arena(ctx.allocator(), sizeof(uint32_t) * y->num_elements() + 64);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(uint32_t * acc, arena.AllocateArray<uint32_t>(y->num_elements()));
    OL_RETURN_IF_ERROR(AccumulateConv(ctx, g, tuning_, in, acc));
    for (int64_t e = 0; e < y->num_elements(); ++e) {
      const int64_t m = (e / g.out_size) % g.out_channels;
      const float multiplier = x_scale.at(0) * w_scale.at(m) / y_scale.at(0);
      const int32_t v = static_cast<int32_t>(acc[e]);
      if (out_type == DataType::kInt8) {
        y->data<int8_t>()[e] = quantized::Requantize<int8_t>(v, multiplier, y_zp.at(0));
      } else {
        y->data<uint8_t>()[e] = quantized::Requantize<uint8_t>(v, multiplier, y_zp.at(0));
      }
    }
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
    return Status::Ok();
  }

 private:
  conv::ConvAttributes attrs_;
  gemm::GemmTuning tuning_;
};

OL_REGISTER_KERNELS(conv_integer_ops) {
  using EightBit = TypeList<int8_t, uint8_t>;
  Kernel("ConvInteger")
      .Opsets({Since(10, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<ConvIntegerKernel>())
      .AddTo(registry);
  Kernel("QLinearConv")
      .Opsets({Since(10, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<QLinearConvKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
