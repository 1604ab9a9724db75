// ai.onnx_light NchwcConv (since 1, float; README.md): Y blocked [N, CeilDiv(M, 16), OH,
// OW, 16] = activation(conv(X, W) + B + Z), X blocked (rank 5) or NCHW (rank 4: stems), W
// [M, C, kh, kw] a constant packed at creation, B [M] and Z (blocked, Y's shape)
// optional; Conv's attributes with group = 1 and FusedConv's activation and
// activation_params. nchwc_conv.h has the engine. Tuning: Conv's GEMM-path threshold
// (parallel.minimum_tasks) and its implicit GEMM's K blocking (conv.implicit_chunk_*).
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_float.h"
#include "native/kernels/nchwc/nchwc_conv.h"
#include "native/kernels/nchwc/reorder.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Conv's schema without its depthwise threshold (NchwcConv has no depthwise path).
std::vector<ParamSpec> NchwcConvTuningParams() {
  std::vector<ParamSpec> params;
  for (ParamSpec& spec : conv::ConvTuningParams()) {
    if (spec.name != param::kDepthwiseMinimumMultiplyAdds) params.push_back(spec);
  }
  return params;
}

class NchwcConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    if (attrs_.group != 1) {
      return InvalidArgument(info.Where(), ": group must be 1 (depthwise: NchwcDepthwiseConv), got ", attrs_.group);
    }
    OL_ASSIGN_OR_RETURN(const std::string activation, info.GetString("activation", ""));
    OL_ASSIGN_OR_RETURN(const std::vector<float> params, info.GetFloats("activation_params", {}));
    OL_ASSIGN_OR_RETURN(epilogue_, gemm::ParseConvActivation(info.Where(), activation, params));
    OL_ASSIGN_OR_RETURN(tuning_.gemm, gemm::ReadGemmTuning(info.tuning()));
    OL_ASSIGN_OR_RETURN(tuning_.implicit_chunk_panel_bytes, info.tuning().Int64(conv::kImplicitChunkPanelBytesParam));
    OL_ASSIGN_OR_RETURN(tuning_.implicit_chunk_tiles, info.tuning().Int64(conv::kImplicitChunkTilesParam));
    const Tensor* w = info.constant_input(1);
    if (w == nullptr) {
      return InvalidArgument(info.Where(), ": W must be a constant (its weights are packed at creation)");
    }
    const Shape& ws = w->shape();
    if (w->dtype() != DataType::kFloat || ws.rank() != 4 || w->num_elements() == 0) {
      return InvalidArgument(info.Where(), ": W must be a non-empty float [M, C, kh, kw] (2-D only), got ",
                             w->TypeAndShape());
    }
    w_shape_ = ws;
    // W's rows go back to the system as they are packed when the session allows it (as
    // Conv's, conv_op.cc): W and its panels never coexist whole. The consumer is taken at
    // the first report.
    const size_t row_bytes = w->byte_size() / static_cast<size_t>(ws[0]);
    ConstantConsumer consumer;
    bool consuming = false;
    weights_ = nchwc::PackedNchwcWeights::Pack(ws[0], ws[1], ws[2], ws[3], w->data<float>(), [&](int64_t rows) {
      if (!consuming) {
        consumer = info.ConsumeConstantInput(1);
        consuming = true;
      }
      consumer.ReleaseThrough(static_cast<size_t>(rows) * row_bytes);
    });
    // Compute reads only the packed panels (and W's shape, kept above): the session may
    // release W (registry/kernel.h, absorbing a constant input).
    return info.AbsorbConstantInput(1, static_cast<int64_t>(weights_.panels.size() * sizeof(float)));
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Tensor* b = ctx.input(2);
    const Tensor* z = ctx.input(3);
    const Shape& xs = x->shape();
    const int64_t c = w_shape_[1];
    const bool blocked = xs.rank() == 5;
    Shape logical;
    if (blocked) {
      if (xs[1] != CeilDiv(c, nchwc::kBlock) || xs[4] != nchwc::kBlock) {
        return InvalidArgument(ctx.Where(), ": blocked X ", x->TypeAndShape(), " must have ", CeilDiv(c, nchwc::kBlock),
                               " blocks of 16 for the ", c, " input channels of W ", w_shape_);
      }
      logical = Shape{xs[0], c, xs[2], xs[3]};
    } else if (xs.rank() == 4) {
      logical = xs;
    } else {
      return InvalidArgument(ctx.Where(), ": X must be blocked [N, Cb, H, W, 16] or NCHW [N, C, H, W], got ",
                             x->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry g, conv::ResolveConv(attrs_, logical, w_shape_, ctx.Where()));
    if (b != nullptr && (b->dtype() != DataType::kFloat || b->shape().rank() != 1 || b->shape()[0] != g.out_channels)) {
      return InvalidArgument(ctx.Where(), ": B ", b->TypeAndShape(), " must be float [", g.out_channels, "]");
    }
    const Shape y_shape{g.batch, CeilDiv(g.out_channels, nchwc::kBlock), g.out_spatial[0], g.out_spatial[1],
                        nchwc::kBlock};
    gemm::Epilogue epilogue = epilogue_;
    if (z != nullptr) {
      if (z->dtype() != DataType::kFloat || z->shape() != y_shape) {
        return InvalidArgument(ctx.Where(), ": Z ", z->TypeAndShape(), " must be float with Y's blocked shape ",
                               y_shape);
      }
      epilogue.residual = z->data<float>();
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, y_shape));
    if (y->num_elements() == 0) return Status::Ok();
    return nchwc::NchwcConvForward(ctx, g, blocked, x->data<float>(), weights_,
                                   b != nullptr ? b->data<float>() : nullptr, y->data<float>(), tuning_, epilogue);
  }

 private:
  conv::ConvAttributes attrs_;
  conv::ConvTuning tuning_;
  gemm::Epilogue epilogue_;
  Shape w_shape_;
  nchwc::PackedNchwcWeights weights_;
};

OL_REGISTER_KERNELS(nchwc_conv_op) {
  Kernel("NchwcConv")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(NchwcConvTuningParams())
      .Factory(MakeKernel<NchwcConvKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
