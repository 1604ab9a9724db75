// Slice, Expand, Tile: every output element reads one input element chosen dimension by
// dimension, so all three share CopyThroughOffsets (parallel over output rows).
#include <algorithm>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"
#include "native/kernels/tensor/tensor_args.h"

namespace onnx_light {
namespace {

// ------------------------------------------------------------------------------- Slice

class SliceKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    from_attributes_ = info.opset_version() < 10;
    if (from_attributes_) {
      OL_ASSIGN_OR_RETURN(starts_, info.GetInts("starts"));
      OL_ASSIGN_OR_RETURN(ends_, info.GetInts("ends"));
      OL_ASSIGN_OR_RETURN(axes_, info.GetInts("axes", {}));
    }
    return parallel_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!from_attributes_) {
      OL_ASSIGN_OR_RETURN(const Tensor* s, ctx.RequiredInput(1));
      OL_ASSIGN_OR_RETURN(const Tensor* e, ctx.RequiredInput(2));
      OL_ASSIGN_OR_RETURN(starts, ReadIndexList(*s, ctx.Where(), "starts", true));
      OL_ASSIGN_OR_RETURN(ends, ReadIndexList(*e, ctx.Where(), "ends", true));
      if (const Tensor* a = ctx.input(3)) {
        OL_ASSIGN_OR_RETURN(axes, ReadIndexList(*a, ctx.Where(), "axes", true));
      }
      if (const Tensor* st = ctx.input(4)) {
        OL_ASSIGN_OR_RETURN(steps, ReadIndexList(*st, ctx.Where(), "steps", true));
      }
    }
    const Shape& xs = x->shape();
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
      return InvalidArgument(ctx.Where(), ": starts, ends, axes and steps must have one entry per sliced axis (",
                             starts.size(), ", ", ends.size(), ", ", axes.size(), ", ", steps.size(), ")");
    }
    OL_ASSIGN_OR_RETURN(std::vector<int> norm_axes, NormalizeAxes(axes, xs.rank(), ctx.Where()));

    // Per dim: first input coordinate, step, output length. Unsliced dims keep everything.
    std::vector<int64_t> first(xs.rank(), 0), step(xs.rank(), 1), out_dims = xs.dims();
    for (size_t i = 0; i < norm_axes.size(); ++i) {
      const int d = norm_axes[i];
      const int64_t dim = xs.dim(d), s = steps[i];
      if (s == 0) return InvalidArgument(ctx.Where(), ": step for axis ", d, " is 0");
      // ONNX: negative start/end count from the end; then clamp to [0, dim] for positive
      // steps and [-1, dim - 1] for negative ones.
      auto resolve = [dim, s](int64_t v) {
        if (v < 0) v = v < -dim ? -1 : v + dim;  // avoids overflowing INT64_MIN + dim
        return s > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
      };
      const int64_t begin = resolve(starts[i]), end = resolve(ends[i]);
      const int64_t span = s > 0 ? end - begin : begin - end;
      const int64_t magnitude = s > 0 ? s : (s == INT64_MIN ? INT64_MAX : -s);
      out_dims[d] = span <= 0 ? 0 : (span - 1) / magnitude + 1;
      first[d] = begin;
      step[d] = s;
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    const std::vector<int64_t> strides = DenseStrides(xs);
    std::vector<std::vector<int64_t>> offsets(xs.rank());
    int64_t table = 0;
    for (int d = 0; d < xs.rank(); ++d) {
      offsets[d].resize(out_dims[d]);
      for (int64_t o = 0; o < out_dims[d]; ++o) offsets[d][o] = (first[d] + o * step[d]) * strides[d];
      table += out_dims[d];
    }
    ctx.RecordScratch(table * static_cast<int64_t>(sizeof(int64_t)));
    return CopyThroughOffsets(ctx, parallel_, "slice.rows", *x, y, offsets);
  }

 private:
  bool from_attributes_ = false;
  std::vector<int64_t> starts_, ends_, axes_;
  ThresholdedParallel parallel_;
};

// ------------------------------------------------------------------------------ Expand

class ExpandKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return parallel_.Init(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* shape_tensor, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReadIndexList(*shape_tensor, ctx.Where(), "shape"));
    const Shape& xs = x->shape();
    // Bidirectional broadcast of the input shape and the requested shape.
    const int rank = std::max<int>(xs.rank(), static_cast<int>(target.size()));
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      const int xd = d - (rank - xs.rank()), td = d - (rank - static_cast<int>(target.size()));
      const int64_t a = xd >= 0 ? xs.dim(xd) : 1, b = td >= 0 ? target[td] : 1;
      if (a != b && a != 1 && b != 1) {
        return InvalidArgument(ctx.Where(), ": cannot expand ", x->TypeAndShape(), " to ", Shape(target).ToString());
      }
      out_dims[d] = a == 1 ? b : a;
    }
    auto out_shape = Shape::Create(out_dims);
    if (!out_shape.ok()) return out_shape.status().WithContext(ctx.Where() + ": expand target: ");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), *out_shape));
    // An empty output may still have huge other axes (shape [2^40, 0]): no offset tables.
    if (y->num_elements() == 0) return Status::Ok();
    const std::vector<int64_t> strides = DenseStrides(xs);
    std::vector<std::vector<int64_t>> offsets(rank);
    for (int d = 0; d < rank; ++d) {
      const int xd = d - (rank - xs.rank());
      const bool broadcast = xd < 0 || xs.dim(xd) == 1;
      offsets[d].resize(out_dims[d]);
      for (int64_t o = 0; o < out_dims[d]; ++o) offsets[d][o] = broadcast ? 0 : o * strides[xd];
    }
    return CopyThroughOffsets(ctx, parallel_, "expand.rows", *x, y, offsets);
  }

 private:
  ThresholdedParallel parallel_;
};

// -------------------------------------------------------------------------------- Tile

class TileKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    tile_one_axis_ = info.opset_version() < 6;  // Tile-1: inputs (input, tiles, axis)
    return parallel_.Init(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* second, ctx.RequiredInput(1));
    const Shape& xs = x->shape();
    std::vector<int64_t> repeats;
    if (tile_one_axis_) {
      OL_ASSIGN_OR_RETURN(const Tensor* axis_tensor, ctx.RequiredInput(2));
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, ReadIndexList(*second, ctx.Where(), "tiles"));
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ReadIndexList(*axis_tensor, ctx.Where(), "axis"));
      if (tiles.size() != 1 || axis.size() != 1)
        return InvalidArgument(ctx.Where(), ": tiles and axis must be scalars");
      OL_ASSIGN_OR_RETURN(std::vector<int> a, NormalizeAxes(axis, xs.rank(), ctx.Where()));
      repeats.assign(xs.rank(), 1);
      repeats[a[0]] = tiles[0];
    } else {
      OL_ASSIGN_OR_RETURN(repeats, ReadIndexList(*second, ctx.Where(), "repeats"));
    }
    if (static_cast<int>(repeats.size()) != xs.rank()) {
      return InvalidArgument(ctx.Where(), ": repeats ", Shape(repeats).ToString(), " must have one entry per dim of ",
                             x->TypeAndShape());
    }
    std::vector<int64_t> out_dims(xs.rank());
    for (int d = 0; d < xs.rank(); ++d) {
      if (repeats[d] < 0)
        return InvalidArgument(ctx.Where(), ": repeats ", Shape(repeats).ToString(), " has a negative entry");
      if (MultiplyOverflows(xs.dim(d), repeats[d], &out_dims[d])) {
        return InvalidArgument(ctx.Where(), ": tiling ", x->TypeAndShape(), " by ", Shape(repeats).ToString(),
                               " overflows");
      }
    }
    auto out_shape = Shape::Create(out_dims);
    if (!out_shape.ok()) return out_shape.status().WithContext(ctx.Where() + ": tiled shape: ");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), *out_shape));
    // An empty output may still have huge other axes (shape [2^40, 0]): no offset tables.
    if (y->num_elements() == 0) return Status::Ok();
    const std::vector<int64_t> strides = DenseStrides(xs);
    std::vector<std::vector<int64_t>> offsets(xs.rank());
    for (int d = 0; d < xs.rank(); ++d) {
      offsets[d].resize(out_dims[d]);
      for (int64_t o = 0; o < out_dims[d]; ++o) offsets[d][o] = (o % xs.dim(d)) * strides[d];
    }
    return CopyThroughOffsets(ctx, parallel_, "tile.rows", *x, y, offsets);
  }

 private:
  bool tile_one_axis_ = false;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_slice_expand_tile) {
  auto all = [](int v) { return TensorTypesAt(v); };
  Kernel("Slice")
      .SinceVersions({1, 10, 11, 13})
      .TypesAt(all)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<SliceKernel>())
      .AddTo(registry);
  Kernel("Expand")
      .SinceVersions({8, 13})
      .TypesAt(all)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ExpandKernel>())
      .AddTo(registry);
  Kernel("Tile")
      .SinceVersions({1, 6, 13})
      .TypesAt([](int v) {
        if (v == 1) return std::vector<DataType>{DataType::kFloat, DataType::kDouble, DataType::kFloat16};
        return TensorTypesAt(v);
      })
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<TileKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
