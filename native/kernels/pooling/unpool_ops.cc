// MaxUnpool: scatters each pooled value to the flat output position its MaxPool index
// names; every other output element is zero. Serial by design: indices may repeat or
// cross planes, so a split of the inputs cannot prove its writes disjoint (scatter with
// possibly conflicting writes), and a split of the outputs would rescan every index.
#include <cstring>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

class MaxUnpoolKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(kernel_, info.GetInts("kernel_shape"));
    const size_t r = kernel_.size();
    OL_ASSIGN_OR_RETURN(strides_, info.GetInts("strides", std::vector<int64_t>(r, 1)));
    OL_ASSIGN_OR_RETURN(pads_, info.GetInts("pads", std::vector<int64_t>(2 * r, 0)));
    if (r == 0 || strides_.size() != r || pads_.size() != 2 * r) {
      return InvalidArgument(info.Where(), ": kernel_shape (", r, " dims), strides (", strides_.size(), ") and pads (",
                             pads_.size(), ") do not agree");
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequiredInput(1));
    const Shape& xs = x->shape();
    const int r = static_cast<int>(kernel_.size());
    if (xs.rank() != r + 2 || indices->shape() != xs || indices->dtype() != DataType::kInt64) {
      return InvalidArgument(ctx.Where(), ": X ", x->TypeAndShape(), " must have rank ", r + 2,
                             " and I (int64) the same shape, got I ", indices->TypeAndShape());
    }
    // Indices address the default output [N, C, (in - 1) * stride - pads + kernel]; an
    // explicit output_shape places each addressed element at the same coordinates there.
    std::vector<int64_t> natural = {xs[0], xs[1]};
    for (int d = 0; d < r; ++d) natural.push_back((xs[d + 2] - 1) * strides_[d] - pads_[d] - pads_[d + r] + kernel_[d]);
    std::vector<int64_t> dims = natural;
    if (const Tensor* requested = ctx.input(2)) {
      if (requested->dtype() != DataType::kInt64 || requested->num_elements() != xs.rank()) {
        return InvalidArgument(ctx.Where(), ": output_shape must be an int64 tensor of ", xs.rank(), " values, got ",
                               requested->TypeAndShape());
      }
      dims.assign(requested->data<int64_t>(), requested->data<int64_t>() + xs.rank());
    }
    OL_ASSIGN_OR_RETURN(Shape natural_shape, Shape::Create(natural));
    OL_ASSIGN_OR_RETURN(Shape out_shape, Shape::Create(dims));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    std::memset(y->raw_data(), 0, y->byte_size());
    const size_t size = ElementSize(x->dtype());
    const int64_t limit = natural_shape.num_elements();
    const int64_t* idx = indices->data<int64_t>();
    const char* src = static_cast<const char*>(x->raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      int64_t at = idx[i];
      bool inside = at >= 0 && at < limit;
      if (inside && dims != natural) {  // re-address the coordinates in the requested shape
        int64_t rest = at, target = 0, stride = 1;
        for (int d = xs.rank() - 1; d >= 0; --d) {
          const int64_t c = rest % natural[d];
          rest /= natural[d];
          inside = inside && c < dims[d];
          target += c * stride;
          stride *= dims[d];
        }
        at = target;
      }
      if (!inside) {
        return InvalidArgument(ctx.Where(), ": index ", idx[i], " at position ", i, " is outside the output shape ",
                               natural_shape.ToString());
      }
      std::memcpy(dst + at * size, src + i * size, size);
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

OL_REGISTER_KERNELS(unpool) {
  const int spans[][2] = {{9, 10}, {11, 21}, {22, kOpenEnded}};
  for (const auto& s : spans) {
    KernelDef def;
    def.op = "MaxUnpool";
    def.since_version = s[0];
    def.end_version = s[1];
    def.family = OL_KERNEL_FAMILY;
    def.element_types = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
    if (s[0] >= 22) def.element_types.push_back(DataType::kBFloat16);
    def.factory = MakeKernel<MaxUnpoolKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace onnx_light
