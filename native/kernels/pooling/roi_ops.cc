// RoiAlign (bilinear samples averaged or maxed per bin) and MaxRoiPool (Caffe-style max
// over the quantised bin). Every (roi, channel) output plane is independent, so planes are
// split across participants. RoiAlign's sample positions depend on the roi only: as ORT
// does, a block builds the roi's table (4 input offsets + 4 bilinear weights per sample
// point, in output order) once and reuses it for every channel of that roi in the block.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

std::vector<ParamSpec> RoiTuningParams() {
  // Bilinear samples cost about as much as window taps (see pool_ops.cc).
  return {
      MinimumElementsParam(int64_t{1} << 16, "input reads (output planes x samples) below which the op runs serially"),
      ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40, "smallest parallel block, in input reads")};
}

template <typename F>
Status ForEachPlane(const KernelContext& ctx, const ThresholdedParallel& tuning, const char* label, int64_t planes,
                    int64_t reads_per_plane, F&& fn) {
  return tuning.Run(ctx.parallel(), label, planes, reads_per_plane, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) fn(p);
  });
}

// Input element (n, c, h, w) read through rois of any float type as double.
StatusOr<std::vector<double>> ReadRois(const KernelContext& ctx, const Tensor& rois, int64_t columns) {
  if (rois.shape().rank() != 2 || rois.shape()[1] != columns) {
    return InvalidArgument(ctx.Where(), ": rois must have shape [num_rois, ", columns, "], got ",
                           rois.shape().ToString());
  }
  std::vector<double> out(rois.num_elements());
  OL_RETURN_IF_ERROR(DispatchType(FloatTypes{}, rois.dtype(), ctx.Where(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    for (int64_t i = 0; i < rois.num_elements(); ++i) out[i] = Numeric<R>::Load(rois.data<R>()[i]);
    return Status::Ok();
  }));
  return out;
}

class RoiAlignKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode", "avg"));
    if (mode != "avg" && mode != "max") return InvalidArgument(info.Where(), ": mode must be avg or max, got ", mode);
    max_mode_ = mode == "max";
    OL_ASSIGN_OR_RETURN(out_h_, info.GetInt("output_height", 1));
    OL_ASSIGN_OR_RETURN(out_w_, info.GetInt("output_width", 1));
    OL_ASSIGN_OR_RETURN(sampling_ratio_, info.GetInt("sampling_ratio", 0));
    OL_ASSIGN_OR_RETURN(spatial_scale_, info.GetFloat("spatial_scale", 1.0f));
    // Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel.
    OL_ASSIGN_OR_RETURN(std::string transform,
                        info.GetString("coordinate_transformation_mode",
                                       info.opset_version() >= 16 ? "half_pixel" : "output_half_pixel"));
    if (transform != "half_pixel" && transform != "output_half_pixel") {
      return InvalidArgument(info.Where(), ": unknown coordinate_transformation_mode '", transform, "'");
    }
    half_pixel_ = transform == "half_pixel";
    if (out_h_ < 1 || out_w_ < 1 || sampling_ratio_ < 0) {
      return InvalidArgument(info.Where(), ": output_height/output_width must be >= 1 and sampling_ratio >= 0");
    }
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* rois_tensor, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* batch_tensor, ctx.RequiredInput(2));
    const Shape& xs = x->shape();
    if (xs.rank() != 4) return InvalidArgument(ctx.Where(), ": X must be [N, C, H, W], got ", xs.ToString());
    OL_ASSIGN_OR_RETURN(std::vector<double> rois, ReadRois(ctx, *rois_tensor, 4));
    const int64_t num_rois = rois_tensor->shape()[0];
    if (batch_tensor->dtype() != DataType::kInt64 || batch_tensor->num_elements() != num_rois) {
      return InvalidArgument(ctx.Where(), ": batch_indices must be int64 [", num_rois, "], got ",
                             batch_tensor->TypeAndShape());
    }
    const int64_t* batch = batch_tensor->data<int64_t>();
    for (int64_t r = 0; r < num_rois; ++r) {
      if (batch[r] < 0 || batch[r] >= xs[0]) {
        return InvalidArgument(ctx.Where(), ": batch index ", batch[r], " of roi ", r, " is outside [0, ", xs[0], ")");
      }
    }
    const int64_t C = xs[1], H = xs[2], W = xs[3];
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape({num_rois, C, out_h_, out_w_})));
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      const int64_t grid_guess = sampling_ratio_ > 0 ? sampling_ratio_ * sampling_ratio_ : 4;
      const int64_t plane_out = out_h_ * out_w_;
      return tuning_.Run(
          ctx.parallel(), "roialign.planes", num_rois * C, plane_out * grid_guess * 4, [&](int64_t begin, int64_t end) {
            std::vector<Sample<A>> table;
            Grid grid;
            int64_t table_roi = -1;
            for (int64_t plane = begin; plane < end; ++plane) {
              const int64_t r = plane / C, c = plane % C;
              if (r != table_roi) grid = BuildTable(&rois[r * 4], H, W, table), table_roi = r;
              AlignPlane<T>(in + (batch[r] * C + c) * H * W, table.data(), grid, out + plane * plane_out);
            }
          });
    });
  }

 private:
  // One sample point: the input offsets of its 4 bilinear corners and their weights (all 0
  // for a point outside the map, which then contributes 0).
  template <typename A>
  struct Sample {
    int64_t offset[4];
    A weight[4];
  };
  struct Grid {
    int64_t h = 0, w = 0;  // sample points per bin along y and x
  };

  // The sample table of one roi, in (ph, pw, iy, ix) order; sample coordinates in double.
  template <typename A>
  Grid BuildTable(const double* roi, int64_t H, int64_t W, std::vector<Sample<A>>& table) const {
    const double offset = half_pixel_ ? 0.5 : 0.0;
    const double start_w = roi[0] * spatial_scale_ - offset, start_h = roi[1] * spatial_scale_ - offset;
    double roi_w = roi[2] * spatial_scale_ - offset - start_w, roi_h = roi[3] * spatial_scale_ - offset - start_h;
    if (!half_pixel_) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
    const double bin_h = roi_h / out_h_, bin_w = roi_w / out_w_;
    Grid g;
    g.h = std::max<int64_t>(0, sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_h / out_h_)));
    g.w = std::max<int64_t>(0, sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_w / out_w_)));
    table.resize(out_h_ * out_w_ * g.h * g.w);
    Sample<A>* s = table.data();
    for (int64_t ph = 0; ph < out_h_; ++ph) {
      for (int64_t pw = 0; pw < out_w_; ++pw) {
        for (int64_t iy = 0; iy < g.h; ++iy) {
          const double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / g.h;
          for (int64_t ix = 0; ix < g.w; ++ix, ++s) {
            const double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / g.w;
            if (yy < -1.0 || yy > H || xx < -1.0 || xx > W) {
              *s = Sample<A>{{0, 0, 0, 0}, {A(0), A(0), A(0), A(0)}};
              continue;
            }
            double y = std::max(yy, 0.0), x = std::max(xx, 0.0);
            int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
            if (y0 >= H - 1)
              y1 = y0 = H - 1, y = static_cast<double>(y0);
            else
              y1 = y0 + 1;
            if (x0 >= W - 1)
              x1 = x0 = W - 1, x = static_cast<double>(x0);
            else
              x1 = x0 + 1;
            const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
            *s = Sample<A>{
                {y0 * W + x0, y0 * W + x1, y1 * W + x0, y1 * W + x1},
                {static_cast<A>(hy * hx), static_cast<A>(hy * lx), static_cast<A>(ly * hx), static_cast<A>(ly * lx)}};
          }
        }
      }
    }
    return g;
  }

  // One output plane from one input plane through the roi's table.
  template <typename T, typename A = typename Numeric<T>::Acc>
  void AlignPlane(const T* xp, const Sample<A>* s, Grid g, T* yp) const {
    const int64_t samples = g.h * g.w;
    const A count = static_cast<A>(std::max<int64_t>(samples, 1));
    auto at = [&](int64_t offset) { return static_cast<A>(Numeric<T>::Load(xp[offset])); };
    for (int64_t o = 0; o < out_h_ * out_w_; ++o) {
      A acc = 0;
      if (max_mode_) {
        for (int64_t i = 0; i < samples; ++i, ++s) {
          const A v = std::max(std::max(s->weight[0] * at(s->offset[0]), s->weight[1] * at(s->offset[1])),
                               std::max(s->weight[2] * at(s->offset[2]), s->weight[3] * at(s->offset[3])));
          acc = i == 0 ? v : std::max(acc, v);
        }
        yp[o] = Numeric<T>::Store(acc);
      } else {
        for (int64_t i = 0; i < samples; ++i, ++s) {
          acc += s->weight[0] * at(s->offset[0]) + s->weight[1] * at(s->offset[1]) + s->weight[2] * at(s->offset[2]) +
                 s->weight[3] * at(s->offset[3]);
        }
        yp[o] = Numeric<T>::Store(acc / count);
      }
    }
  }

  bool max_mode_ = false, half_pixel_ = true;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.0f;
  ThresholdedParallel tuning_;
};

class MaxRoiPoolKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(pooled_, info.GetInts("pooled_shape"));
    if (pooled_.size() != 2 || pooled_[0] < 1 || pooled_[1] < 1) {
      return InvalidArgument(info.Where(), ": pooled_shape must be two positive values");
    }
    OL_ASSIGN_OR_RETURN(spatial_scale_, info.GetFloat("spatial_scale", 1.0f));
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* rois_tensor, ctx.RequiredInput(1));
    const Shape& xs = x->shape();
    if (xs.rank() != 4) return InvalidArgument(ctx.Where(), ": X must be [N, C, H, W], got ", xs.ToString());
    OL_ASSIGN_OR_RETURN(std::vector<double> rois, ReadRois(ctx, *rois_tensor, 5));
    const int64_t num_rois = rois_tensor->shape()[0], C = xs[1], H = xs[2], W = xs[3];
    for (int64_t r = 0; r < num_rois; ++r) {
      if (!(rois[r * 5] >= 0 && rois[r * 5] < static_cast<double>(xs[0]))) {
        return InvalidArgument(ctx.Where(), ": batch index ", rois[r * 5], " of roi ", r, " is outside [0, ", xs[0],
                               ")");
      }
    }
    const int64_t PH = pooled_[0], PW = pooled_[1];
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape({num_rois, C, PH, PW})));
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      return ForEachPlane(
          ctx, tuning_, "maxroipool.planes", num_rois * C, H * W / std::max<int64_t>(1, num_rois), [&](int64_t plane) {
            const int64_t r = plane / C, c = plane % C;
            const double* roi = &rois[r * 5];
            const T* xp = in + (static_cast<int64_t>(roi[0]) * C + c) * H * W;
            const int64_t start_w = std::llround(roi[1] * spatial_scale_),
                          start_h = std::llround(roi[2] * spatial_scale_);
            const int64_t end_w = std::llround(roi[3] * spatial_scale_), end_h = std::llround(roi[4] * spatial_scale_);
            const double bin_h = static_cast<double>(std::max<int64_t>(end_h - start_h + 1, 1)) / PH;
            const double bin_w = static_cast<double>(std::max<int64_t>(end_w - start_w + 1, 1)) / PW;
            for (int64_t ph = 0; ph < PH; ++ph) {
              const int64_t h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ph * bin_h)) + start_h, 0, H);
              const int64_t h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + start_h, 0, H);
              for (int64_t pw = 0; pw < PW; ++pw) {
                const int64_t w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(pw * bin_w)) + start_w, 0, W);
                const int64_t w1 =
                    std::clamp<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + start_w, 0, W);
                A best = (h1 <= h0 || w1 <= w0) ? A(0) : -std::numeric_limits<A>::infinity();  // empty bin: 0
                for (int64_t h = h0; h < h1; ++h) {
                  for (int64_t w = w0; w < w1; ++w) best = std::max<A>(best, Numeric<T>::Load(xp[h * W + w]));
                }
                out[(plane * PH + ph) * PW + pw] = Numeric<T>::Store(best);
              }
            }
          });
    });
  }

 private:
  std::vector<int64_t> pooled_;
  float spatial_scale_ = 1.0f;
  ThresholdedParallel tuning_;
};

}  // namespace

OL_REGISTER_KERNELS(pooling_roi) {
  using RoiFloats = TypeList<Float16, float, double>;
  using RoiFloatsBf = TypeList<Float16, float, double, BFloat16>;
  Kernel("RoiAlign")
      .Opsets({Since(10, RoiFloats{}), Since(16, RoiFloats{}), Since(22, RoiFloatsBf{})})
      .Tuning(RoiTuningParams())
      .Factory(MakeKernel<RoiAlignKernel>())
      .AddTo(registry);
  Kernel("MaxRoiPool")
      .Opsets({Since(1, RoiFloats{}), Since(22, RoiFloatsBf{})})
      .Tuning(RoiTuningParams())
      .Factory(MakeKernel<MaxRoiPoolKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
