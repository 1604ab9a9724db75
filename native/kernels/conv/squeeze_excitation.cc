// ai.onnx_light SqueezeExcitation (since 1, float): the squeeze-and-excitation block of
// MobileNetV3 and EfficientNet in one node, as fusion_rewrites.fuse_squeeze_excitation
// writes it from ReduceMean/GlobalAveragePool -> Conv 1x1 [-> act] -> Conv 1x1 -> gate -> Mul:
//
//   m[n, c] = mean of X[n, c, ...] over the spatial positions
//   h[n, :] = activation(W1 m[n, :] + B1)          W1 [R, C, 1...], B1 [R] (optional)
//   g[n, :] = gate_activation(W2 h[n, :] + B2)     W2 [C, R, 1...], B2 [C] (optional)
//   Y[n, c, ...] = g[n, c] * X[n, c, ...]
//
// Inputs X, W1, B1, W2, B2; attributes activation/activation_params and
// gate_activation/gate_activation_params, named and parsed as FusedConv's (gemm/epilogue.h).
// The three steps are separate passes: the means (one plane per unit), the two small
// products per image on the calling thread (the GEMM engine's serial GEMV, then the
// epilogue), and the scaling (one plane per unit, one rounding each: the Mul kernel's
// value). The plane passes split into blocks of whole planes with ThresholdedParallel
// (parallel.minimum_elements over the input's elements, parallel.block_elements); each
// plane's mean is summed in one fixed order (simd::RowSum), so the result does not depend
// on the participant count.
#include <algorithm>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/simd/rows.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

constexpr int64_t kMinimumElements = 65536;
constexpr int64_t kBlockElements = 4096;

class SqueezeExcitationKernel final : public OpKernel {
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
    const Shape& xs = x->shape();
    if (xs.rank() < 3) {
      return InvalidArgument(ctx.Where(), ": X must be [N, C, spatial...] (rank 3 or more), got ", x->TypeAndShape());
    }
    const int64_t batch = xs[0], channels = xs[1], plane = xs.num_elements() / std::max<int64_t>(batch * channels, 1);
    OL_ASSIGN_OR_RETURN(const int64_t reduced, PointwiseWeights(ctx, "W1", *w1, channels));
    OL_ASSIGN_OR_RETURN(const int64_t gated, PointwiseWeights(ctx, "W2", *w2, reduced));
    if (gated != channels) {
      return InvalidArgument(ctx.Where(), ": W2 ", w2->TypeAndShape(), " must have ", channels,
                             " output channels (X's), got ", gated);
    }
    OL_RETURN_IF_ERROR(CheckBias(ctx, "B1", b1, reduced));
    OL_RETURN_IF_ERROR(CheckBias(ctx, "B2", b2, channels));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, xs));
    const int64_t planes = batch * channels;
    if (planes == 0) return Status::Ok();

    // Scratch: the means and the gates (N x C), one image's hidden vector, the GEMV's.
    const size_t gemv_bytes = std::max(gemm::SgemmSerialScratchBytes(1, reduced, channels),
                                       gemm::SgemmSerialScratchBytes(1, channels, reduced));
    ScratchArena arena(ctx.allocator(), sizeof(float) * (2 * planes + reduced) + gemv_bytes + 4 * 64);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(float* means, arena.AllocateArray<float>(planes));
    OL_ASSIGN_OR_RETURN(float* gates, arena.AllocateArray<float>(planes));
    OL_ASSIGN_OR_RETURN(float* hidden, arena.AllocateArray<float>(std::max<int64_t>(reduced, 1)));
    OL_ASSIGN_OR_RETURN(float* gemv_scratch, arena.AllocateArray<float>(gemv_bytes / sizeof(float) + 1));
    ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));

    const float* xd = x->data<float>();
    float* yd = y->data<float>();
    const float inverse = plane > 0 ? 1.0f / static_cast<float>(plane) : 0.0f;
    OL_RETURN_IF_ERROR(
        parallel_.Run(ctx.parallel(), "squeeze_excitation.means", planes, plane, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p)
            means[p] = plane > 0 ? simd::RowSum(xd + p * plane, plane) * inverse : 0;
        }));
    for (int64_t n = 0; n < batch; ++n) {
      Dense(reduced, channels, w1->data<float>(), b1, means + n * channels, hidden, gemv_scratch);
      inner_.Apply(hidden, 0, 1, reduced, reduced);
      float* gate = gates + n * channels;
      Dense(channels, reduced, w2->data<float>(), b2, hidden, gate, gemv_scratch);
      gate_.Apply(gate, 0, 1, channels, channels);
    }
    return parallel_.Run(ctx.parallel(), "squeeze_excitation.scale", planes, plane,
                         [&](int64_t begin, int64_t end) { ScalePlanes(xd, gates, yd, begin, end, plane); });
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

  // out[r] = sum_k w[r, k] v[k] (+ bias[r]): the engine's serial GEMV (one row of A times
  // the transposed weight), the bias added as the convolution adds it, one rounding.
  static void Dense(int64_t rows, int64_t k, const float* w, const Tensor* bias, const float* v, float* out,
                    float* scratch) {
    if (rows == 0) return;
    gemm::SgemmSerial(false, true, 1, rows, k, 1.0f, v, k, w, k, 0.0f, out, rows, scratch);
    if (bias == nullptr) return;
    const float* b = bias->data<float>();
    for (int64_t r = 0; r < rows; ++r) out[r] += b[r];
  }

  // y[p, i] = gates[p] * x[p, i] for planes [begin, end) of `n` elements: one rounding, the
  // Mul kernel's value. X and Y never overlap (Y is a fresh buffer: the registration offers
  // no in-place output): restrict parameters say so. Not inlined: inlined into Compute's
  // serial branch (which GCC lays out as cold) the loop stayed scalar, and its store held
  // 89% of Compute's perf samples on MobileNetV3's [1, 576, 7, 7] block; on its own it is
  // vectorised.
  [[gnu::noinline]] static void ScalePlanes(const float* __restrict x, const float* __restrict gates,
                                            float* __restrict y, int64_t begin, int64_t end, int64_t n) {
    for (int64_t p = begin; p < end; ++p) {
      const float g = gates[p];
      for (int64_t i = 0; i < n; ++i) y[p * n + i] = g * x[p * n + i];
    }
  }

  ThresholdedParallel parallel_;
  gemm::Epilogue inner_, gate_;
};

OL_REGISTER_KERNELS(squeeze_excitation_op) {
  Kernel("SqueezeExcitation")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning({MinimumElementsParam(kMinimumElements, "input elements below which the node runs serially"),
               ParamSpec::Int64(param::kBlockElements, kBlockElements, 64, int64_t{1} << 30,
                                "input elements per block; a block holds max(1, this / plane size) whole planes")})
      .Factory(MakeKernel<SqueezeExcitationKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
