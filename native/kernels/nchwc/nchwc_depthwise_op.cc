// ai.onnx_light NchwcDepthwiseConv and NchwcSqueezeExcitation (since 1, float): the
// depthwise convolution and the squeeze-and-excitation block of MobileNetV3/EfficientNet on
// blocked-channel tensors [N, Cb, H, W, 16] (README.md's contract; the layout pass writes
// them). The per-block loops are nchwc_depthwise.h's, on this CPU's widest enabled ISA.
//
// NchwcDepthwiseConv: inputs X blocked, W [C, 1, kh, kw] (a constant: packed at creation
// as [Cb][kh][kw][16], pad lanes 0), B [C] optional; Conv's attributes with group = C and
// FusedConv's activation/activation_params. Y = activation(depthwise(X, W) + B), blocked.
// The units of work are output rows of one channel block of one image, in pairs for
// square 3x3 / 5x5 kernels at stride 1 (depthwise_row_pair, which loads each input vector
// once for both rows where it can), split with ThresholdedParallel
// (parallel.minimum_elements counts multiply-adds, parallel.block_multiply_adds); each unit
// is computed, then put through the activation (gemm/epilogue.h, this CPU's widest lanes)
// while it is in L1, then its pad lanes are written 0 (Sigmoid and HardSigmoid map 0
// elsewhere). Each row is written by one
// participant in one fixed order: the bits do not depend on the participant count.
//
// NchwcSqueezeExcitation: SqueezeExcitation's inputs and attributes (conv/
// squeeze_excitation.cc) with X blocked: the lane means of each (image, block) plane
// (block_sums, one fixed order), the two small products on the real channels per image on
// the calling thread (the GEMM engine's serial GEMV, then the epilogue), gates of the pad
// lanes 0, then Y = gate lanes x X per position. The plane passes split into blocks of
// whole planes as SqueezeExcitation's do.
#include <algorithm>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/nchwc/nchwc_depthwise.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using nchwc::kBlock;

constexpr int64_t kDepthwiseMinimumMultiplyAdds = int64_t{1} << 18;  // as Conv's depthwise threshold
constexpr int64_t kSeMinimumElements = 65536;                        // as SqueezeExcitation's
constexpr int64_t kSeBlockElements = 4096;

int64_t Blocks(int64_t channels) { return (channels + kBlock - 1) / kBlock; }

// X must be [N, CeilDiv(channels, 16), H, W, 16] (2-D spatial).
Status CheckBlocked(const KernelContext& ctx, const Tensor& x, int64_t channels, const char* source,
                    const Tensor& source_tensor) {
  const Shape& s = x.shape();
  if (s.rank() != 5 || s[4] != kBlock || s[1] != Blocks(channels)) {
    return InvalidArgument(ctx.Where(), ": X ", x.TypeAndShape(), " must be blocked [N, ", Blocks(channels),
                           ", H, W, 16] for the ", channels, " channels of ", source, " ",
                           source_tensor.TypeAndShape());
  }
  return Status::Ok();
}

class NchwcDepthwiseConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(const std::string activation, info.GetString("activation", ""));
    OL_ASSIGN_OR_RETURN(const std::vector<float> params, info.GetFloats("activation_params", {}));
    OL_ASSIGN_OR_RETURN(epilogue_, gemm::ParseConvActivation(info.Where(), activation, params));
    const Tensor* w = info.constant_input(1);
    if (w == nullptr) {
      return InvalidArgument(info.Where(), ": W must be a constant (an initializer): it is packed at creation");
    }
    const Shape& ws = w->shape();
    if (w->dtype() != DataType::kFloat || ws.rank() != 4 || ws[1] != 1 || ws[0] < 1) {
      return InvalidArgument(info.Where(), ": W ", w->TypeAndShape(), " must be float [C, 1, kh, kw]");
    }
    if (attrs_.group != ws[0]) {
      return InvalidArgument(info.Where(), ": group ", attrs_.group, " must equal W's channel count ", ws[0], " (W ",
                             w->TypeAndShape(), ")");
    }
    packed_ = nchwc::PackDepthwiseWeights(w->data<float>(), ws[0], ws[2], ws[3]);
    w_shape_ = ws;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequiredInput(1));
    const Tensor* b = ctx.input(2);
    if (x->dtype() != DataType::kFloat) {
      return NotImplemented(ctx.Where(), ": element type of X ", x->TypeAndShape(), " is not supported (float only)");
    }
    if (w->shape() != w_shape_) {
      return InvalidArgument(ctx.Where(), ": W ", w->TypeAndShape(), " differs from the constant packed at creation ",
                             w_shape_);
    }
    const int64_t channels = w_shape_[0], blocks = Blocks(channels);
    OL_RETURN_IF_ERROR(CheckBlocked(ctx, *x, channels, "W", *w));
    const Shape& xs = x->shape();
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry cg,
                        conv::ResolveConv(attrs_, Shape({xs[0], channels, xs[2], xs[3]}), w_shape_, ctx.Where()));
    if (b != nullptr && (b->dtype() != DataType::kFloat || b->shape().rank() != 1 || b->shape()[0] != channels)) {
      return InvalidArgument(ctx.Where(), ": B ", b->TypeAndShape(), " must be float [", channels, "]");
    }
    nchwc::DepthwiseGeometry g;
    g.in_h = xs[2];
    g.in_w = xs[3];
    g.out_h = cg.out_spatial[0];
    g.out_w = cg.out_spatial[1];
    g.kernel_h = cg.kernel[0];
    g.kernel_w = cg.kernel[1];
    g.stride_h = cg.strides[0];
    g.stride_w = cg.strides[1];
    g.dilation_h = cg.dilations[0];
    g.dilation_w = cg.dilations[1];
    g.pad_top = cg.pads_begin[0];
    g.pad_left = cg.pads_begin[1];
    const int64_t batch = xs[0];
    OL_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.AllocateOutput(0, DataType::kFloat, Shape({batch, blocks, g.out_h, g.out_w, kBlock})));
    if (batch * blocks * g.out_h == 0 || g.out_w == 0) return Status::Ok();

    ScratchArena arena(ctx.allocator(), sizeof(float) * blocks * kBlock + 64);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(float* bias, arena.AllocateArray<float>(blocks * kBlock));
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
    std::fill(bias, bias + blocks * kBlock, 0.0f);
    if (b != nullptr) std::copy(b->data<float>(), b->data<float>() + channels, bias);

    const nchwc::NchwcBlockKernels& k = nchwc::BestNchwcBlockKernels();
    const float* xd = x->data<float>();
    float* yd = y->data<float>();
    const int64_t taps = g.kernel_h * g.kernel_w, in_plane = g.in_h * g.in_w * kBlock, row = g.out_w * kBlock;
    const int64_t real_lanes = channels - (blocks - 1) * kBlock;  // of the last block
    const bool activation = !epilogue_.empty();
    // Rows in pairs where depthwise_row_pair shares input loads between them (square 3x3 /
    // 5x5 kernels at stride 1); elsewhere one row per unit, as before the pairs.
    const bool paired = g.kernel_h == g.kernel_w && (g.kernel_h == 3 || g.kernel_h == 5) && g.stride_h == 1 &&
                        g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1;
    const int64_t rows_per_unit = paired ? 2 : 1, units_per_plane = (g.out_h + rows_per_unit - 1) / rows_per_unit;
    // The activation over `n_rows` rows just written, then their pad lanes to 0.
    const auto Finish = [&](float* y_rows, int64_t n_rows, int64_t cb) {
      if (!activation) return;
      epilogue_.Apply(y_rows, 0, 1, n_rows * row, n_rows * row);
      if (cb == blocks - 1 && real_lanes < kBlock) {
        for (int64_t p = 0; p < n_rows * g.out_w; ++p)
          std::fill(y_rows + p * kBlock + real_lanes, y_rows + (p + 1) * kBlock, 0.0f);
      }
    };
    // Units: rows_per_unit output rows of one (image, block) plane (the last unit of a plane
    // may have fewer).
    return parallel_.Run(ctx.parallel(), "nchwc_depthwise.rows", batch * blocks * units_per_plane,
                         rows_per_unit * row * taps, [&](int64_t begin, int64_t end) {
                           for (int64_t u = begin; u < end; ++u) {
                             const int64_t plane = u / units_per_plane, cb = plane % blocks;
                             const int64_t oh = rows_per_unit * (u % units_per_plane);
                             float* y_rows = yd + (plane * g.out_h + oh) * row;
                             const float* xb = xd + plane * in_plane;
                             const float* wb = packed_.data() + cb * taps * kBlock;
                             if (paired) {
                               k.depthwise_row_pair(g, xb, wb, bias + cb * kBlock, oh, y_rows);
                               Finish(y_rows, oh + 1 < g.out_h ? 2 : 1, cb);
                             } else {
                               k.depthwise_row(g, xb, wb, bias + cb * kBlock, oh, y_rows);
                               Finish(y_rows, 1, cb);
                             }
                           }
                         });
  }

 private:
  ThresholdedParallel parallel_;
  conv::ConvAttributes attrs_;
  gemm::Epilogue epilogue_;
  std::vector<float> packed_;  // [Cb][kh][kw][16]
  Shape w_shape_;
};

class NchwcSqueezeExcitationKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_ASSIGN_OR_RETURN(inner_, ParseActivation(info, "activation"));
    OL_ASSIGN_OR_RETURN(gate_, ParseActivation(info, "gate_activation"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* w1, ctx.RequiredInput(1));
    const Tensor* b1 = ctx.input(2);
    OL_ASSIGN_OR_RETURN(const Tensor* w2, ctx.RequiredInput(3));
    const Tensor* b2 = ctx.input(4);
    for (const Tensor* t : {x, w1, b1, w2, b2}) {
      if (t != nullptr && t->dtype() != DataType::kFloat) {
        return NotImplemented(ctx.Where(), ": element type of ", t->TypeAndShape(), " is not supported (float only)");
      }
    }
    if (w1->shape().rank() < 2) {
      return InvalidArgument(ctx.Where(), ": W1 must be a 1x1 convolution weight [out, C, 1, 1], got ",
                             w1->TypeAndShape());
    }
    const int64_t channels = w1->shape()[1];
    OL_RETURN_IF_ERROR(CheckBlocked(ctx, *x, channels, "W1", *w1));
    OL_ASSIGN_OR_RETURN(const int64_t reduced, PointwiseWeights(ctx, "W1", *w1, channels));
    OL_ASSIGN_OR_RETURN(const int64_t gated, PointwiseWeights(ctx, "W2", *w2, reduced));
    if (gated != channels) {
      return InvalidArgument(ctx.Where(), ": W2 ", w2->TypeAndShape(), " must have ", channels,
                             " output channels (W1's input channels), got ", gated);
    }
    OL_RETURN_IF_ERROR(CheckBias(ctx, "B1", b1, reduced));
    OL_RETURN_IF_ERROR(CheckBias(ctx, "B2", b2, channels));
    const Shape& xs = x->shape();
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, xs));
    const int64_t batch = xs[0], blocks = xs[1], positions = xs[2] * xs[3], planes = batch * blocks;
    const int64_t lanes = blocks * kBlock;  // per image
    if (planes == 0) return Status::Ok();

    // Scratch: the lane means and the gates (N x Cb x 16), one image's hidden vector, the GEMV's.
    const size_t gemv_bytes = std::max(gemm::SgemmSerialScratchBytes(1, reduced, channels),
                                       gemm::SgemmSerialScratchBytes(1, channels, reduced));
    ScratchArena arena(ctx.allocator(), sizeof(float) * (2 * planes * kBlock + reduced + 1) + gemv_bytes + 4 * 64);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(float* means, arena.AllocateArray<float>(planes * kBlock));
    OL_ASSIGN_OR_RETURN(float* gates, arena.AllocateArray<float>(planes * kBlock));
    OL_ASSIGN_OR_RETURN(float* hidden, arena.AllocateArray<float>(std::max<int64_t>(reduced, 1)));
    OL_ASSIGN_OR_RETURN(float* gemv_scratch, arena.AllocateArray<float>(gemv_bytes / sizeof(float) + 1));
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));

    const nchwc::NchwcBlockKernels& k = nchwc::BestNchwcBlockKernels();
    const float* xd = x->data<float>();
    float* yd = y->data<float>();
    const int64_t plane = positions * kBlock;
    const float inverse = positions > 0 ? 1.0f / static_cast<float>(positions) : 0.0f;
    OL_RETURN_IF_ERROR(
        parallel_.Run(ctx.parallel(), "nchwc_squeeze_excitation.means", planes, plane, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            k.block_sums(xd + p * plane, positions, means + p * kBlock);
            for (int64_t l = 0; l < kBlock; ++l) means[p * kBlock + l] *= inverse;
          }
        }));
    for (int64_t n = 0; n < batch; ++n) {
      Dense(reduced, channels, w1->data<float>(), b1, means + n * lanes, hidden, gemv_scratch);
      inner_.Apply(hidden, 0, 1, reduced, reduced);
      float* gate = gates + n * lanes;
      Dense(channels, reduced, w2->data<float>(), b2, hidden, gate, gemv_scratch);
      gate_.Apply(gate, 0, 1, channels, channels);
      std::fill(gate + channels, gate + lanes, 0.0f);  // pad lanes: Y's are 0
    }
    return parallel_.Run(ctx.parallel(), "nchwc_squeeze_excitation.scale", planes, plane,
                         [&](int64_t begin, int64_t end) {
                           for (int64_t p = begin; p < end; ++p) {
                             k.block_scale(xd + p * plane, gates + p * kBlock, positions, yd + p * plane);
                           }
                         });
  }

 private:
  static StatusOr<gemm::Epilogue> ParseActivation(const KernelInfo& info, const std::string& attribute) {
    OL_ASSIGN_OR_RETURN(const std::string name, info.GetString(attribute, ""));
    OL_ASSIGN_OR_RETURN(const std::vector<float> params, info.GetFloats(attribute + "_params", {}));
    return gemm::ParseConvActivation(info.Where() + " " + attribute, name, params);
  }

  // The output channels of a pointwise weight [out, in, 1...] (or [out, in]) reading `in`.
  static StatusOr<int64_t> PointwiseWeights(const KernelContext& ctx, const char* name, const Tensor& w, int64_t in) {
    const Shape& s = w.shape();
    bool pointwise = s.rank() >= 2 && s[1] == in;
    for (int i = 2; pointwise && i < s.rank(); ++i) pointwise = s[i] == 1;
    if (!pointwise) {
      return InvalidArgument(ctx.Where(), ": ", name, " must be a 1x1 convolution weight [out, ", in, ", 1...], got ",
                             w.TypeAndShape());
    }
    return s[0];
  }

  static Status CheckBias(const KernelContext& ctx, const char* name, const Tensor* b, int64_t n) {
    if (b == nullptr || (b->shape().rank() == 1 && b->shape()[0] == n)) return Status::Ok();
    return InvalidArgument(ctx.Where(), ": ", name, " must be [", n, "], got ", b->TypeAndShape());
  }

  // out[r] = sum_k w[r, k] v[k] (+ bias[r]): as SqueezeExcitation's (the engine's serial
  // GEMV, the bias added after, one rounding).
  static void Dense(int64_t rows, int64_t k, const float* w, const Tensor* bias, const float* v, float* out,
                    float* scratch) {
    if (rows == 0) return;
    gemm::SgemmSerial(false, true, 1, rows, k, 1.0f, v, k, w, k, 0.0f, out, rows, scratch);
    if (bias == nullptr) return;
    const float* b = bias->data<float>();
    for (int64_t r = 0; r < rows; ++r) out[r] += b[r];
  }

  ThresholdedParallel parallel_;
  gemm::Epilogue inner_, gate_;
};

OL_REGISTER_KERNELS(nchwc_depthwise_ops) {
  Kernel("NchwcDepthwiseConv")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(WorkUnitTuning(kDepthwiseMinimumMultiplyAdds,
                             "unit of output rows (two at stride 1, else one) of one channel block"))
      .Factory(MakeKernel<NchwcDepthwiseConvKernel>())
      .AddTo(registry);
  Kernel("NchwcSqueezeExcitation")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning({MinimumElementsParam(kSeMinimumElements, "input elements below which the node runs serially"),
               ParamSpec::Int64(param::kBlockElements, kSeBlockElements, 64, int64_t{1} << 30,
                                "input elements per block; a block holds max(1, this / plane size) whole "
                                "(image, channel block) planes")})
      .Factory(MakeKernel<NchwcSqueezeExcitationKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
