// ai.onnx_light ReorderInput and ReorderOutput (since 1, float): NCHW <-> the blocked layout
// of README.md. ReorderInput: X [N, C, H, W] -> [N, CeilDiv(C, 16), H, W, 16], pad lanes
// +0.0f; ReorderOutput: X [N, Cb, H, W, 16] and attribute `channels` ((Cb - 1) * 16 <
// channels <= Cb * 16) -> [N, channels, H, W]. Memory-bound transposes (reorder.h's rows on
// this CPU's widest lanes), split over rows (image, block, output row) with
// ThresholdedParallel: parallel.minimum_elements over the tensor's blocked elements,
// parallel.block_elements a block. A run of rows of one (image, block) is one contiguous
// stretch of positions in both layouts: it goes to one row call. Moves only: the result does
// not depend on the ISA or the participant count.
#include <algorithm>
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/nchwc/reorder.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// 2^16 blocked elements: 256 KiB moved, about 10 us at memory speed on one core.
constexpr int64_t kMinimumElements = int64_t{1} << 16;
constexpr int64_t kBlockElements = int64_t{1} << 14;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rows [begin, end) of (image, block, h) units, `height` per (image, block): calls
// fn(image_block, first_position, positions) once per run of rows in one (image, block).
template <typename Fn>
void ForEachRun(int64_t begin, int64_t end, int64_t height, int64_t width, Fn&& fn) {
  while (begin < end) {
    const int64_t image_block = begin / height, h = begin % height;
    const int64_t rows = std::min(end - begin, height - h);
    fn(image_block, h * width, rows * width);
    begin += rows;
  }
}

class ReorderInputKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return parallel_.Init(info); }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& xs = x->shape();
    if (xs.rank() != 4) {
      return InvalidArgument(ctx.Where(), ": X must be [N, C, H, W] (rank 4), got ", x->TypeAndShape());
    }
    const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3];
    const int64_t blocks = CeilDiv(channels, nchwc::kBlock), plane = height * width;
    OL_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.AllocateOutput(0, DataType::kFloat, Shape{batch, blocks, height, width, nchwc::kBlock}));
    const float* xd = x->data<float>();
    float* yd = y->data<float>();
    const nchwc::ReorderRows& rows = nchwc::BestReorderRows();
    return parallel_.Run(ctx.parallel(), "nchwc.reorder_input", batch * blocks * height, width * nchwc::kBlock,
                         [&](int64_t begin, int64_t end) {
                           ForEachRun(begin, end, height, width, [&](int64_t ib, int64_t p0, int64_t count) {
                             const int64_t n = ib / blocks, cb = ib % blocks, c0 = cb * nchwc::kBlock;
                             const int lanes = static_cast<int>(std::min<int64_t>(nchwc::kBlock, channels - c0));
                             rows.to_blocked(xd + (n * channels + c0) * plane + p0, plane, lanes, count,
                                             yd + (ib * plane + p0) * nchwc::kBlock);
                           });
                         });
  }

 private:
  ThresholdedParallel parallel_;
};

class ReorderOutputKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    if (!info.HasAttribute("channels")) {
      return InvalidArgument(info.Where(), ": attribute 'channels' (the real channel count) is required");
    }
    OL_ASSIGN_OR_RETURN(channels_, info.GetInt("channels"));
    if (channels_ <= 0)
      return InvalidArgument(info.Where(), ": attribute 'channels' must be positive, got ", channels_);
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& xs = x->shape();
    if (xs.rank() != 5 || xs[4] != nchwc::kBlock) {
      return InvalidArgument(ctx.Where(), ": X must be blocked [N, Cb, H, W, 16] (rank 5), got ", x->TypeAndShape());
    }
    const int64_t batch = xs[0], blocks = xs[1], height = xs[2], width = xs[3], plane = height * width;
    if (blocks != CeilDiv(channels_, nchwc::kBlock)) {
      return InvalidArgument(ctx.Where(), ": X ", x->TypeAndShape(), " has ", blocks, " blocks of 16 channels, but ",
                             "channels = ", channels_, " needs ", CeilDiv(channels_, nchwc::kBlock));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape{batch, channels_, height, width}));
    const float* xd = x->data<float>();
    float* yd = y->data<float>();
    const nchwc::ReorderRows& rows = nchwc::BestReorderRows();
    return parallel_.Run(ctx.parallel(), "nchwc.reorder_output", batch * blocks * height, width * nchwc::kBlock,
                         [&](int64_t begin, int64_t end) {
                           ForEachRun(begin, end, height, width, [&](int64_t ib, int64_t p0, int64_t count) {
                             const int64_t n = ib / blocks, cb = ib % blocks, c0 = cb * nchwc::kBlock;
                             const int lanes = static_cast<int>(std::min<int64_t>(nchwc::kBlock, channels_ - c0));
                             rows.from_blocked(xd + (ib * plane + p0) * nchwc::kBlock, lanes, count,
                                               yd + (n * channels_ + c0) * plane + p0, plane);
                           });
                         });
  }

 private:
  ThresholdedParallel parallel_;
  int64_t channels_ = 0;
};

std::vector<ParamSpec> ReorderTuning() {
  return {MinimumElementsParam(kMinimumElements, "blocked elements below which the reorder runs serially"),
          ParamSpec::Int64(param::kBlockElements, kBlockElements, 16, int64_t{1} << 30,
                           "blocked elements per block; a block holds max(1, this / (W x 16)) rows")};
}

OL_REGISTER_KERNELS(nchwc_reorder_ops) {
  Kernel("ReorderInput")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(ReorderTuning())
      .Factory(MakeKernel<ReorderInputKernel>())
      .AddTo(registry);
  Kernel("ReorderOutput")
      .Domain("ai.onnx_light")
      .SinceVersions({1})
      .Types(TypeList<float>{})
      .Tuning(ReorderTuning())
      .Factory(MakeKernel<ReorderOutputKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
