// DeformConv (opset 19, 2-D, float): a convolution whose kernel taps sample the input at
// learned fractional offsets (bilinear, zero outside the image, as GridSample with
// align_corners=1), optionally scaled by a mask. Per (image, group): the sampled columns
// (C/group x kH x kW rows, one column per output position) are built in parallel over
// rows, then one GEMM with the group's weights. Each column element is computed whole by
// one participant and the GEMM is deterministic, so results never depend on the
// participant count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/gemm.h"

namespace onnx_light {
namespace conv {
namespace {

// Bilinear sample of a (height x width) plane at (h, w); corners outside contribute 0.
float Sample(const float* plane, int64_t height, int64_t width, float h, float w) {
  if (!(h > -1.0f && h < static_cast<float>(height) && w > -1.0f && w < static_cast<float>(width))) return 0.0f;
  const float h0f = std::floor(h), w0f = std::floor(w);
  const int64_t h0 = static_cast<int64_t>(h0f), w0 = static_cast<int64_t>(w0f);
  const float dh = h - h0f, dw = w - w0f;
  const auto at = [&](int64_t y, int64_t x) {
    return y >= 0 && y < height && x >= 0 && x < width ? plane[y * width + x] : 0.0f;
  };
  return (1 - dh) * ((1 - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) +
         dh * ((1 - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
}

class DeformConvKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(offset_group_, info.GetInt("offset_group", 1));
    if (offset_group_ < 1) return InvalidArgument(info.Where(), ": offset_group must be >= 1, got ", offset_group_);
    OL_ASSIGN_OR_RETURN(gemm_, gemm::ReadGemmTuning(info.tuning()));
    OL_ASSIGN_OR_RETURN(minimum_samples_, info.tuning().Int64(param::kMinimumElements));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* offset, ctx.RequiredInput(2));
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    if (x->shape().rank() != 4) {
      return NotImplemented(ctx.Where(), ": only 2-D DeformConv is supported, got X ", x->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConv(attrs_, x->shape(), w->shape(), ctx.Where()));
    const int64_t kh = g.kernel[0], kw = g.kernel[1], taps = kh * kw;
    const int64_t oh = g.out_spatial[0], ow = g.out_spatial[1], positions = oh * ow;
    if (g.in_channels % offset_group_ != 0) {
      return InvalidArgument(ctx.Where(), ": ", g.in_channels, " input channels do not divide into offset_group ",
                             offset_group_);
    }
    if (offset->shape() != Shape({g.batch, offset_group_ * 2 * taps, oh, ow})) {
      return InvalidArgument(ctx.Where(), ": offset must be (", g.batch, ", ", offset_group_ * 2 * taps, ", ", oh, ", ",
                             ow, "), got ", offset->TypeAndShape());
    }
    if (mask != nullptr && mask->shape() != Shape({g.batch, offset_group_ * taps, oh, ow})) {
      return InvalidArgument(ctx.Where(), ": mask must be (", g.batch, ", ", offset_group_ * taps, ", ", oh, ", ", ow,
                             "), got ", mask->TypeAndShape());
    }
    if (bias != nullptr && bias->shape() != Shape({g.out_channels})) {
      return InvalidArgument(ctx.Where(), ": B must be (", g.out_channels, "), got ", bias->TypeAndShape());
    }
    for (const Tensor* t : {w, offset, bias, mask}) {
      if (t != nullptr && t->dtype() != DataType::kFloat) {
        return InvalidArgument(ctx.Where(), ": ", t->TypeAndShape(), " must be float like X");
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, g.output_shape()));
    if (y->num_elements() == 0) return Status::Ok();

    const int64_t cpg = g.in_per_group(), mpg = g.out_per_group(), rows = cpg * taps;
    const int64_t channels_per_offset_group = g.in_channels / offset_group_;
    ScratchArena scratch(ctx.allocator(), static_cast<size_t>(rows * positions) * sizeof(float));
    OL_RETURN_IF_ERROR(scratch.status());
    OL_ASSIGN_OR_RETURN(float* columns, scratch.AllocateArray<float>(rows * positions));
    ctx.RecordScratch(static_cast<int64_t>(scratch.capacity()));

    const int64_t ih = g.in_spatial[0], iw = g.in_spatial[1];
    const float* xd = x->data<float>();
    const float* off = offset->data<float>();
    const float* md = mask != nullptr ? mask->data<float>() : nullptr;
    float* yd = y->data<float>();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        // columns[(c * kh + i) * kw + j][p] = mask * X[n, c](tap (i, j) of position p, shifted).
        const auto fill = [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t c = grp * cpg + r / taps, tap = r % taps, i = tap / kw, j = tap % kw;
            const int64_t og = c / channels_per_offset_group;
            const float* plane = xd + (n * g.in_channels + c) * ih * iw;
            const float* dy = off + ((n * offset_group_ + og) * taps + tap) * 2 * positions;
            const float* dx = dy + positions;
            const float* scale = md != nullptr ? md + ((n * offset_group_ + og) * taps + tap) * positions : nullptr;
            float* col = columns + r * positions;
            for (int64_t p = 0; p < positions; ++p) {
              const int64_t py = p / ow, px = p % ow;
              const float h = static_cast<float>(py * g.strides[0] - g.pads_begin[0] + i * g.dilations[0]) + dy[p];
              const float wc = static_cast<float>(px * g.strides[1] - g.pads_begin[1] + j * g.dilations[1]) + dx[p];
              const float v = Sample(plane, ih, iw, h, wc);
              col[p] = scale != nullptr ? v * scale[p] : v;
            }
          }
          return Status::Ok();
        };
        if (rows * positions < minimum_samples_) {
          OL_RETURN_IF_ERROR(fill(0, rows));
        } else {
          const ParallelPlan plan{"deform_conv.columns", std::max<int64_t>(1, 4096 / positions)};
          OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), rows, plan, fill));
        }
        float* out = yd + (n * g.out_channels + grp * mpg) * positions;
        if (bias != nullptr) {
          for (int64_t m = 0; m < mpg; ++m)
            std::fill(out + m * positions, out + (m + 1) * positions, bias->data<float>()[grp * mpg + m]);
        }
        OL_RETURN_IF_ERROR(gemm::Sgemm(ctx.parallel(), ctx.allocator(), gemm_, false, false, mpg, positions, rows, 1.0f,
                                       w->data<float>() + grp * mpg * rows, rows, columns, positions,
                                       bias != nullptr ? 1.0f : 0.0f, out, positions));
      }
    }
    return Status::Ok();
  }

 private:
  ConvAttributes attrs_;
  int64_t offset_group_ = 1;
  gemm::GemmTuning gemm_;
  int64_t minimum_samples_ = 0;
};

}  // namespace

OL_REGISTER_KERNELS(deform_conv) {
  std::vector<ParamSpec> tuning = gemm::GemmTuningParams();
  tuning.push_back(
      MinimumElementsParam(16384, "bilinear samples per (image, group) below which the columns are built serially"));
  Kernel("DeformConv")
      .Versions(19, kOpenEnded)
      .Types(TypeList<float>{})
      .Tuning(std::move(tuning))
      .Factory(MakeKernel<DeformConvKernel>())
      .AddTo(registry);
}

}  // namespace conv
}  // namespace onnx_light
