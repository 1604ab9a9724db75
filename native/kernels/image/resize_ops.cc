// Resize (opsets 11-19). Each resized axis maps an output index to a source coordinate
// (coordinate_transformation_mode) and from it to 1 (nearest), 2 (linear) or 4 (cubic) taps
// around ceil(x)-1 and their weights; with antialias a downscaling linear/cubic filter is
// stretched by 1/scale (more taps, normalised). The output is the tensor product over
// axes, reading clamped (edge) indices. The per-axis tap tables are
// built once before launch; output elements are independent and split across participants.
#include <algorithm>
#include <cmath>

#include "native/core/allocator.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

constexpr int kMaxRank = 8;

enum class Mode { kNearest, kLinear, kCubic };

struct AxisTable {  // per output index: taps, clamped source indices, weights, extrapolate
  int taps = 1;
  const int64_t* index = nullptr;
  const double* weight = nullptr;
  const uint8_t* outside = nullptr;
};

class ResizeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string& where = info.Where();
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "nearest"));
    if (mode == "nearest") mode_ = Mode::kNearest;
    else if (mode == "linear") mode_ = Mode::kLinear;
    else if (mode == "cubic") mode_ = Mode::kCubic;
    else return InvalidArgument(where, ": unsupported mode '", mode, "'");
    OL_ASSIGN_OR_RETURN(transform_, info.GetString("coordinate_transformation_mode", "half_pixel"));
    OL_ASSIGN_OR_RETURN(nearest_mode_, info.GetString("nearest_mode", "round_prefer_floor"));
    OL_ASSIGN_OR_RETURN(float a, info.GetFloat("cubic_coeff_a", -0.75f));
    cubic_a_ = a;
    OL_ASSIGN_OR_RETURN(int64_t exclude, info.GetInt("exclude_outside", 0));
    exclude_outside_ = exclude != 0;
    OL_ASSIGN_OR_RETURN(float extrapolation, info.GetFloat("extrapolation_value", 0.f));
    extrapolation_ = extrapolation;
    OL_ASSIGN_OR_RETURN(int64_t antialias, info.GetInt("antialias", 0));
    antialias_ = antialias != 0;
    if (antialias_ && mode_ == Mode::kNearest) return InvalidArgument(where, ": antialias needs mode linear or cubic");
    OL_ASSIGN_OR_RETURN(aspect_policy_, info.GetString("keep_aspect_ratio_policy", "stretch"));
    has_axes_ = info.HasAttribute("axes");
    if (has_axes_) {
      OL_ASSIGN_OR_RETURN(axes_, info.GetInts("axes"));
    }
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64("parallel.minimum_elements"));
    OL_ASSIGN_OR_RETURN(grain_elements_, info.tuning().Int64("parallel.grain_elements"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& in = x->shape();
    const int rank = in.rank();
    if (rank < 1 || rank > kMaxRank) return InvalidArgument(ctx.Where(), ": unsupported input rank ", in.ToString());
    std::vector<int> axes;
    if (has_axes_) {
      for (int64_t a : axes_) {
        OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(a, in, ctx.Where()));
        axes.push_back(axis);
      }
    } else {
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    }
    std::vector<double> scale(rank, 1.0), roi_start(rank, 0.0), roi_end(rank, 1.0);
    std::vector<int64_t> out_dims = in.dims();
    OL_RETURN_IF_ERROR(OutputGeometry(ctx, in, axes, &scale, &out_dims));
    OL_RETURN_IF_ERROR(ReadRoi(ctx, axes, &roi_start, &roi_end));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    const int64_t total = y->shape().num_elements();
    if (total == 0) return Status::Ok();
    if (in.num_elements() == 0) return InvalidArgument(ctx.Where(), ": cannot resize an empty input ", in.ToString());

    int64_t taps[kMaxRank], tap_entries = 0, table_entries = 0;
    for (int d = 0; d < rank; ++d) {
      taps[d] = TapsFor(scale[d]);
      tap_entries += out_dims[d] * taps[d], table_entries += out_dims[d];
    }
    const size_t bytes = static_cast<size_t>(tap_entries) * (sizeof(int64_t) + sizeof(double)) +
                         static_cast<size_t>(table_entries) +
                         3 * 64 * static_cast<size_t>(rank);  // 3 slices per axis, each 64-byte aligned
    ScratchArena arena(ctx.allocator(), bytes);
    OL_RETURN_IF_ERROR(arena.status());
    ctx.RecordScratch(static_cast<int64_t>(bytes));
    AxisTable tables[kMaxRank];
    for (int d = 0; d < rank; ++d) {
      OL_ASSIGN_OR_RETURN(int64_t* index, arena.AllocateArray<int64_t>(out_dims[d] * taps[d]));
      OL_ASSIGN_OR_RETURN(double* weight, arena.AllocateArray<double>(out_dims[d] * taps[d]));
      OL_ASSIGN_OR_RETURN(uint8_t* outside, arena.AllocateArray<uint8_t>(out_dims[d]));
      BuildAxis(in[d], out_dims[d], scale[d], roi_start[d], roi_end[d], static_cast<int>(taps[d]), index, weight,
                outside);
      tables[d] = {static_cast<int>(taps[d]), index, weight, outside};
    }
    return VisitType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x->data<T>();
      T* dst = y->data<T>();
      int64_t in_stride[kMaxRank];
      for (int64_t d = rank - 1, s = 1; d >= 0; --d) in_stride[d] = s, s *= in[d];
      auto elements = [&](int64_t begin, int64_t end) {
        int64_t pos[kMaxRank];
        for (int64_t flat = begin; flat < end; ++flat) {
          bool outside = false;
          for (int64_t d = rank - 1, rest = flat; d >= 0; --d) {
            pos[d] = rest % out_dims[d], rest /= out_dims[d];
            outside = outside || tables[d].outside[pos[d]];
          }
          if (outside) {
            dst[flat] = Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(extrapolation_));
            continue;
          }
          double sum = 0;
          int pick[kMaxRank] = {};
          while (true) {  // every combination of one tap per axis
            double w = 1;
            int64_t offset = 0;
            for (int d = 0; d < rank; ++d) {
              const int64_t at = pos[d] * tables[d].taps + pick[d];
              offset += tables[d].index[at] * in_stride[d];
              w *= tables[d].weight[at];
            }
            if (w != 0) sum += w * static_cast<double>(Numeric<T>::Load(src[offset]));
            int d = rank - 1;
            while (d >= 0 && ++pick[d] == tables[d].taps) pick[d--] = 0;
            if (d < 0) break;
          }
          dst[flat] = Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(sum));
        }
        return Status::Ok();
      };
      if (total < minimum_elements_) return elements(0, total);
      return ParallelFor(ctx.parallel(), total, ParallelPlan{"resize.elements", grain_elements_}, elements);
    });
  }

 private:
  // Output sizes and per-axis scales from `scales` (input 2) or `sizes` (input 3).
  Status OutputGeometry(const KernelContext& ctx, const Shape& in, const std::vector<int>& axes,
                        std::vector<double>* scale, std::vector<int64_t>* out_dims) const {
    const Tensor* scales = ctx.input(2);
    const Tensor* sizes = ctx.input(3);
    const bool has_scales = scales != nullptr && scales->shape().num_elements() > 0;
    const bool has_sizes = sizes != nullptr && sizes->shape().num_elements() > 0;
    const size_t n = axes.size();
    if (has_scales == has_sizes) return InvalidArgument(ctx.Where(), ": exactly one of scales and sizes must be given");
    if (has_scales) {
      if (scales->dtype() != DataType::kFloat || scales->shape().num_elements() != static_cast<int64_t>(n)) {
        return InvalidArgument(ctx.Where(), ": scales must be float with ", n, " entries, got ",
                               scales->shape().ToString());
      }
      for (size_t k = 0; k < n; ++k) {
        const double s = scales->data<float>()[k];
        if (!(s > 0)) return InvalidArgument(ctx.Where(), ": scale ", s, " must be positive");
        (*scale)[axes[k]] = s;
        (*out_dims)[axes[k]] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[axes[k]])));
      }
      return Status::Ok();
    }
    if (sizes->dtype() != DataType::kInt64 || sizes->shape().num_elements() != static_cast<int64_t>(n)) {
      return InvalidArgument(ctx.Where(), ": sizes must be int64 with ", n, " entries, got ", sizes->shape().ToString());
    }
    const int64_t* sz = sizes->data<int64_t>();
    for (size_t k = 0; k < n; ++k) {
      if (sz[k] < 0) return InvalidArgument(ctx.Where(), ": negative size ", sz[k]);
    }
    if (aspect_policy_ == "stretch") {
      for (size_t k = 0; k < n; ++k) {
        (*out_dims)[axes[k]] = sz[k];
        (*scale)[axes[k]] = static_cast<double>(sz[k]) / static_cast<double>(in[axes[k]]);
      }
      return Status::Ok();
    }
    if (aspect_policy_ != "not_larger" && aspect_policy_ != "not_smaller") {
      return InvalidArgument(ctx.Where(), ": unsupported keep_aspect_ratio_policy '", aspect_policy_, "'");
    }
    double s = aspect_policy_ == "not_larger" ? 1e300 : 0;
    for (size_t k = 0; k < n; ++k) {
      const double r = static_cast<double>(sz[k]) / static_cast<double>(in[axes[k]]);
      s = aspect_policy_ == "not_larger" ? std::min(s, r) : std::max(s, r);
    }
    for (size_t k = 0; k < n; ++k) {
      (*scale)[axes[k]] = s;
      (*out_dims)[axes[k]] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[axes[k]]) + 0.5));
    }
    return Status::Ok();
  }

  Status ReadRoi(const KernelContext& ctx, const std::vector<int>& axes, std::vector<double>* start,
                 std::vector<double>* end) const {
    const Tensor* roi = ctx.input(1);
    if (transform_ != "tf_crop_and_resize" || roi == nullptr || roi->shape().num_elements() == 0) return Status::Ok();
    const size_t n = axes.size();
    if (roi->shape().num_elements() != static_cast<int64_t>(2 * n)) {
      return InvalidArgument(ctx.Where(), ": roi must have ", 2 * n, " entries, got ", roi->shape().ToString());
    }
    for (size_t k = 0; k < n; ++k) {
      double s = 0, e = 0;
      if (roi->dtype() == DataType::kFloat) s = roi->data<float>()[k], e = roi->data<float>()[k + n];
      else if (roi->dtype() == DataType::kDouble) s = roi->data<double>()[k], e = roi->data<double>()[k + n];
      else return InvalidArgument(ctx.Where(), ": roi must be float or double");
      (*start)[axes[k]] = s, (*end)[axes[k]] = e;
    }
    return Status::Ok();
  }

  double SourceCoordinate(int64_t o, int64_t in, int64_t out, double scale, double roi_start, double roi_end) const {
    const double x = static_cast<double>(o), n = static_cast<double>(in);
    const double out_f = scale * n;  // the unrounded output length the formulas use
    if (transform_ == "align_corners") return out_f == 1 ? 0.0 : x * (n - 1) / (out_f - 1);
    if (transform_ == "asymmetric") return x / scale;
    if (transform_ == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
    if (transform_ == "pytorch_half_pixel") return out_f == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    if (transform_ == "half_pixel_symmetric") {
      const double offset = n / 2 * (1 - static_cast<double>(out) / out_f);
      return offset + (x + 0.5) / scale - 0.5;
    }
    if (transform_ == "tf_crop_and_resize") {
      const double c = out_f == 1 ? (roi_end - roi_start) * (n - 1) / 2 : x * (roi_end - roi_start) * (n - 1) / (out_f - 1);
      return c + roi_start * (n - 1);
    }
    return (x + 0.5) / scale - 0.5;  // half_pixel
  }

  // The filter's stretch: 1, or the downscale factor when antialiasing.
  double FilterScale(double scale) const { return antialias_ ? std::min(scale, 1.0) : 1.0; }
  // First tap relative to ceil(x) - 1: the filter support is (-1, 1] (linear) or (-2, 2]
  // (cubic) in units of 1 / FilterScale.
  int64_t FirstTap(double scale) const {
    const double radius = mode_ == Mode::kLinear ? 1.0 : 2.0;
    return static_cast<int64_t>(std::floor(-radius / FilterScale(scale)) + 1);
  }
  int64_t TapsFor(double scale) const { return mode_ == Mode::kNearest ? 1 : 2 - 2 * FirstTap(scale); }

  double Kernel(double s) const {
    s = std::abs(s);
    if (mode_ == Mode::kLinear) return std::max(0.0, 1 - s);
    const double a = cubic_a_;
    if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
    if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
    return 0;
  }

  // Fills one axis's table of `taps` taps per output index.
  void BuildAxis(int64_t in, int64_t out, double scale, double roi_start, double roi_end, int taps, int64_t* index,
                 double* weight, uint8_t* outside) const {
    const double filter_scale = FilterScale(scale);
    const int64_t first_tap = FirstTap(scale);
    const bool unit = in == out && transform_ != "tf_crop_and_resize" && scale == 1.0;
    for (int64_t o = 0; o < out; ++o) {
      int64_t* idx = index + o * taps;
      double* w = weight + o * taps;
      outside[o] = 0;
      const double c = unit ? static_cast<double>(o) : SourceCoordinate(o, in, out, scale, roi_start, roi_end);
      if (transform_ == "tf_crop_and_resize" && (c < 0 || c > static_cast<double>(in - 1))) outside[o] = 1;
      // Taps start at ceil(c) - 1 with t in (0, 1]: an exact source index is the second tap.
      const double base = std::ceil(c) - 1;
      const double t = c - base;
      const int64_t b = static_cast<int64_t>(std::clamp(base, -8.0 - taps, static_cast<double>(in + taps) + 8));
      int64_t first = b;
      if (mode_ == Mode::kNearest) {
        bool upper = true;
        if (t < 1) {
          if (nearest_mode_ == "round_prefer_ceil") upper = t >= 0.5;
          else if (nearest_mode_ == "floor") upper = false;
          else if (nearest_mode_ == "ceil") upper = true;
          else upper = t > 0.5;  // round_prefer_floor
        }
        first = upper ? b + 1 : b;
        w[0] = 1;
      } else {
        first = b + first_tap;
        for (int k = 0; k < taps; ++k) w[k] = Kernel((static_cast<double>(first_tap + k) - t) * filter_scale);
        if (antialias_) Normalize(w, taps);
      }
      for (int k = 0; k < taps; ++k) {
        const int64_t i = first + k;
        if (exclude_outside_ && (i < 0 || i >= in)) w[k] = 0;
        idx[k] = std::clamp<int64_t>(i, 0, in - 1);
      }
      if (exclude_outside_) Normalize(w, taps);
    }
  }

  static void Normalize(double* w, int taps) {
    double total = 0;
    for (int k = 0; k < taps; ++k) total += w[k];
    if (total != 0) {
      for (int k = 0; k < taps; ++k) w[k] /= total;
    }
  }

  Mode mode_ = Mode::kNearest;
  std::string transform_, nearest_mode_, aspect_policy_;
  double cubic_a_ = -0.75, extrapolation_ = 0;
  bool exclude_outside_ = false, antialias_ = false, has_axes_ = false;
  std::vector<int64_t> axes_;
  int64_t minimum_elements_ = 0, grain_elements_ = 1;
};

}  // namespace

OL_REGISTER_KERNELS(resize_family) {
  const int spans[][2] = {{11, 12}, {13, 17}, {18, 18}, {19, kOpenEnded}};
  for (const auto& span : spans) {
    KernelDef def;
    def.op = "Resize";
    def.since_version = span[0];
    def.end_version = span[1];
    def.family = "resize";
    def.element_types = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
    if (span[0] >= 13) def.element_types.push_back(DataType::kBFloat16);
    def.tuning = {MinimumElementsParam(16384, "output elements below which the op runs serially"),
                  ParamSpec::Int64("parallel.grain_elements", 4096, 1, int64_t{1} << 40,
                                   "smallest parallel block, in output elements")};
    def.factory = MakeKernel<ResizeKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace onnx_light
