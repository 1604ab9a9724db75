// Metadata-only ops: they read or rename a shape and never touch the payload, so outputs
// alias their input buffer (Tensor::Reshaped) and nothing here runs in parallel.
#include <algorithm>

#include "native/kernels/tensor/onnx_types.h"
#include "native/kernels/tensor/tensor_args.h"

namespace onnx_light {
namespace {

// Opset 1 versions of Reshape, Flatten, Constant (and Concat) only took float types.
std::vector<DataType> FloatTypesOrAllAt(int since_version) {
  if (since_version == 1) return {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  return TensorTypesAt(since_version);
}

Status SetView(KernelContext& ctx, const Tensor& x, std::vector<int64_t> dims) {
  OL_ASSIGN_OR_RETURN(Shape shape, Shape::Create(std::move(dims)));
  auto view = x.Reshaped(std::move(shape));
  if (!view.ok()) return view.status().WithContext(StrCat(ctx.Where(), ": "));
  return ctx.SetOutput(0, Value(std::move(view).value()));
}

StatusOr<Tensor*> AllocateInt64(KernelContext& ctx, Shape shape) {
  return ctx.AllocateOutput(0, DataType::kInt64, std::move(shape));
}

// ------------------------------------------------------------------------------- Shape

class ShapeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(start_, info.GetInt("start", 0));
    OL_ASSIGN_OR_RETURN(end_, info.GetInt("end", INT64_MAX));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int64_t rank = x->shape().rank();
    // start/end clamp to [0, rank] after adding rank to negative values (ONNX Shape-15).
    auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const int64_t begin = clamp(start_);
    const int64_t end = std::max(begin, clamp(end_));
    OL_ASSIGN_OR_RETURN(Tensor * y, AllocateInt64(ctx, Shape({end - begin})));
    for (int64_t i = begin; i < end; ++i) y->data<int64_t>()[i - begin] = x->shape().dim(static_cast<int>(i));
    return Status::Ok();
  }

 private:
  int64_t start_ = 0, end_ = INT64_MAX;
};

class SizeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(Tensor * y, AllocateInt64(ctx, Shape()));
    *y->data<int64_t>() = x->num_elements();
    return Status::Ok();
  }
};

// ----------------------------------------------------------------------------- Reshape

class ReshapeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(allow_zero_, info.GetInt("allowzero", 0));
    if (info.opset_version() < 5) {
      OL_ASSIGN_OR_RETURN(shape_attribute_, info.GetInts("shape"));
      from_attribute_ = true;
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    std::vector<int64_t> requested = shape_attribute_;
    if (!from_attribute_) {
      OL_ASSIGN_OR_RETURN(const Tensor* shape, ctx.RequiredInput(1));
      if (shape->shape().rank() != 1) {
        return InvalidArgument(ctx.Where(), ": shape must be a 1-D tensor, got ", shape->TypeAndShape());
      }
      OL_ASSIGN_OR_RETURN(requested, ReadIndexList(*shape, ctx.Where(), "shape"));
    }
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Resolve(ctx.Where(), x->shape(), requested));
    return SetView(ctx, *x, std::move(dims));
  }

 private:
  // Applies 0 (copy the input dim, unless allowzero) and -1 (infer) to `requested`.
  StatusOr<std::vector<int64_t>> Resolve(const std::string& where, const Shape& in,
                                         const std::vector<int64_t>& requested) const {
    std::vector<int64_t> dims = requested;
    int infer = -1;
    bool has_zero = false;
    int64_t known = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1) {
        if (infer >= 0) return InvalidArgument(where, ": shape ", Shape(requested).ToString(), " has more than one -1");
        infer = static_cast<int>(i);
        continue;
      }
      if (dims[i] < -1)
        return InvalidArgument(where, ": shape ", Shape(requested).ToString(), " has negative dim ", dims[i]);
      if (dims[i] == 0 && !allow_zero_) {
        if (static_cast<int>(i) >= in.rank()) {
          return InvalidArgument(where, ": shape ", Shape(requested).ToString(), " copies dim ", i, " (0) but input ",
                                 in.ToString(), " has rank ", in.rank());
        }
        dims[i] = in.dim(static_cast<int>(i));
      }
      has_zero = has_zero || dims[i] == 0;
      if (MultiplyOverflows(known, dims[i], &known)) {
        return InvalidArgument(where, ": shape ", Shape(requested).ToString(), " overflows int64 elements");
      }
    }
    const int64_t total = in.num_elements();
    if (infer >= 0) {
      if (has_zero) {
        if (allow_zero_)
          return InvalidArgument(where, ": allowzero shape ", Shape(requested).ToString(), " has both 0 and -1");
        if (total != 0)
          return InvalidArgument(where, ": cannot infer -1 in ", Shape(requested).ToString(), " for input ",
                                 in.ToString());
        dims[infer] = 0;
      } else {
        if (total % known != 0) {
          return InvalidArgument(where, ": cannot reshape ", in.ToString(), " to ", Shape(requested).ToString());
        }
        dims[infer] = total / known;
      }
    } else if (known != total) {
      return InvalidArgument(where, ": cannot reshape ", in.ToString(), " (", total, " elements) to ",
                             Shape(requested).ToString(), " (", known, " elements)");
    }
    return dims;
  }

  int64_t allow_zero_ = 0;
  bool from_attribute_ = false;
  std::vector<int64_t> shape_attribute_;
};

// ----------------------------------------------------------------------------- Flatten

class FlattenKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 1));
    negative_allowed_ = info.opset_version() >= 11;
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int rank = x->shape().rank();
    int64_t axis = axis_ < 0 && negative_allowed_ ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank) {
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for input ", x->TypeAndShape());
    }
    const int a = static_cast<int>(axis);
    return SetView(ctx, *x, {x->shape().SizeTo(a), x->shape().SizeFrom(a)});
  }

 private:
  int64_t axis_ = 1;
  bool negative_allowed_ = true;
};

// -------------------------------------------------------------------- Squeeze/Unsqueeze

// Axes come from the attribute before opset 13 and from input 1 after.
class AxesFromAttributeOrInput {
 protected:
  Status InitAxes(const KernelInfo& info) {
    from_input_ = info.opset_version() >= 13;
    if (!from_input_ && info.HasAttribute("axes")) {
      OL_ASSIGN_OR_RETURN(attribute_axes_, info.GetInts("axes"));
      have_axes_ = true;
    }
    return Status::Ok();
  }
  // False in *present when no axes were given.
  StatusOr<std::vector<int64_t>> Axes(const KernelContext& ctx, bool* present) const {
    if (!from_input_) {
      *present = have_axes_;
      return attribute_axes_;
    }
    const Tensor* axes = ctx.input(1);
    *present = axes != nullptr;
    if (axes == nullptr) return std::vector<int64_t>{};
    return ReadIndexList(*axes, ctx.Where(), "axes");
  }

 private:
  bool from_input_ = true;
  bool have_axes_ = false;
  std::vector<int64_t> attribute_axes_;
};

class SqueezeKernel : public OpKernel, AxesFromAttributeOrInput {
 public:
  Status Init(const KernelInfo& info) { return InitAxes(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& in = x->shape();
    bool present = false;
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> raw_axes, Axes(ctx, &present));
    std::vector<bool> drop(in.rank(), false);
    if (present) {
      OL_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxes(raw_axes, in.rank(), ctx.Where()));
      for (int a : axes) {
        if (in.dim(a) != 1) {
          return InvalidArgument(ctx.Where(), ": cannot squeeze axis ", a, " of size ", in.dim(a), " in ",
                                 x->TypeAndShape());
        }
        drop[a] = true;
      }
    } else {
      for (int a = 0; a < in.rank(); ++a) drop[a] = in.dim(a) == 1;
    }
    std::vector<int64_t> dims;
    for (int a = 0; a < in.rank(); ++a) {
      if (!drop[a]) dims.push_back(in.dim(a));
    }
    return SetView(ctx, *x, std::move(dims));
  }
};

class UnsqueezeKernel : public OpKernel, AxesFromAttributeOrInput {
 public:
  Status Init(const KernelInfo& info) { return InitAxes(info); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    bool present = false;
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> raw_axes, Axes(ctx, &present));
    if (!present) return InvalidArgument(ctx.Where(), ": axes are required");
    const int out_rank = x->shape().rank() + static_cast<int>(raw_axes.size());
    OL_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxes(raw_axes, out_rank, ctx.Where()));
    std::vector<int64_t> dims(out_rank, 1);
    std::vector<bool> inserted(out_rank, false);
    for (int a : axes) inserted[a] = true;
    int next = 0;
    for (int a = 0; a < out_rank; ++a) {
      if (!inserted[a]) dims[a] = x->shape().dim(next++);
    }
    return SetView(ctx, *x, std::move(dims));
  }
};

// ---------------------------------------------------------------------- Identity, Constant

// Passes any value through: tensors, sequences and optionals (opset 14/16+).
class IdentityKernel : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    const Value* v = ctx.input_value(0);
    if (v == nullptr) return InvalidArgument(ctx.Where(), ": input 0 is required but absent");
    return ctx.SetOutput(0, *v);
  }
};

// The tensor is built once, in Init; every run hands out the same buffer.
class ConstantKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    int given = 0;
    for (const auto& [name, attribute] : info.attributes()) {
      if (name.rfind("value", 0) == 0 || name == "sparse_value") ++given;
    }
    if (given != 1) {
      return InvalidArgument(info.Where(), ": exactly one of value, sparse_value, value_* must be set, got ", given);
    }
    if (info.HasAttribute("sparse_value")) return NotImplemented(info.Where(), ": sparse_value is not supported");
    if (info.HasAttribute("value")) {
      OL_ASSIGN_OR_RETURN(value_, info.GetTensor("value"));
    } else if (info.HasAttribute("value_float")) {
      OL_ASSIGN_OR_RETURN(float f, info.GetFloat("value_float"));
      OL_ASSIGN_OR_RETURN(value_, Filled<float>(Shape(), {f}));
    } else if (info.HasAttribute("value_floats")) {
      OL_ASSIGN_OR_RETURN(std::vector<float> f, info.GetFloats("value_floats"));
      OL_ASSIGN_OR_RETURN(value_, Filled<float>(Shape({static_cast<int64_t>(f.size())}), f));
    } else if (info.HasAttribute("value_int")) {
      OL_ASSIGN_OR_RETURN(int64_t i, info.GetInt("value_int"));
      OL_ASSIGN_OR_RETURN(value_, Filled<int64_t>(Shape(), {i}));
    } else if (info.HasAttribute("value_ints")) {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> i, info.GetInts("value_ints"));
      OL_ASSIGN_OR_RETURN(value_, Filled<int64_t>(Shape({static_cast<int64_t>(i.size())}), i));
    } else if (info.HasAttribute("value_string")) {
      OL_ASSIGN_OR_RETURN(std::string s, info.GetString("value_string"));
      OL_ASSIGN_OR_RETURN(value_, Filled<std::string>(Shape(), {s}));
    } else {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> s, info.GetStrings("value_strings"));
      OL_ASSIGN_OR_RETURN(value_, Filled<std::string>(Shape({static_cast<int64_t>(s.size())}), s));
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override { return ctx.SetOutput(0, Value(value_)); }

 private:
  template <typename T>
  static StatusOr<Tensor> Filled(Shape shape, const std::vector<T>& values) {
    OL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(kDataTypeOf<T>, std::move(shape), Allocator::Default()));
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }
  Tensor value_;
};

OL_REGISTER_KERNELS(tensor_shape_metadata) {
  KernelDef def;
  def.family = OL_KERNEL_FAMILY;
  auto add = [&](const char* op, KernelFactory factory, std::initializer_list<int> versions,
                 std::vector<DataType> (*types)(int)) {
    def.op = op;
    def.factory = std::move(factory);
    def.dispatch_input = types == nullptr ? -1 : 0;
    AddForOpsets(registry, def, versions,
                 types == nullptr ? nullptr : std::function<std::vector<DataType>(int)>(types));
  };
  auto all = [](int v) { return TensorTypesAt(v); };
  add("Shape", MakeKernel<ShapeKernel>(), {1, 13, 15, 19, 21, 23, 24, 25}, all);
  add("Size", MakeKernel<SizeKernel>(), {1, 13, 19, 21, 23, 24, 25}, all);
  add("Reshape", MakeKernel<ReshapeKernel>(), {1, 5, 13, 14, 19, 21, 23, 24, 25}, FloatTypesOrAllAt);
  add("Flatten", MakeKernel<FlattenKernel>(), {1, 9, 11, 13, 21, 23, 24, 25}, FloatTypesOrAllAt);
  add("Squeeze", MakeKernel<SqueezeKernel>(), {1, 11, 13, 21, 23, 24, 25}, all);
  add("Unsqueeze", MakeKernel<UnsqueezeKernel>(), {1, 11, 13, 21, 23, 24, 25}, all);
  add("Identity", MakeKernel<IdentityKernel>(), {1, 13, 14, 16, 19, 21, 23, 24, 25}, all);
  add("Constant", MakeKernel<ConstantKernel>(), {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, nullptr);
}

}  // namespace
}  // namespace onnx_light
