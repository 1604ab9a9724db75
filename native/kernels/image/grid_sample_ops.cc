// GridSample: Y[n, c, p] samples X[n, c] at the normalised location grid[n, p] (last grid
// axis ordered x, y, z..., i.e. innermost spatial axis first). Each spatial axis is
// interpolated separately with 1 (nearest), 2 (linear) or 4 (cubic, Keys a = -0.75) taps
// and the taps are combined as a tensor product. Out-of-range locations and taps follow
// padding_mode (zeros, border, reflection). Opset 16 is 2-D only with the mode names
// bilinear/bicubic; opset 20 generalised it to N-D with linear/cubic. Output points are
// independent and split across participants.
#include <algorithm>
#include <array>
#include <cmath>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

enum class Interpolation { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxSpatialRank = 8;  // keeps the per-point tap tables on the stack
constexpr int kMaxTaps = 4;

// Reflects x into [lo, hi] by folding at the nearer bound until it lands inside.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double distance = x < lo ? lo - x : x - hi;
  const double folds = std::floor(distance / range);
  const double rest = distance - folds * range;
  const bool even = std::fmod(folds, 2.0) == 0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

void CubicWeights(double t, double* w) {
  constexpr double a = -0.75;
  auto near = [](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };       // |s| <= 1
  auto far = [](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  w[0] = far(t + 1), w[1] = near(t), w[2] = near(1 - t), w[3] = far(2 - t);
}

struct AxisGeometry {
  int64_t size;
  double lo, hi;  // the valid coordinate range: [0, size-1] or [-0.5, size-0.5]
};

class GridSampleKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const bool legacy = info.opset_version() < 20;
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", legacy ? "bilinear" : "linear"));
    if (mode == "nearest")
      interpolation_ = Interpolation::kNearest;
    else if (mode == (legacy ? "bilinear" : "linear"))
      interpolation_ = Interpolation::kLinear;
    else if (mode == (legacy ? "bicubic" : "cubic"))
      interpolation_ = Interpolation::kCubic;
    else
      return InvalidArgument(info.Where(), ": unsupported mode '", mode, "'");
    OL_ASSIGN_OR_RETURN(std::string padding, info.GetString("padding_mode", "zeros"));
    if (padding == "zeros")
      padding_ = Padding::kZeros;
    else if (padding == "border")
      padding_ = Padding::kBorder;
    else if (padding == "reflection")
      padding_ = Padding::kReflection;
    else
      return InvalidArgument(info.Where(), ": unsupported padding_mode '", padding, "'");
    OL_ASSIGN_OR_RETURN(int64_t align, info.GetInt("align_corners", 0));
    align_corners_ = align != 0;
    only_2d_ = legacy;
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* grid, ctx.RequiredInput(1));
    const Shape& xs = x->shape();
    const Shape& gs = grid->shape();
    const int spatial = xs.rank() - 2;
    if (spatial < 1 || spatial > kMaxSpatialRank || (only_2d_ && spatial != 2)) {
      return InvalidArgument(ctx.Where(), ": X must be ", only_2d_ ? "4-D" : "N-D with 1..8 spatial axes", ", got ",
                             xs.ToString());
    }
    if (gs.rank() != xs.rank() || gs[0] != xs[0] || gs[gs.rank() - 1] != spatial) {
      return InvalidArgument(ctx.Where(), ": grid shape ", gs.ToString(), " does not fit X ", xs.ToString(),
                             " (expected [N, spatial..., ", spatial, "])");
    }
    std::vector<int64_t> out_dims = {xs[0], xs[1]};
    for (int d = 1; d <= spatial; ++d) out_dims.push_back(gs[d]);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    if (y->shape().num_elements() == 0) return Status::Ok();
    if (xs.SizeFrom(2) == 0) return InvalidArgument(ctx.Where(), ": X has an empty spatial axis ", xs.ToString());
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return DispatchType(FloatTypes{}, grid->dtype(), ctx.Where(), [&](auto grid_tag) {
        using G = typename decltype(grid_tag)::type;
        return Run<T, G>(ctx, *x, *grid, y);
      });
    });
  }

 private:
  // Maps a tap index onto a stored index under the padding mode; -1 = reads zero.
  int64_t ResolveTap(int64_t i, const AxisGeometry& axis) const {
    if (i >= 0 && i < axis.size) return i;
    switch (padding_) {
      case Padding::kZeros:
        return -1;
      case Padding::kBorder:
        return std::clamp<int64_t>(i, 0, axis.size - 1);
      case Padding::kReflection:
        return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), axis.lo, axis.hi)), 0,
                                   axis.size - 1);
    }
    return -1;
  }

  // Taps (stored indices, -1 for zero) and weights of one axis at normalised location g.
  int AxisTaps(double g, const AxisGeometry& axis, int64_t* index, double* weight) const {
    const double n = static_cast<double>(axis.size);
    double c = align_corners_ ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
    if (interpolation_ == Interpolation::kNearest) c = std::nearbyint(c);  // ties to even
    if (c < axis.lo || c > axis.hi) {
      if (padding_ == Padding::kBorder)
        c = std::clamp(c, 0.0, n - 1);
      else if (padding_ == Padding::kReflection)
        c = Reflect(c, axis.lo, axis.hi);
    }
    if (std::isnan(c)) c = -2;  // a NaN location reads outside every axis
    if (interpolation_ == Interpolation::kNearest) {
      index[0] = ResolveTap(static_cast<int64_t>(c), axis);
      weight[0] = 1;
      return 1;
    }
    const double base = std::floor(c);
    const double t = c - base;
    const auto b = static_cast<int64_t>(std::clamp(base, -4.0, n + 4));  // far taps all pad alike
    if (interpolation_ == Interpolation::kLinear) {
      index[0] = ResolveTap(b, axis), index[1] = ResolveTap(b + 1, axis);
      weight[0] = 1 - t, weight[1] = t;
      return 2;
    }
    for (int k = 0; k < 4; ++k) index[k] = ResolveTap(b - 1 + k, axis);
    CubicWeights(t, weight);
    return 4;
  }

  template <typename T, typename G>
  Status Run(KernelContext& ctx, const Tensor& x, const Tensor& grid, Tensor* y) {
    const Shape& xs = x.shape();
    const int spatial = xs.rank() - 2;
    const int64_t channels = xs[1];
    const int64_t plane = xs.SizeFrom(2);
    const int64_t points = grid.shape().SizeBetween(1, spatial + 1);
    std::array<AxisGeometry, kMaxSpatialRank> axes{};
    std::array<int64_t, kMaxSpatialRank> strides{};
    int64_t stride = 1;
    for (int d = spatial - 1; d >= 0; --d) {
      const double n = static_cast<double>(xs[d + 2]);
      axes[d] = align_corners_ ? AxisGeometry{xs[d + 2], 0.0, n - 1} : AxisGeometry{xs[d + 2], -0.5, n - 0.5};
      strides[d] = stride;
      stride *= xs[d + 2];
    }
    const T* xd = x.data<T>();
    const G* gd = grid.data<G>();
    T* yd = y->data<T>();
    auto sample_points = [&](int64_t begin, int64_t end) {
      int64_t index[kMaxSpatialRank][kMaxTaps];
      double weight[kMaxSpatialRank][kMaxTaps];
      int taps[kMaxSpatialRank];
      for (int64_t flat = begin; flat < end; ++flat) {
        const int64_t n = flat / points, p = flat % points;
        const G* g = gd + flat * spatial;
        // grid[..., 0] addresses the innermost spatial axis.
        for (int d = 0; d < spatial; ++d) {
          taps[d] = AxisTaps(Numeric<G>::Load(g[spatial - 1 - d]), axes[d], index[d], weight[d]);
        }
        for (int64_t c = 0; c < channels; ++c) {
          const T* src = xd + (n * channels + c) * plane;
          double sum = 0;
          int pick[kMaxSpatialRank] = {};
          while (true) {  // every combination of one tap per axis
            double w = 1;
            int64_t offset = 0;
            for (int d = 0; d < spatial && offset >= 0; ++d) {
              const int64_t i = index[d][pick[d]];
              offset = i < 0 ? -1 : offset + i * strides[d];
              w *= weight[d][pick[d]];
            }
            if (offset >= 0) sum += w * static_cast<double>(Numeric<T>::Load(src[offset]));
            int d = spatial - 1;
            while (d >= 0 && ++pick[d] == taps[d]) pick[d--] = 0;
            if (d < 0) break;
          }
          yd[(n * channels + c) * points + p] = Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(sum));
        }
      }
      return Status::Ok();
    };
    const int64_t total = xs[0] * points;
    return parallel_.Run(ctx.parallel(), "grid_sample.points", total, channels, sample_points);
  }

  Interpolation interpolation_ = Interpolation::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false, only_2d_ = false;
  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(grid_sample_family) {
  Kernel("GridSample")
      .Opsets({Since(16, TypeList<Float16, float, double>{}), Since(20, TypeList<Float16, float, double>{}),
               Since(22, TypeList<Float16, float, double, BFloat16>{})})
      .Tuning({MinimumElementsParam(16384, "output elements below which the op runs serially"),
               ParamSpec::Int64(param::kBlockElements, 8192, 1, int64_t{1} << 40,
                                "smallest parallel block, in output elements")})
      .Factory(MakeKernel<GridSampleKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
