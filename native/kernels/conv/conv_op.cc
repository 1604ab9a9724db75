// ONNX Conv and ConvTranspose (float, float16, bfloat16, double), and com.microsoft
// FusedConv (ORT's contrib op, float): Conv's inputs X, W, B plus an optional residual Z of
// Y's shape, Conv's attributes plus `activation` and `activation_params`;
// Y = activation(conv(X, W) + B + Z), the residual and activation applied by the
// convolution paths as an epilogue on each output block (gemm/epilogue.h).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_direct.h"
#include "native/kernels/conv/conv_float.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

template <bool kTranspose, bool kFused = false>
class ConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    if (kFused) {
      OL_ASSIGN_OR_RETURN(const std::string activation, info.GetString("activation", ""));
      OL_ASSIGN_OR_RETURN(const std::vector<float> params, info.GetFloats("activation_params", {}));
      OL_ASSIGN_OR_RETURN(epilogue_, gemm::ParseConvActivation(info.Where(), activation, params));
    }
    if (kTranspose) {
      OL_ASSIGN_OR_RETURN(tuning_.gemm, gemm::ReadGemmTuning(info.tuning()));
      return Status::Ok();
    }
    OL_ASSIGN_OR_RETURN(tuning_, conv::ReadConvTuning(info.tuning()));
    if (const Tensor* w = info.constant_input(1)) {
      // Consumed when the session allows it and W is packed (Pack reports rows only then):
      // W's rows go back to the system as they are packed, so W and its packed form never
      // coexist whole (registry/kernel.h). The consumer is taken at the first report.
      const size_t row_bytes =
          w->shape().rank() > 0 && w->shape()[0] > 0 ? w->byte_size() / static_cast<size_t>(w->shape()[0]) : 0;
      ConstantConsumer consumer;
      bool consuming = false;
      OL_ASSIGN_OR_RETURN(packed_w_, conv::PackedConvWeights::Pack(*w, attrs_.group, [&](int64_t rows) {
                            if (!consuming) {
                              consumer = info.ConsumeConstantInput(1);
                              consuming = true;
                            }
                            consumer.ReleaseThrough(static_cast<size_t>(rows) * row_bytes);
                          }));
      if (packed_w_.packed()) OL_RETURN_IF_ERROR(info.AbsorbConstantInput(1, static_cast<int64_t>(packed_w_.bytes())));
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequiredInput(1));
    const Tensor* b = ctx.input(2);
    if (w->dtype() != x->dtype() || (b != nullptr && b->dtype() != x->dtype())) {
      return InvalidArgument(ctx.Where(), ": element types differ: X ", x->TypeAndShape(), ", W ", w->TypeAndShape());
    }
    conv::ConvGeometry g;
    if (kTranspose) {
      OL_ASSIGN_OR_RETURN(g, conv::ResolveConvTranspose(attrs_, x->shape(), w->shape(), ctx.Where()));
    } else {
      OL_ASSIGN_OR_RETURN(g, conv::ResolveConv(attrs_, x->shape(), w->shape(), ctx.Where()));
    }
    if (b != nullptr && (b->shape().rank() != 1 || b->shape()[0] != g.out_channels)) {
      return InvalidArgument(ctx.Where(), ": bias ", b->TypeAndShape(), " must have ", g.out_channels, " elements");
    }
    gemm::Epilogue epilogue;
    if (kFused) {
      if (x->dtype() != DataType::kFloat) {
        return NotImplemented(ctx.Where(), ": element type ", DataTypeName(x->dtype()),
                              " is not supported (float only)");
      }
      epilogue = epilogue_;
      if (const Tensor* z = ctx.input(3)) {
        if (z->dtype() != DataType::kFloat || z->shape() != g.output_shape()) {
          return InvalidArgument(ctx.Where(), ": Z ", z->TypeAndShape(), " must be float with the output's shape ",
                                 g.output_shape());
        }
        epilogue.residual = z->data<float>();
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), g.output_shape()));
    if (kFused) {
      return conv::ConvForward(ctx, g, x->data<float>(), w->data<float>(), packed_w_.Find(*w),
                               b != nullptr ? b->data<float>() : nullptr, y->data<float>(), tuning_, epilogue);
    }
    switch (x->dtype()) {
      case DataType::kFloat:
        return Float(ctx, g, x->data<float>(), w->data<float>(), packed_w_.Find(*w),
                     b != nullptr ? b->data<float>() : nullptr, y->data<float>());
      case DataType::kDouble:
        return conv::DirectConv<double, kTranspose>(ctx, g, x->data<double>(), w->data<double>(),
                                                    b != nullptr ? b->data<double>() : nullptr, y->data<double>(),
                                                    tuning_.gemm);
      case DataType::kFloat16:
        return Widened<Float16>(ctx, g, *x, *w, b, y);
      case DataType::kBFloat16:
        return Widened<BFloat16>(ctx, g, *x, *w, b, y);
      default:
        return NotImplemented(ctx.Where(), ": element type ", DataTypeName(x->dtype()), " is not supported");
    }
  }

 private:
  // `packed_w`: W prepacked at Init (constant W), else null.
  Status Float(KernelContext& ctx, const conv::ConvGeometry& g, const float* x, const float* w, const float* packed_w,
               const float* b, float* y) {
    return kTranspose ? conv::ConvTransposeForward(ctx, g, x, w, b, y, tuning_.gemm)
                      : conv::ConvForward(ctx, g, x, w, packed_w, b, y, tuning_);
  }

  // 16-bit floats: widened to float once (scratch of the tensors' size, taken before any
  // region), computed in float, rounded back once.
  template <typename Half>
  Status Widened(KernelContext& ctx, const conv::ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                 Tensor* y) {
    const int64_t counts[] = {x.num_elements(), w.num_elements(), b != nullptr ? b->num_elements() : 0,
                              y->num_elements()};
    ScratchArena arena(ctx.allocator(), sizeof(float) * (counts[0] + counts[1] + counts[2] + counts[3]) + 4 * 64);
    OL_RETURN_IF_ERROR(arena.status());
    float* f[4];
    for (int i = 0; i < 4; ++i) {
      OL_ASSIGN_OR_RETURN(f[i], arena.AllocateArray<float>(counts[i]));
    }
    const Tensor* sources[] = {&x, &w, b};
    for (int i = 0; i < 3; ++i) {
      for (int64_t e = 0; e < counts[i]; ++e) f[i][e] = sources[i]->data<Half>()[e].ToFloat();
    }
    OL_RETURN_IF_ERROR(Float(ctx, g, f[0], f[1], nullptr, b != nullptr ? f[2] : nullptr, f[3]));
    for (int64_t e = 0; e < counts[3]; ++e) y->data<Half>()[e] = Half::FromFloat(f[3][e]);
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
    return Status::Ok();
  }

  conv::ConvAttributes attrs_;
  conv::ConvTuning tuning_;           // ConvTranspose reads only its GEMM part
  conv::PackedConvWeights packed_w_;  // Conv with a constant float W only
  gemm::Epilogue epilogue_;           // FusedConv's activation (its residual is set per run)
};

OL_REGISTER_KERNELS(conv_ops) {
  const char* const ops[] = {"Conv", "ConvTranspose"};
  for (const char* op : ops) {
    const bool transpose = std::string(op) == "ConvTranspose";
    const KernelFactory factory = transpose ? MakeKernel<ConvKernel<true>>() : MakeKernel<ConvKernel<false>>();
    const std::vector<ParamSpec> params = transpose ? gemm::GemmTuningParams() : conv::ConvTuningParams();
    Kernel(op)
        .Opsets({Since(1, Floats{}), Since(11, Floats{}), Since(22, FloatsBf{})})
        .Tuning(params)
        .Factory(factory)
        .AddTo(registry);
  }
  // ORT's contrib schema (since 1); the same tuning schema as Conv (the same paths).
  Kernel("FusedConv")
      .Domain("com.microsoft")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(conv::ConvTuningParams())
      .Factory(MakeKernel<ConvKernel<false, true>>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
