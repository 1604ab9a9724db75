// AffineGrid: the sampling grid GridSample consumes. For size [N, C, (D,) H, W] each output
// point holds theta[n] @ (x, y, (z,) 1), where x, y, z are the normalised [-1, 1] centres
// (align_corners = 0) or corners (align_corners = 1) of the W, H, D positions. Points are
// independent and split across participants.
#include <algorithm>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// The normalised coordinate of position i among n.
double BaseCoordinate(int64_t i, int64_t n, bool align_corners) {
  if (align_corners) return n > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1.0;
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
}

class AffineGridKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t align, info.GetInt("align_corners", 0));
    align_corners_ = align != 0;
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* theta, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* size, ctx.RequiredInput(1));
    if (size->dtype() != DataType::kInt64 || size->shape().rank() != 1 ||
        (size->shape()[0] != 4 && size->shape()[0] != 5)) {
      return InvalidArgument(ctx.Where(), ": size must be int64 [4] or [5], got ", DataTypeName(size->dtype()), " ",
                             size->shape().ToString());
    }
    const int64_t* sz = size->data<int64_t>();
    const int spatial = static_cast<int>(size->shape()[0]) - 2;
    const Shape& ts = theta->shape();
    if (ts != Shape{sz[0], spatial, spatial + 1}) {
      return InvalidArgument(ctx.Where(), ": theta ", ts.ToString(), " must be [N, ", spatial, ", ", spatial + 1,
                             "] for size of length ", spatial + 2);
    }
    std::vector<int64_t> out_dims = {sz[0]};
    for (int d = 0; d < spatial; ++d) {
      if (sz[d + 2] < 0) return InvalidArgument(ctx.Where(), ": negative size ", sz[d + 2]);
      out_dims.push_back(sz[d + 2]);
    }
    out_dims.push_back(spatial);
    OL_ASSIGN_OR_RETURN(Tensor * grid, ctx.AllocateOutput(0, theta->dtype(), Shape(out_dims)));
    if (grid->shape().num_elements() == 0) return Status::Ok();
    const int64_t points = grid->shape().SizeBetween(1, spatial + 1);
    return DispatchType(FloatTypes{}, theta->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using N = Numeric<T>;
      const T* th = theta->data<T>();
      T* out = grid->data<T>();
      auto fill = [&](int64_t begin, int64_t end) {
        for (int64_t flat = begin; flat < end; ++flat) {
          const int64_t n = flat / points;
          double base[4] = {0, 0, 0, 1};  // (x, y, z), innermost axis first, then 1
          for (int64_t d = spatial - 1, rest = flat % points; d >= 0; --d) {
            const int64_t extent = sz[d + 2];
            base[spatial - 1 - d] = BaseCoordinate(rest % extent, extent, align_corners_);
            rest /= extent;
          }
          base[spatial] = 1;
          const T* m = th + n * spatial * (spatial + 1);
          for (int r = 0; r < spatial; ++r) {
            double v = 0;
            for (int k = 0; k <= spatial; ++k) v += static_cast<double>(N::Load(m[r * (spatial + 1) + k])) * base[k];
            out[flat * spatial + r] = N::Store(static_cast<typename N::Acc>(v));
          }
        }
        return Status::Ok();
      };
      const int64_t total = sz[0] * points;
      return parallel_.Run(ctx.parallel(), "affine_grid.points", total, spatial, fill);
    });
  }

 private:
  bool align_corners_ = false;
  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(affine_grid_family) {
  Kernel("AffineGrid")
      .Versions(20, kOpenEnded)
      .Types({DataType::kFloat16, DataType::kFloat, DataType::kDouble, DataType::kBFloat16})
      .Tuning({MinimumElementsParam(16384, "output elements below which the op runs serially"),
               ParamSpec::Int64(param::kBlockElements, 8192, 1, int64_t{1} << 40,
                                "smallest parallel block, in output elements")})
      .Factory(MakeKernel<AffineGridKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
