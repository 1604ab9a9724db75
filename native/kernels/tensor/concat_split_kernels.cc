// Concat and Split: each output element is written once, by the participant that owns its
// contiguous destination block.
#include <numeric>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

std::vector<DataType> FloatTypesOrAllAt(int since_version) {
  if (since_version == 1) return {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  return TensorTypesAt(since_version);
}

// ------------------------------------------------------------------------------ Concat

class ConcatKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (info.opset_version() < 4) {
      OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 1));
    } else {
      OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis"));
    }
    return parallel_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(i));
      inputs.push_back(t);
    }
    if (inputs.empty()) return InvalidArgument(ctx.Where(), ": needs at least one input");
    const Tensor& first = *inputs[0];
    const int rank = first.shape().rank();
    auto axis_or = NormalizeAxis(axis_, rank);
    if (rank == 0 || !axis_or.ok()) {
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for input 0 ", first.TypeAndShape());
    }
    const int axis = *axis_or;
    std::vector<int64_t> out_dims = first.shape().dims();
    out_dims[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      bool compatible = t.dtype() == first.dtype() && t.shape().rank() == rank;
      for (int d = 0; compatible && d < rank; ++d) compatible = d == axis || t.shape().dim(d) == first.shape().dim(d);
      if (!compatible) {
        return InvalidArgument(ctx.Where(), ": input ", i, " ", t.TypeAndShape(), " does not match input 0 ",
                               first.TypeAndShape(), " outside axis ", axis);
      }
      out_dims[axis] += t.shape().dim(axis);  // bounded: each input's count already fits int64
    }
    OL_ASSIGN_OR_RETURN(Shape out_shape, Shape::Create(out_dims));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, first.dtype(), out_shape));

    const int64_t outer = out_shape.SizeTo(axis), inner = out_shape.SizeFrom(axis + 1);
    const int64_t row = out_dims[axis] * inner;  // output elements per outer index
    // prefix[i]: where input i's chunk starts within an output row.
    std::vector<int64_t> prefix(inputs.size() + 1, 0);
    for (size_t i = 0; i < inputs.size(); ++i) prefix[i + 1] = prefix[i] + inputs[i]->shape().dim(axis) * inner;
    const DataType type = first.dtype();
    const size_t size = ElementSize(type);
    return parallel_.Run(
        ctx.parallel(), "concat.elements", outer * row, 1,
        [&](int64_t begin, int64_t end) {
          int64_t r = begin / row, pos = begin % row;
          size_t i = std::upper_bound(prefix.begin(), prefix.end(), pos) - prefix.begin() - 1;
          for (int64_t at = begin; at < end;) {
            while (prefix[i + 1] <= pos) ++i;  // skips empty inputs too
            const int64_t chunk = prefix[i + 1] - prefix[i];
            const int64_t n = std::min(prefix[i + 1] - pos, end - at);
            CopyElements(type, size, inputs[i]->raw_data(), r * chunk + (pos - prefix[i]), y->raw_data(), at, n);
            at += n;
            pos += n;
            if (pos == row) {
              pos = 0;
              ++r;
              i = 0;
            }
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  int64_t axis_ = 0;
  ThresholdedParallel parallel_;
};

// ------------------------------------------------------------------------------- Split

class SplitKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset_version();
    num_outputs_ = info.num_outputs();
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    if (opset_ < 13 && info.HasAttribute("split")) {
      OL_ASSIGN_OR_RETURN(split_attribute_, info.GetInts("split"));
      have_split_attribute_ = true;
    }
    if (opset_ >= 18 && info.HasAttribute("num_outputs")) {
      OL_ASSIGN_OR_RETURN(int64_t n, info.GetInt("num_outputs"));
      if (n != num_outputs_) {
        return InvalidArgument(info.Where(), ": num_outputs ", n, " differs from the node's ", num_outputs_,
                               " outputs");
      }
      uneven_allowed_ = true;
    }
    return parallel_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& xs = x->shape();
    auto axis_or = NormalizeAxis(axis_, xs.rank());
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", x->TypeAndShape());
    const int axis = *axis_or;
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Sizes(ctx, xs.dim(axis)));

    const int64_t outer = xs.SizeTo(axis), inner = xs.SizeFrom(axis + 1), row = xs.dim(axis) * inner;
    const DataType type = x->dtype();
    const size_t size = ElementSize(type);
    int64_t offset = 0;  // where output k's chunk starts within an input row
    for (int k = 0; k < num_outputs_; ++k) {
      std::vector<int64_t> dims = xs.dims();
      dims[axis] = sizes[k];
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(k, type, Shape(std::move(dims))));
      const int64_t chunk = sizes[k] * inner;
      OL_RETURN_IF_ERROR(parallel_.Run(
          ctx.parallel(), "split.elements", outer * chunk, 1,
          [&](int64_t begin, int64_t end) {
            for (int64_t at = begin; at < end;) {
              const int64_t r = at / chunk, c = at % chunk, n = std::min(chunk - c, end - at);
              CopyElements(type, size, x->raw_data(), r * row + offset + c, y->raw_data(), at, n);
              at += n;
            }
            return Status::Ok();
          },
          SerialPayload(type)));
      offset += chunk;
    }
    return Status::Ok();
  }

 private:
  // The size of each output along the axis: from `split` (attribute or input), else equal
  // parts (from opset 18 with num_outputs, the last part may be smaller).
  StatusOr<std::vector<int64_t>> Sizes(const KernelContext& ctx, int64_t dim) const {
    std::vector<int64_t> sizes = split_attribute_;
    bool given = have_split_attribute_;
    const Tensor* split = ctx.input(1);
    if (split != nullptr && (opset_ >= 13 || !given)) {
      if (split->dtype() != DataType::kInt64 || split->shape().rank() > 1) {
        return InvalidArgument(ctx.Where(), ": split must be a 1-D int64 tensor, got ", split->TypeAndShape());
      }
      sizes.assign(split->data<int64_t>(), split->data<int64_t>() + split->num_elements());
      given = true;
    }
    if (given) {
      if (static_cast<int>(sizes.size()) != num_outputs_) {
        return InvalidArgument(ctx.Where(), ": split has ", sizes.size(), " sizes for ", num_outputs_, " outputs");
      }
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0 || s > dim - total) {
          return InvalidArgument(ctx.Where(), ": split sizes ", Shape(sizes).ToString(), " do not add up to dim ", dim);
        }
        total += s;
      }
      if (total != dim)
        return InvalidArgument(ctx.Where(), ": split sizes ", Shape(sizes).ToString(), " do not add up to dim ", dim);
      return sizes;
    }
    if (num_outputs_ < 1) return InvalidArgument(ctx.Where(), ": needs at least one output");
    if (dim % num_outputs_ != 0 && !uneven_allowed_) {
      return InvalidArgument(ctx.Where(), ": dim ", dim, " does not split evenly into ", num_outputs_, " outputs");
    }
    const int64_t part = (dim + num_outputs_ - 1) / num_outputs_;
    int64_t left = dim;
    for (int k = 0; k < num_outputs_; ++k) {
      sizes.push_back(std::min(part, left));
      left -= sizes.back();
    }
    return sizes;
  }

  int opset_ = 0;
  int num_outputs_ = 1;
  int64_t axis_ = 0;
  bool have_split_attribute_ = false;
  bool uneven_allowed_ = false;
  std::vector<int64_t> split_attribute_;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_concat_split) {
  Kernel("Concat")
      .SinceVersions({1, 4, 11, 13})
      .TypesAt(FloatTypesOrAllAt)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ConcatKernel>())
      .AddTo(registry);
  Kernel("Split")
      .SinceVersions({1, 2, 11, 13, 18})
      .TypesAt(FloatTypesOrAllAt)
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<SplitKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
