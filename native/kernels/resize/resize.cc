// Resize (opsets 10-19) and Upsample (9): nearest (four rounding modes), n-linear and
// cubic (cubic_coeff_a, exclude_outside) under every coordinate_transformation_mode,
// with scales or sizes (axes, keep_aspect_ratio_policy, antialias). Each resized axis gets a table
// of taps (input index, weight) per output coordinate; an output element is the in-order
// sum over the product of its axes' taps. Output elements are split across participants
// (thresholded_parallel.h), so results never depend on the participant count. When only
// the last two axes change (NCHW images), output rows of each plane are the unit and read
// the two axes' tables directly (nearest: a word gather per row, repeated rows copied;
// linear/cubic: the same taps summed in the same order as the general path, bit for bit).
//
// The sums run in double, except for float input with at most two taps per output
// coordinate on every axis (linear without the antialias filter's widening): there every
// path sums in float, with the weights rounded once to float, in the same order (the last
// axis innermost, zero weights skipped), so the paths still agree bit for bit. The 2-D
// path is then separable: each input row the block needs is interpolated along W once into
// a row buffer, and an output row is the blend of its two buffered rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace resize {
namespace {

enum class Mode { kNearest, kLinear, kCubic };

constexpr int kMaxRank = 16;  // output coordinates live on each worker's stack

struct Tap {
  int64_t index;
  double weight;
};

// Taps of one axis: taps[first[x] .. first[x + 1]) serve output coordinate x; outside[x]
// marks coordinates that fall outside the crop (tf_crop_and_resize extrapolation).
struct AxisTaps {
  std::vector<int64_t> first;
  std::vector<Tap> taps;
  std::vector<bool> outside;
  int64_t max_taps = 1;
};

struct Options {
  Mode mode = Mode::kNearest;
  std::string coordinates = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
  bool antialias = false;
};

double CubicKernel(double s, double A) {
  s = std::fabs(s);
  if (s <= 1) return ((A + 2) * s - (A + 3)) * s * s + 1;
  if (s < 2) return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
  return 0.0;
}

// Antialiased linear/cubic taps: the filter stretched by 1 / min(scale, 1), over the n
// input positions nearest x (the left one preferred when x is an integer), weights
// normalised to sum 1, indices clamped to the edge (or dropped with exclude_outside).
void AntialiasTaps(const Options& o, double x, double scale, int64_t in, std::vector<Tap>* taps) {
  const double s = std::min(scale, 1.0);
  const double support = o.mode == Mode::kLinear ? 1.0 : 2.0;
  const int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
  const int64_t n = 2 - 2 * start;
  const int64_t base = x == std::floor(x) ? static_cast<int64_t>(x) - 1 : static_cast<int64_t>(std::floor(x));
  std::vector<double> w(static_cast<size_t>(n));
  double total = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    const double arg = (static_cast<double>(base + start + k) - x) * s;
    w[k] = o.mode == Mode::kLinear ? std::min(1.0, std::max(0.0, 1.0 - std::fabs(arg))) : CubicKernel(arg, o.cubic_a);
    total += w[k];
  }
  double kept = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    w[k] /= total;
    const int64_t index = base + start + k;
    if (o.exclude_outside && (index < 0 || index >= in)) w[k] = 0.0;
    kept += w[k];
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t index = std::min(std::max<int64_t>(base + start + k, 0), in - 1);
    taps->push_back({index, o.exclude_outside && kept != 0.0 ? w[k] / kept : w[k]});
  }
}

double ToOriginal(const Options& o, double x, double scale, int64_t in, int64_t out, double roi_start, double roi_end) {
  const std::string& m = o.coordinates;
  if (m == "asymmetric") return x / scale;
  // The resized length as the reference takes it: in * scale, fractional when scales are given.
  if (m == "align_corners") return out == 1 ? 0.0 : x * (in - 1) / (in * scale - 1);
  if (m == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "tf_crop_and_resize") {
    return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / static_cast<double>(out - 1)
                   : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  if (m == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / (scale * in);
    const double offset = in / 2.0 * (1.0 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

int64_t NearestIndex(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(std::floor(x + 0.5));
  return static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
}

AxisTaps BuildAxis(const Options& o, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisTaps a;
  a.first.push_back(0);
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  for (int64_t x = 0; x < out; ++x) {
    const double xo = ToOriginal(o, static_cast<double>(x), scale, in, out, roi_start, roi_end);
    a.outside.push_back(o.coordinates == "tf_crop_and_resize" && (xo < 0 || xo > in - 1));
    if (o.mode == Mode::kNearest) {
      a.taps.push_back({clamp(NearestIndex(o.nearest, xo)), 1.0});
    } else if (o.antialias) {
      AntialiasTaps(o, xo, scale, in, &a.taps);
    } else if (o.mode == Mode::kLinear) {
      const double xc = std::min(std::max(xo, 0.0), static_cast<double>(in - 1));
      const int64_t x0 = static_cast<int64_t>(std::floor(xc));
      const double t = xc - x0;
      a.taps.push_back({x0, 1.0 - t});
      a.taps.push_back({clamp(x0 + 1), t});
    } else {
      const int64_t x0 = static_cast<int64_t>(std::floor(xo));
      const double t = xo - x0, A = o.cubic_a;
      const double d[4] = {1 + t, t, 1 - t, 2 - t};
      double w[4], total = 0.0;
      for (int k = 0; k < 4; ++k) {
        const double s = d[k];
        w[k] = s <= 1 ? ((A + 2) * s - (A + 3)) * s * s + 1 : ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
        if (o.exclude_outside && (x0 - 1 + k < 0 || x0 - 1 + k >= in)) w[k] = 0.0;
        total += w[k];
      }
      for (int k = 0; k < 4; ++k) a.taps.push_back({clamp(x0 - 1 + k), o.exclude_outside ? w[k] / total : w[k]});
    }
    a.first.push_back(static_cast<int64_t>(a.taps.size()));
  }
  for (size_t x = 0; x + 1 < a.first.size(); ++x) a.max_taps = std::max(a.max_taps, a.first[x + 1] - a.first[x]);
  return a;
}

// The accumulator of the sums: float for float input whose tables have at most two taps
// per coordinate (see the top), double otherwise.
bool SumsInFloat(DataType type, const std::vector<AxisTaps>& tables) {
  if (type != DataType::kFloat) return false;
  for (const AxisTaps& a : tables) {
    if (a.max_taps > 2) return false;
  }
  return true;
}

template <typename T>
inline double Load(const T& v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(v);
  else
    return v.ToDouble();
}

template <typename T>
inline T Store(double v) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(v);  // truncates, as a cast does
  else
    return T::FromDouble(v);
}

using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                              uint32_t, uint64_t>;

StatusOr<std::vector<double>> ReadDoubles(const Tensor* t, const std::string& where) {
  std::vector<double> v;
  if (t == nullptr) return v;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    if (t->dtype() == DataType::kFloat)
      v.push_back(t->data<float>()[i]);
    else if (t->dtype() == DataType::kDouble)
      v.push_back(t->data<double>()[i]);
    else if (t->dtype() == DataType::kFloat16)
      v.push_back(t->data<Float16>()[i].ToFloat());
    else if (t->dtype() == DataType::kInt64)
      v.push_back(static_cast<double>(t->data<int64_t>()[i]));
    else
      return InvalidArgument(where, ": roi/scales/sizes of unsupported type ", t->TypeAndShape());
  }
  return v;
}

class ResizeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    opset_ = info.opset_version();
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "nearest"));
    if (mode == "nearest")
      o_.mode = Mode::kNearest;
    else if (mode == "linear")
      o_.mode = Mode::kLinear;
    else if (mode == "cubic" && opset_ >= 11)
      o_.mode = Mode::kCubic;
    else
      return InvalidArgument(where_, ": unsupported mode '", mode, "'");
    OL_ASSIGN_OR_RETURN(o_.coordinates,
                        info.GetString("coordinate_transformation_mode", opset_ < 11 ? "asymmetric" : "half_pixel"));
    OL_ASSIGN_OR_RETURN(o_.nearest, info.GetString("nearest_mode", opset_ < 11 ? "floor" : "round_prefer_floor"));
    OL_ASSIGN_OR_RETURN(float a, info.GetFloat("cubic_coeff_a", -0.75f));
    OL_ASSIGN_OR_RETURN(float extrapolation, info.GetFloat("extrapolation_value", 0.0f));
    OL_ASSIGN_OR_RETURN(int64_t exclude, info.GetInt("exclude_outside", 0));
    OL_ASSIGN_OR_RETURN(int64_t antialias, info.GetInt("antialias", 0));
    OL_ASSIGN_OR_RETURN(axes_, info.GetInts("axes", {}));
    OL_ASSIGN_OR_RETURN(policy_name_, info.GetString("keep_aspect_ratio_policy", "stretch"));
    o_.antialias = antialias != 0 && o_.mode != Mode::kNearest;
    o_.cubic_a = a;
    o_.extrapolation = extrapolation;
    o_.exclude_outside = exclude != 0;
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int rank = x->shape().rank();
    if (rank > kMaxRank) return NotImplemented(where_, ": rank above ", kMaxRank, ": ", x->TypeAndShape());
    const Tensor* roi_t = opset_ >= 11 ? ctx.input(1) : nullptr;
    const Tensor* scales_t = ctx.input(opset_ >= 11 ? 2 : 1);
    const Tensor* sizes_t = opset_ >= 11 ? ctx.input(3) : nullptr;
    OL_ASSIGN_OR_RETURN(std::vector<double> roi, ReadDoubles(roi_t, where_));
    OL_ASSIGN_OR_RETURN(std::vector<double> given_scales, ReadDoubles(scales_t, where_));
    OL_ASSIGN_OR_RETURN(std::vector<double> given_sizes, ReadDoubles(sizes_t, where_));
    std::vector<int> axes;
    for (int64_t a : axes_) axes.push_back(static_cast<int>(a < 0 ? a + rank : a));
    if (axes.empty()) {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    }
    std::vector<double> scale(rank, 1.0);
    std::vector<int64_t> out_dims = x->shape().dims();
    if (!given_sizes.empty()) {
      if (given_sizes.size() != axes.size()) return InvalidArgument(where_, ": sizes must have one value per axis");
      double common = policy_name_ == "not_larger" ? 1e300 : 0.0;
      for (size_t k = 0; k < axes.size(); ++k) {
        const double s = given_sizes[k] / x->shape()[axes[k]];
        common = policy_name_ == "not_larger" ? std::min(common, s) : std::max(common, s);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        const int d = axes[k];
        if (policy_name_ == "stretch") {
          scale[d] = given_sizes[k] / x->shape()[d];
          OL_ASSIGN_OR_RETURN(out_dims[d], OutputLength(given_sizes[k], d));
        } else {
          scale[d] = common;
          OL_ASSIGN_OR_RETURN(out_dims[d], OutputLength(std::nearbyint(common * x->shape()[d]), d));
        }
      }
    } else if (!given_scales.empty()) {
      if (given_scales.size() != axes.size()) return InvalidArgument(where_, ": scales must have one value per axis");
      for (size_t k = 0; k < axes.size(); ++k) {
        const int d = axes[k];
        if (!(given_scales[k] > 0)) return InvalidArgument(where_, ": scales must be positive");
        scale[d] = given_scales[k];
        OL_ASSIGN_OR_RETURN(out_dims[d], OutputLength(std::floor(x->shape()[d] * given_scales[k]), d));
      }
    } else {
      return InvalidArgument(where_, ": one of scales and sizes is required");
    }
    // The output first: a size that cannot be allocated (scales of 1e9, sizes of 2^31)
    // fails here at once, before tables of one entry per output index are built.
    for (int d = 0; d < rank; ++d) {
      if (x->shape()[d] == 0) return InvalidArgument(where_, ": cannot resize an empty dimension ", x->TypeAndShape());
    }
    auto out_shape = Shape::Create(out_dims);
    if (!out_shape.ok()) return out_shape.status().WithContext(where_ + ": resized shape: ");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), *out_shape));
    if (y->num_elements() == 0) return Status::Ok();
    OL_RETURN_IF_ERROR(CheckTablesFit(ctx, out_dims));
    std::vector<AxisTaps> tables(rank);
    int64_t cost = 1;
    for (int d = 0; d < rank; ++d) {
      const int64_t in = x->shape()[d];
      double roi_start = 0.0, roi_end = 1.0;
      auto it = std::find(axes.begin(), axes.end(), d);
      if (!roi.empty() && it != axes.end()) {
        const size_t k = it - axes.begin();
        roi_start = roi[k];
        roi_end = roi[k + axes.size()];
      }
      tables[d] = BuildAxis(o_, in, out_dims[d], scale[d], roi_start, roi_end);
      cost *= tables[d].max_taps;
    }
    std::vector<int64_t> in_strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * x->shape()[d + 1];
    const bool in_float = SumsInFloat(x->dtype(), tables);
    if (rank >= 2 && LeadingAxesUnchanged(tables, x->shape().dims(), out_dims)) {
      // Only the last two axes are resized: rows of planes, through per-axis tables.
      const Plane2D g{x->shape()[rank - 2], x->shape()[rank - 1], out_dims[rank - 2], out_dims[rank - 1],
                      x->shape().SizeTo(rank - 2)};
      if (o_.mode == Mode::kNearest && x->dtype() != DataType::kString) {
        const size_t size = ElementSize(x->dtype());
        if (size == 1) return NearestRows<uint8_t>(ctx, *x, y, tables[rank - 2], tables[rank - 1], g);
        if (size == 2) return NearestRows<uint16_t>(ctx, *x, y, tables[rank - 2], tables[rank - 1], g);
        if (size == 4) return NearestRows<uint32_t>(ctx, *x, y, tables[rank - 2], tables[rank - 1], g);
        if (size == 8) return NearestRows<uint64_t>(ctx, *x, y, tables[rank - 2], tables[rank - 1], g);
      } else if (o_.mode != Mode::kNearest) {
        return DispatchType(NumericTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
          using T = typename decltype(tag)::type;
          return InterpolateRows<T>(ctx, *x, y, tables[rank - 2], tables[rank - 1], g, cost, in_float);
        });
      }
    }
    if (o_.mode == Mode::kNearest && x->dtype() != DataType::kString) {
      return Gather(ctx, *x, y, tables, in_strides, out_dims);
    }
    return DispatchType(NumericTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return policy_.Run(ctx.parallel(), "Resize", y->num_elements(), cost, [&](int64_t begin, int64_t end) {
        int64_t coord[kMaxRank];
        for (int64_t e = begin; e < end; ++e) {
          bool outside = false;
          int64_t rest = e;
          for (int d = rank - 1; d >= 0; --d) {
            coord[d] = rest % out_dims[d];
            rest /= out_dims[d];
            outside = outside || tables[d].outside[coord[d]];
          }
          if (outside) {
            out[e] = Store<T>(o_.extrapolation);
          } else if (in_float) {
            out[e] = Store<T>(Sum<T, float>(in, tables, in_strides, coord, 0, rank, 0));
          } else {
            out[e] = Store<T>(Sum<T, double>(in, tables, in_strides, coord, 0, rank, 0));
          }
        }
      });
    });
  }

 private:
  // The tables hold at least one tap, one start index and one flag per output index of
  // every axis; that heap memory counts against the session's limit like the output, so a
  // huge axis (sizes 2^31) fails here at once instead of growing vectors for minutes.
  Status CheckTablesFit(const KernelContext& ctx, const std::vector<int64_t>& out_dims) const {
    constexpr double kBytesPerIndex = sizeof(Tap) + sizeof(int64_t) + 1;
    double bytes = 0;
    for (int64_t d : out_dims) bytes += kBytesPerIndex * static_cast<double>(d);
    const Allocator* allocator = ctx.allocator();
    const double available = static_cast<double>(allocator->limit_bytes()) - allocator->stats().current_bytes;
    if (bytes > available) {
      return ResourceExhausted(where_, ": interpolation tables of at least ", static_cast<int64_t>(bytes),
                               " bytes for output shape ", Shape(out_dims).ToString(),
                               " would exceed the memory limit of ", allocator->limit_bytes(), " bytes (",
                               allocator->stats().current_bytes, " in use)");
    }
    return Status::Ok();
  }

  // An output length computed in double: finite, >= 0 and an int64 (the cast of a larger
  // double is undefined), else InvalidArgument naming the axis and the value.
  StatusOr<int64_t> OutputLength(double length, int axis) const {
    if (!(length >= 0) || !(length < 9.2e18)) {
      return InvalidArgument(where_, ": output length ", length, " on axis ", axis,
                             " is negative, not finite or beyond int64");
    }
    return static_cast<int64_t>(length);
  }

  // Sum over the taps of axes [d, rank) for output coordinates `coord`, input offset so far,
  // in Acc (float: only for float input, weights rounded to float).
  template <typename T, typename Acc>
  static Acc Sum(const T* in, const std::vector<AxisTaps>& tables, const std::vector<int64_t>& strides,
                 const int64_t* coord, int d, int rank, int64_t offset) {
    if (d == rank) return static_cast<Acc>(Load(in[offset]));
    const AxisTaps& a = tables[d];
    Acc total = 0;
    for (int64_t k = a.first[coord[d]]; k < a.first[coord[d] + 1]; ++k) {
      const Tap& tap = a.taps[k];
      if (tap.weight == 0.0) continue;
      total += static_cast<Acc>(tap.weight) *
               Sum<T, Acc>(in, tables, strides, coord, d + 1, rank, offset + tap.index * strides[d]);
    }
    return total;
  }

  // Nearest: one tap per axis, so elements are copied bytewise (any non-string type; the
  // tf_crop_and_resize extrapolation value applies to float, other types get zero bytes).
  Status Gather(const KernelContext& ctx, const Tensor& x, Tensor* y, const std::vector<AxisTaps>& tables,
                const std::vector<int64_t>& strides, const std::vector<int64_t>& out_dims) const {
    const size_t size = ElementSize(x.dtype());
    const char* in = static_cast<const char*>(x.raw_data());
    char* out = static_cast<char*>(y->raw_data());
    const int rank = static_cast<int>(out_dims.size());
    std::vector<char> fill(size, 0);
    if (o_.coordinates == "tf_crop_and_resize" && x.dtype() == DataType::kFloat) {
      const float v = static_cast<float>(o_.extrapolation);
      std::memcpy(fill.data(), &v, size);
    }
    return policy_.Run(ctx.parallel(), "Resize", y->num_elements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) {
        int64_t rest = e, offset = 0;
        bool outside = false;
        for (int d = rank - 1; d >= 0; --d) {
          const int64_t c = rest % out_dims[d];
          rest /= out_dims[d];
          outside = outside || tables[d].outside[c];
          offset += tables[d].taps[c].index * strides[d];
        }
        std::memcpy(out + e * size, outside ? fill.data() : in + offset * size, size);
      }
    });
  }

  // Input and output plane sizes and the plane count (the product of the leading axes).
  struct Plane2D {
    int64_t in_h, in_w, out_h, out_w, planes;
  };

  // Whether every axis but the last two maps output coordinate x to input x with the single
  // nonzero tap of weight 1 and no extrapolation: then Sum over those axes is the identity
  // (0.0 + 1.0 * v == v, v never -0.0) and the 2-D row paths give the same bits.
  static bool LeadingAxesUnchanged(const std::vector<AxisTaps>& tables, const std::vector<int64_t>& in_dims,
                                   const std::vector<int64_t>& out_dims) {
    for (size_t d = 0; d + 2 < tables.size(); ++d) {
      const AxisTaps& a = tables[d];
      if (in_dims[d] != out_dims[d]) return false;
      for (int64_t x = 0; x < out_dims[d]; ++x) {
        if (a.outside[x]) return false;
        int nonzero = 0;
        for (int64_t k = a.first[x]; k < a.first[x + 1]; ++k) {
          if (a.taps[k].weight == 0.0) continue;
          if (a.taps[k].index != x || a.taps[k].weight != 1.0) return false;
          ++nonzero;
        }
        if (nonzero != 1) return false;
      }
    }
    return true;
  }

  // Whether any output coordinate of the axis falls outside a tf_crop_and_resize crop (the
  // row loops test each column only then).
  static bool AnyOutside(const AxisTaps& a) {
    return std::find(a.outside.begin(), a.outside.end(), true) != a.outside.end();
  }

  // The value extrapolated outside a tf_crop_and_resize crop, as the element-wise paths
  // write it.
  template <typename T>
  T Extrapolated() const {
    return Store<T>(o_.extrapolation);
  }

  // Linear and cubic (antialiased or not) over the last two axes. Unit = one output row of
  // one plane; its value is the general path's Sum (the same taps, the same order, in
  // double), computed from the row's input rows without per-element index arithmetic.
  template <typename T>
  Status InterpolateRows(const KernelContext& ctx, const Tensor& x, Tensor* y, const AxisTaps& ty, const AxisTaps& tx,
                         const Plane2D& g, int64_t cost, bool in_float) const {
    const T* in = x.data<T>();
    T* out = y->data<T>();
    const T fill = Extrapolated<T>();
    if constexpr (std::is_same_v<T, float>) {
      if (in_float) return TwoTapRowsFloat(ctx, in, out, ty, tx, g, fill, cost);
    }
    if (ty.max_taps <= 2 && tx.max_taps <= 2) return TwoTapRows<T>(ctx, in, out, ty, tx, g, fill, cost);
    const bool crop_x = AnyOutside(tx);
    return policy_.Run(ctx.parallel(), "Resize", g.planes * g.out_h, g.out_w * cost, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t plane = u / g.out_h, oy = u % g.out_h;
        const T* src = in + plane * g.in_h * g.in_w;
        T* dst = out + u * g.out_w;
        if (ty.outside[oy]) {
          std::fill(dst, dst + g.out_w, fill);
          continue;
        }
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          if (crop_x && tx.outside[ox]) {
            dst[ox] = fill;
            continue;
          }
          double total = 0.0;
          for (int64_t ky = ty.first[oy]; ky < ty.first[oy + 1]; ++ky) {
            const Tap& vy = ty.taps[ky];
            if (vy.weight == 0.0) continue;
            const T* row = src + vy.index * g.in_w;
            double inner = 0.0;
            for (int64_t kx = tx.first[ox]; kx < tx.first[ox + 1]; ++kx) {
              const Tap& vx = tx.taps[kx];
              if (vx.weight == 0.0) continue;
              inner += vx.weight * Load(row[vx.index]);
            }
            total += vy.weight * inner;
          }
          dst[ox] = Store<T>(total);
        }
      }
    });
  }

  // Up to two taps per output coordinate on both axes (linear without antialias): the taps
  // unpacked once per axis into (index, weight) pairs, zero weights skipped as Sum skips
  // them, the same products summed in the same order. Work is counted as the general path
  // counts it (`cost`: the product of every axis' taps), so the schema's crossover holds.
  struct TwoTaps {
    int64_t index[2];
    double weight[2];
  };
  static std::vector<TwoTaps> UnpackTwoTaps(const AxisTaps& a, int64_t out) {
    std::vector<TwoTaps> v(out, TwoTaps{{0, 0}, {0.0, 0.0}});
    for (int64_t x = 0; x < out; ++x) {
      for (int64_t k = a.first[x], j = 0; k < a.first[x + 1]; ++k, ++j) {
        v[x].index[j] = a.taps[k].index;
        v[x].weight[j] = a.taps[k].weight;
      }
    }
    return v;
  }

  template <typename T>
  Status TwoTapRows(const KernelContext& ctx, const T* in, T* out, const AxisTaps& ty, const AxisTaps& tx,
                    const Plane2D& g, T fill, int64_t cost) const {
    const std::vector<TwoTaps> ys = UnpackTwoTaps(ty, g.out_h), xs = UnpackTwoTaps(tx, g.out_w);
    const bool crop_x = AnyOutside(tx);
    return policy_.Run(ctx.parallel(), "Resize", g.planes * g.out_h, g.out_w * cost, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t plane = u / g.out_h, oy = u % g.out_h;
        T* dst = out + u * g.out_w;
        if (ty.outside[oy]) {
          std::fill(dst, dst + g.out_w, fill);
          continue;
        }
        const TwoTaps& vy = ys[oy];
        const T* src = in + plane * g.in_h * g.in_w;
        const T* row0 = src + vy.index[0] * g.in_w;
        const T* row1 = src + vy.index[1] * g.in_w;
        const bool use0 = vy.weight[0] != 0.0, use1 = vy.weight[1] != 0.0;
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          if (crop_x && tx.outside[ox]) {
            dst[ox] = fill;
            continue;
          }
          const TwoTaps& vx = xs[ox];
          auto horizontal = [&](const T* row) {
            double inner = 0.0;
            if (vx.weight[0] != 0.0) inner += vx.weight[0] * Load(row[vx.index[0]]);
            if (vx.weight[1] != 0.0) inner += vx.weight[1] * Load(row[vx.index[1]]);
            return inner;
          };
          double total = 0.0;
          if (use0) total += vy.weight[0] * horizontal(row0);
          if (use1) total += vy.weight[1] * horizontal(row1);
          dst[ox] = Store<T>(total);
        }
      }
    });
  }

  // Float, two taps per axis (SumsInFloat): the general path's float sum, separable. Per
  // axis the taps become (index, weight) columns with zero weights as weight 0 at index 0;
  // an input row is interpolated along W once per block into a row buffer,
  //   h[ox] = (0 + s0) + s1,  s = weight != 0 ? weight * row[index] : 0,
  // (the general path's skipped tap is an added +0, which changes nothing: the partial sum
  // 0 + s0 is never -0), and an output row is the same blend of its two buffered rows.
  // A buffered row depends only on its input row, so blocks see the same values.
  struct FloatTaps {
    std::vector<int64_t> index0, index1;
    std::vector<float> weight0, weight1;
  };
  static FloatTaps UnpackFloatTaps(const AxisTaps& a, int64_t out) {
    FloatTaps f{std::vector<int64_t>(out, 0), std::vector<int64_t>(out, 0), std::vector<float>(out, 0.0f),
                std::vector<float>(out, 0.0f)};
    for (int64_t x = 0; x < out; ++x) {
      for (int64_t k = a.first[x], j = 0; k < a.first[x + 1]; ++k, ++j) {
        if (a.taps[k].weight == 0.0) continue;
        (j == 0 ? f.index0 : f.index1)[x] = a.taps[k].index;
        (j == 0 ? f.weight0 : f.weight1)[x] = static_cast<float>(a.taps[k].weight);
      }
    }
    return f;
  }

  Status TwoTapRowsFloat(const KernelContext& ctx, const float* in, float* out, const AxisTaps& ty, const AxisTaps& tx,
                         const Plane2D& g, float fill, int64_t cost) const {
    const FloatTaps ys = UnpackFloatTaps(ty, g.out_h), xs = UnpackFloatTaps(tx, g.out_w);
    const bool crop_x = AnyOutside(tx);
    const int64_t out_w = g.out_w;
    return policy_.Run(ctx.parallel(), "Resize", g.planes * g.out_h, g.out_w * cost, [&](int64_t begin, int64_t end) {
      // Two buffered rows: input row (plane * in_h + iy) interpolated along W.
      std::vector<float> buffer(static_cast<size_t>(2 * out_w));
      int64_t held[2] = {-1, -1};
      // Input row `source` along W, buffered; a miss overwrites the slot not holding `other`
      // (the row the same output row needs too).
      auto horizontal = [&](int64_t source, int64_t other) -> const float* {
        for (int slot = 0; slot < 2; ++slot) {
          if (held[slot] == source) return buffer.data() + slot * out_w;
        }
        const int slot = held[0] == other ? 1 : 0;
        float* h = buffer.data() + slot * out_w;
        const float* row = in + source * g.in_w;
        const int64_t *i0 = xs.index0.data(), *i1 = xs.index1.data();
        const float *w0 = xs.weight0.data(), *w1 = xs.weight1.data();
        for (int64_t ox = 0; ox < out_w; ++ox) {
          const float s0 = w0[ox] != 0.0f ? w0[ox] * row[i0[ox]] : 0.0f;
          const float s1 = w1[ox] != 0.0f ? w1[ox] * row[i1[ox]] : 0.0f;
          h[ox] = (0.0f + s0) + s1;
        }
        held[slot] = source;
        return h;
      };
      for (int64_t u = begin; u < end; ++u) {
        const int64_t plane = u / g.out_h, oy = u % g.out_h;
        float* dst = out + u * out_w;
        if (ty.outside[oy]) {
          std::fill(dst, dst + out_w, fill);
          continue;
        }
        const float wy0 = ys.weight0[oy], wy1 = ys.weight1[oy];
        const int64_t base = plane * g.in_h;
        if (wy0 != 0.0f && wy1 != 0.0f) {
          const int64_t r0 = base + ys.index0[oy], r1 = base + ys.index1[oy];
          const float* h0 = horizontal(r0, r1);
          const float* h1 = horizontal(r1, r0);
          for (int64_t ox = 0; ox < out_w; ++ox) dst[ox] = (0.0f + wy0 * h0[ox]) + wy1 * h1[ox];
        } else if (wy0 != 0.0f || wy1 != 0.0f) {
          const float w = wy0 != 0.0f ? wy0 : wy1;
          const float* h = horizontal(base + (wy0 != 0.0f ? ys.index0[oy] : ys.index1[oy]), -1);
          for (int64_t ox = 0; ox < out_w; ++ox) dst[ox] = 0.0f + w * h[ox];
        } else {
          std::fill(dst, dst + out_w, 0.0f);
        }
        if (crop_x) {
          for (int64_t ox = 0; ox < out_w; ++ox) {
            if (tx.outside[ox]) dst[ox] = fill;
          }
        }
      }
    });
  }

  // Nearest over the last two axes, elements moved as W words of their size. Unit = one
  // output row of one plane; a row reading the same input row as the previous row of the
  // same block (integer upsampling) is a copy of it.
  template <typename W>
  Status NearestRows(const KernelContext& ctx, const Tensor& x, Tensor* y, const AxisTaps& ty, const AxisTaps& tx,
                     const Plane2D& g) const {
    static_assert(sizeof(W) <= sizeof(double));
    const W* in = static_cast<const W*>(x.raw_data());
    W* out = static_cast<W*>(y->raw_data());
    W fill{};  // zero bytes, or the extrapolation value for float (as Gather)
    if (o_.coordinates == "tf_crop_and_resize" && x.dtype() == DataType::kFloat) {
      const float v = static_cast<float>(o_.extrapolation);
      std::memcpy(&fill, &v, sizeof(W));
    }
    std::vector<int64_t> columns(g.out_w);
    for (int64_t ox = 0; ox < g.out_w; ++ox) columns[ox] = tx.taps[tx.first[ox]].index;
    const bool crop_x = AnyOutside(tx);
    return policy_.Run(ctx.parallel(), "Resize", g.planes * g.out_h, g.out_w, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t plane = u / g.out_h, oy = u % g.out_h;
        W* dst = out + u * g.out_w;
        if (ty.outside[oy]) {
          std::fill(dst, dst + g.out_w, fill);
          continue;
        }
        const int64_t iy = ty.taps[ty.first[oy]].index;
        if (u > begin && oy > 0 && !ty.outside[oy - 1] && ty.taps[ty.first[oy - 1]].index == iy) {
          std::memcpy(dst, dst - g.out_w, g.out_w * sizeof(W));
          continue;
        }
        const W* row = in + (plane * g.in_h + iy) * g.in_w;
        if (!crop_x) {
          for (int64_t ox = 0; ox < g.out_w; ++ox) dst[ox] = row[columns[ox]];
        } else {
          for (int64_t ox = 0; ox < g.out_w; ++ox) dst[ox] = tx.outside[ox] ? fill : row[columns[ox]];
        }
      }
    });
  }

  std::string where_;
  int opset_ = 19;
  Options o_;
  std::vector<int64_t> axes_;
  std::string policy_name_ = "stretch";
  ThresholdedParallel policy_;
};

std::vector<DataType> ResizeTypesAt(int opset) {
  return TensorTypesAt(opset, TensorTypeSet{/*string=*/false, /*complex=*/false, true, false, false});
}

OL_REGISTER_KERNELS(resize) {
  Kernel("Resize")
      .SinceVersions({10, 11, 13, 18, 19})
      .TypesAt(ResizeTypesAt)
      .Tuning(WorkUnitTuning(65536, "output element"))
      .Calibratable()
      .Factory(MakeKernel<ResizeKernel>())
      .AddTo(registry);
  // Upsample 9 is Resize 10 (inputs X, scales; asymmetric coordinates, floor for nearest).
  Kernel("Upsample")
      .Versions(9, 9)
      .Types(ResizeTypesAt(9))
      .Tuning(WorkUnitTuning(65536, "output element"))
      .Calibratable()
      .Factory(MakeKernel<ResizeKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace resize
}  // namespace onnx_light
