// Pad in every mode (constant, reflect, edge, wrap): each output coordinate maps to an input
// coordinate dimension by dimension (or to the constant), so it runs on CopyThroughOffsets.
#include <cstring>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"
#include "native/kernels/tensor/tensor_args.h"

namespace onnx_light {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// The input coordinate output coordinate o reads, for input size `dim` and `before` leading
// pads; -1 for the constant. Reflection repeats for pads longer than the axis (as numpy).
int64_t SourceCoordinate(int64_t o, int64_t before, int64_t dim, PadMode mode) {
  const int64_t i = o - before;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : dim - 1;
    case PadMode::kWrap:
      return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

class PadKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset_version();
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "constant"));
    if (mode == "constant")
      mode_ = PadMode::kConstant;
    else if (mode == "reflect")
      mode_ = PadMode::kReflect;
    else if (mode == "edge")
      mode_ = PadMode::kEdge;
    else if (mode == "wrap" && opset_ >= 19)
      mode_ = PadMode::kWrap;
    else
      return InvalidArgument(info.Where(), ": unsupported mode '", mode, "'");
    if (opset_ < 11) {
      OL_ASSIGN_OR_RETURN(pads_attribute_, info.GetInts(opset_ < 2 ? "paddings" : "pads"));
      OL_ASSIGN_OR_RETURN(value_attribute_, info.GetFloat("value", 0.0f));
    }
    return parallel_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& xs = x->shape();
    const int rank = xs.rank();
    std::vector<int64_t> pads = pads_attribute_;
    std::vector<int64_t> axes;
    if (opset_ >= 11) {
      OL_ASSIGN_OR_RETURN(const Tensor* p, ctx.RequiredInput(1));
      OL_ASSIGN_OR_RETURN(pads, ReadIndexList(*p, ctx.Where(), "pads"));
      if (const Tensor* a = ctx.input(3)) {
        OL_ASSIGN_OR_RETURN(axes, ReadIndexList(*a, ctx.Where(), "axes", true));
      }
    }
    if (axes.empty()) {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size()) {
      return InvalidArgument(ctx.Where(), ": pads ", Shape(pads).ToString(), " need 2 entries per padded axis of ",
                             x->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(std::vector<int> norm_axes, NormalizeAxes(axes, rank, ctx.Where()));
    std::vector<int64_t> before(rank, 0), out_dims = xs.dims();
    for (size_t k = 0; k < norm_axes.size(); ++k) {
      const int d = norm_axes[k];
      const int64_t b = pads[k], e = pads[k + norm_axes.size()];
      before[d] = b;
      int64_t grown = 0;
      if (__builtin_add_overflow(xs.dim(d), b, &grown) || __builtin_add_overflow(grown, e, &out_dims[d]) ||
          out_dims[d] < 0) {
        return InvalidArgument(ctx.Where(), ": pads ", Shape(pads).ToString(), " do not fit ", x->TypeAndShape());
      }
      if (xs.dim(d) == 0 && out_dims[d] > 0 && mode_ != PadMode::kConstant) {
        return InvalidArgument(ctx.Where(), ": cannot pad empty axis ", d, " of ", x->TypeAndShape(), " in this mode");
      }
    }
    auto out_shape = Shape::Create(out_dims);
    if (!out_shape.ok()) return out_shape.status().WithContext(ctx.Where() + ": padded shape: ");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), *out_shape));
    OL_ASSIGN_OR_RETURN(Tensor fill, FillValue(ctx, *x));

    const std::vector<int64_t> strides = DenseStrides(xs);
    std::vector<std::vector<int64_t>> offsets(rank);
    for (int d = 0; d < rank; ++d) {
      offsets[d].resize(out_dims[d]);
      for (int64_t o = 0; o < out_dims[d]; ++o) {
        const int64_t i = SourceCoordinate(o, before[d], xs.dim(d), mode_);
        offsets[d][o] = i < 0 ? kFillOffset : i * strides[d];
      }
    }
    return CopyThroughOffsets(ctx, parallel_, "pad.rows", *x, y, offsets, fill.raw_data());
  }

 private:
  // One element of the input's type: constant_value (opset 11+), the `value` attribute
  // (earlier opsets, float types only) or zero.
  StatusOr<Tensor> FillValue(const KernelContext& ctx, const Tensor& x) const {
    OL_ASSIGN_OR_RETURN(Tensor fill, Tensor::Allocate(x.dtype(), Shape(), ctx.allocator(), /*zero=*/true));
    const Tensor* c = opset_ >= 11 ? ctx.input(2) : nullptr;
    if (c != nullptr && c->num_elements() > 0) {
      if (c->dtype() != x.dtype() || c->num_elements() != 1) {
        return InvalidArgument(ctx.Where(), ": constant_value must be one ", DataTypeName(x.dtype()), ", got ",
                               c->TypeAndShape());
      }
      if (x.dtype() == DataType::kString) {
        *fill.data<std::string>() = *c->data<std::string>();
      } else {
        std::memcpy(fill.raw_data(), c->raw_data(), ElementSize(x.dtype()));
      }
    } else if (opset_ < 11) {
      // Pad-1/2's float `value` attribute, in the input's type (float, double or float16).
      OL_RETURN_IF_ERROR(DispatchType(Floats{}, x.dtype(), ctx.Where(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, Float16>) {
          *fill.data<T>() = Float16::FromFloat(value_attribute_);
        } else {
          *fill.data<T>() = value_attribute_;
        }
        return Status::Ok();
      }));
    }
    return fill;
  }

  int opset_ = 0;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attribute_;
  float value_attribute_ = 0;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_pad) {
  Kernel("Pad")
      .SinceVersions({1, 2, 11, 13, 18, 19, 21, 23, 24, 25})
      .TypesAt([](int v) {
        if (v < 11) return DataTypesOf(Floats{});  // the `value` attribute path
        if (v == 11) {
          TensorTypeSet numeric;
          numeric.string = numeric.complex = numeric.bool_type = false;
          return TensorTypesAt(v, numeric);
        }
        return TensorTypesAt(v < 21 ? 13 : v);  // Pad-18/19 kept Pad-13's list (no float8)
      })
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<PadKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
