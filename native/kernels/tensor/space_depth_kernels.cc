// DepthToSpace and SpaceToDepth: block rearrangements in which each output dimension's
// coordinate contributes independently to the input offset, so both run on
// CopyThroughOffsets (parallel over output rows).
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

// How channels and blocks interleave: DCR = depth-column-row (blocks outermost in the
// channel index), CRD = column-row-depth (channels outermost).
enum class BlockOrder { kDcr, kCrd };

class SpaceDepthBase : public OpKernel {
 protected:
  Status InitCommon(const KernelInfo& info, bool mode_allowed) {
    OL_ASSIGN_OR_RETURN(block_, info.GetInt("blocksize"));
    if (block_ < 1) return InvalidArgument(info.Where(), ": blocksize must be positive, got ", block_);
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "DCR"));
    if (mode != "DCR" && (mode != "CRD" || !mode_allowed)) {
      return InvalidArgument(info.Where(), ": unsupported mode '", mode, "'");
    }
    order_ = mode == "CRD" ? BlockOrder::kCrd : BlockOrder::kDcr;
    return parallel_.Init(info);
  }
  StatusOr<const Tensor*> Input4d(KernelContext& ctx) const {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->shape().rank() != 4) return InvalidArgument(ctx.Where(), ": input must be 4-D, got ", x->TypeAndShape());
    return x;
  }
  int64_t block_ = 1;
  BlockOrder order_ = BlockOrder::kDcr;
  ThresholdedParallel parallel_;
};

class DepthToSpaceKernel : public SpaceDepthBase {
 public:
  Status Init(const KernelInfo& info) { return InitCommon(info, info.opset_version() >= 11); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, Input4d(ctx));
    const Shape& s = x->shape();
    const int64_t b = block_, n = s.dim(0), c = s.dim(1), h = s.dim(2), w = s.dim(3);
    if (c % (b * b) != 0) {
      return InvalidArgument(ctx.Where(), ": channels of ", x->TypeAndShape(),
                             " are not a multiple of blocksize^2 = ", b * b);
    }
    const int64_t oc = c / (b * b);
    int64_t oh = 0, ow = 0;
    if (MultiplyOverflows(h, b, &oh) || MultiplyOverflows(w, b, &ow)) {
      return InvalidArgument(ctx.Where(), ": output of ", x->TypeAndShape(), " overflows");
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape({n, oc, oh, ow})));
    const std::vector<int64_t> st = DenseStrides(s);
    // Input channel: DCR (bh * b + bw) * oc + c_out; CRD c_out * b^2 + bh * b + bw.
    const int64_t bh_step = order_ == BlockOrder::kDcr ? b * oc : b, bw_step = order_ == BlockOrder::kDcr ? oc : 1;
    const int64_t c_step = order_ == BlockOrder::kDcr ? 1 : b * b;
    std::vector<std::vector<int64_t>> offsets(4);
    for (int64_t i = 0; i < n; ++i) offsets[0].push_back(i * st[0]);
    for (int64_t i = 0; i < oc; ++i) offsets[1].push_back(i * c_step * st[1]);
    for (int64_t i = 0; i < oh; ++i) offsets[2].push_back((i / b) * st[2] + (i % b) * bh_step * st[1]);
    for (int64_t i = 0; i < ow; ++i) offsets[3].push_back((i / b) * st[3] + (i % b) * bw_step * st[1]);
    return CopyThroughOffsets(ctx, parallel_, "depth_to_space.rows", *x, y, offsets);
  }
};

class SpaceToDepthKernel : public SpaceDepthBase {
 public:
  Status Init(const KernelInfo& info) { return InitCommon(info, info.opset_version() >= 28); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, Input4d(ctx));
    const Shape& s = x->shape();
    const int64_t b = block_, n = s.dim(0), c = s.dim(1), h = s.dim(2), w = s.dim(3);
    if (h % b != 0 || w % b != 0) {
      return InvalidArgument(ctx.Where(), ": spatial dims of ", x->TypeAndShape(), " are not multiples of blocksize ",
                             b);
    }
    int64_t oc = 0;
    if (MultiplyOverflows(c, b * b, &oc))
      return InvalidArgument(ctx.Where(), ": output of ", x->TypeAndShape(), " overflows");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape({n, oc, h / b, w / b})));
    const std::vector<int64_t> st = DenseStrides(s);
    std::vector<std::vector<int64_t>> offsets(4);
    for (int64_t i = 0; i < n; ++i) offsets[0].push_back(i * st[0]);
    for (int64_t i = 0; i < oc; ++i) {
      // Output channel: DCR (bh * b + bw) * c + c_in; CRD c_in * b^2 + bh * b + bw.
      const int64_t block = order_ == BlockOrder::kDcr ? i / c : i % (b * b);
      const int64_t channel = order_ == BlockOrder::kDcr ? i % c : i / (b * b);
      offsets[1].push_back(channel * st[1] + (block / b) * st[2] + (block % b) * st[3]);
    }
    for (int64_t i = 0; i < h / b; ++i) offsets[2].push_back(i * b * st[2]);
    for (int64_t i = 0; i < w / b; ++i) offsets[3].push_back(i * b * st[3]);
    return CopyThroughOffsets(ctx, parallel_, "space_to_depth.rows", *x, y, offsets);
  }
};

OL_REGISTER_KERNELS(tensor_space_depth) {
  auto types = [](int v) { return TensorTypesAt(v < 13 ? 11 : 13); };  // unchanged through opset 28
  Kernel("DepthToSpace")
      .SinceVersions({1, 11, 13, 28})
      .TypesAt(types)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<DepthToSpaceKernel>())
      .AddTo(registry);
  Kernel("SpaceToDepth")
      .SinceVersions({1, 13, 28})
      .TypesAt(types)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<SpaceToDepthKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
