// OneHot: each output row along the depth axis is independent; parallel over (outer, depth)
// rows of `inner` elements.
#include <cmath>
#include <cstring>

#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

std::vector<DataType> NumericTypes() {
  TensorTypeSet numeric;
  numeric.string = numeric.complex = numeric.bool_type = false;
  return TensorTypesAt(11, numeric);
}

// Element i of a numeric tensor as an integer (floats truncate; NaN and out-of-range
// floats become a value no valid depth matches).
StatusOr<int64_t> IntegerAt(const Tensor& t, int64_t i) {
  auto from_float = [](double v) -> int64_t {
    if (!(std::fabs(v) < 9.2e18)) return INT64_MIN;
    return static_cast<int64_t>(v);
  };
  switch (t.dtype()) {
    case DataType::kFloat:
      return from_float(t.data<float>()[i]);
    case DataType::kDouble:
      return from_float(t.data<double>()[i]);
    case DataType::kFloat16:
      return from_float(t.data<Float16>()[i].ToFloat());
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kInt16:
      return t.data<int16_t>()[i];
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kInt64:
      return t.data<int64_t>()[i];
    case DataType::kUint8:
      return t.data<uint8_t>()[i];
    case DataType::kUint16:
      return t.data<uint16_t>()[i];
    case DataType::kUint32:
      return t.data<uint32_t>()[i];
    case DataType::kUint64:
      return static_cast<int64_t>(std::min<uint64_t>(t.data<uint64_t>()[i], INT64_MAX));
    default:
      return InvalidArgument("unsupported numeric type ", t.TypeAndShape());
  }
}

class OneHotKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", -1));
    return parallel_.Init(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* depth_tensor, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* values, ctx.RequiredInput(2));
    if (depth_tensor->num_elements() != 1) {
      return InvalidArgument(ctx.Where(), ": depth must hold one value, got ", depth_tensor->TypeAndShape());
    }
    if (values->num_elements() != 2) {
      return InvalidArgument(ctx.Where(), ": values must be [off, on], got ", values->TypeAndShape());
    }
    auto depth_or = IntegerAt(*depth_tensor, 0);
    if (!depth_or.ok()) return depth_or.status().WithContext(ctx.Where() + ": depth: ");
    const int64_t depth = *depth_or;
    if (depth < 1) return InvalidArgument(ctx.Where(), ": depth must be positive, got ", depth);
    const Shape& is = indices->shape();
    auto axis_or = NormalizeAxis(axis_, is.rank() + 1);
    if (!axis_or.ok())
      return InvalidArgument(ctx.Where(), ": axis ", axis_, " is out of range for ", indices->TypeAndShape());
    const int axis = *axis_or;
    std::vector<int64_t> out_dims = is.dims();
    out_dims.insert(out_dims.begin() + axis, depth);
    auto out_shape = Shape::Create(out_dims);
    if (!out_shape.ok()) return out_shape.status().WithContext(ctx.Where() + ": output: ");
    // Indices as int64, wrapped from [-depth, 0) into range, before any worker starts.
    std::vector<int64_t> wrapped(indices->num_elements());
    for (int64_t i = 0; i < indices->num_elements(); ++i) {
      auto v = IntegerAt(*indices, i);
      if (!v.ok()) return v.status().WithContext(ctx.Where() + ": indices: ");
      wrapped[i] = *v < 0 && *v >= -depth ? *v + depth : *v;
    }
    ctx.RecordScratch(indices->num_elements() * static_cast<int64_t>(sizeof(int64_t)));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, values->dtype(), *out_shape));
    const int64_t outer = is.SizeTo(axis), inner = is.SizeFrom(axis);
    const DataType type = values->dtype();
    const size_t size = ElementSize(type);
    return parallel_.Run(
        ctx.parallel(), "one_hot.rows", outer * depth, inner,
        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t o = row / depth, d = row % depth;
            for (int64_t j = 0; j < inner; ++j) {
              const bool on = wrapped[o * inner + j] == d;
              CopyElements(type, size, values->raw_data(), on ? 1 : 0, y->raw_data(), row * inner + j, 1);
            }
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  int64_t axis_ = -1;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_one_hot) {
  KernelDef def;
  def.family = OL_KERNEL_FAMILY;
  def.op = "OneHot";
  def.tuning = ElementBlockTuning(262144, 65536);
  def.factory = MakeKernel<OneHotKernel>();
  AddForOpsets(registry, def, {9, 11, 28}, [](int) { return NumericTypes(); });
}

}  // namespace
}  // namespace onnx_light
