// OneHot: each output row along the depth axis is independent; parallel over (outer, depth)
// rows of `inner` elements.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"

namespace onnx_light {
namespace {

// OneHot's indices and depth types: ONNX's numeric types (as the schema lists them).
using OneHotTypes =
    TypeList<float, uint8_t, int8_t, uint16_t, int16_t, int32_t, int64_t, Float16, double, uint32_t, uint64_t>;

// The elements of a numeric tensor as integers (floats truncate; NaN and out-of-range
// floats become a value no valid depth matches).
StatusOr<std::vector<int64_t>> IntegersOf(const Tensor& t) {
  auto from_float = [](double v) -> int64_t {
    if (!(std::fabs(v) < 9.2e18)) return INT64_MIN;
    return static_cast<int64_t>(v);
  };
  std::vector<int64_t> out(t.num_elements());
  const Status read = DispatchType(OneHotTypes{}, t.dtype(), "OneHot", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* v = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16>) {
        out[i] = from_float(v[i].ToFloat());
      } else if constexpr (std::is_floating_point_v<T>) {
        out[i] = from_float(v[i]);
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        out[i] = static_cast<int64_t>(std::min<uint64_t>(v[i], INT64_MAX));
      } else {
        out[i] = v[i];
      }
    }
    return Status::Ok();
  });
  if (!read.ok() && !out.empty()) return InvalidArgument("unsupported numeric type ", t.TypeAndShape());
  return out;
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
    auto depth_or = IntegersOf(*depth_tensor);
    if (!depth_or.ok()) return depth_or.status().WithContext(ctx.Where() + ": depth: ");
    const int64_t depth = (*depth_or)[0];
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
    auto indices_or = IntegersOf(*indices);
    if (!indices_or.ok()) return indices_or.status().WithContext(ctx.Where() + ": indices: ");
    std::vector<int64_t> wrapped = std::move(*indices_or);
    for (int64_t& v : wrapped) v = v < 0 && v >= -depth ? v + depth : v;
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
  Kernel("OneHot")
      .SinceVersions({9, 11, 28})
      .Types(OneHotTypes{})
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<OneHotKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
