// QLinearAveragePool and QLinearGlobalAveragePool (com.microsoft, 1), NCHW or channels_last
// (NHWC) layouts: the window sum of (x - x_zero_point) is exact in int32, then
// y = Quantize(x_scale * sum / count). count is the window's taps inside the input, or,
// with count_include_pad, inside the padded input (pads count as the zero point, i.e. 0).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/pooling/pool_geometry.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

// The pooled value of one window, given its int32 sum and tap count.
inline float Average(int64_t sum, int64_t count, const QParams& x) {
  return x.scale * (static_cast<float>(sum) / static_cast<float>(count));
}

// The shared pool geometry (pooling/pool_geometry.h) of the input seen as [N, C] + spatial,
// with the output shape in the input's own layout.
struct Geometry : PoolGeometry {
  int64_t batch = 0, channels = 0;
};

class QLinearAveragePoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_RETURN_IF_ERROR(attrs_.Init(info));
    OL_ASSIGN_OR_RETURN(const int64_t include_pad, info.GetInt("count_include_pad", 0));
    OL_ASSIGN_OR_RETURN(const int64_t channels_last, info.GetInt("channels_last", 0));
    count_include_pad_ = include_pad != 0;
    channels_last_ = channels_last != 0;
    for (const int64_t dilation : attrs_.dilations) {
      if (dilation != 1) return InvalidArgument(info.Where(), ": QLinearAveragePool takes no dilations");
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_RETURN_IF_ERROR(CheckEightBit(*x, where, "X"));
    OL_ASSIGN_OR_RETURN(const QParams px,
                        ReadQParams(ctx.input(1), ctx.input(2), x->dtype(), where, "x_scale", "x_zero_point"));
    OL_ASSIGN_OR_RETURN(const QParams py,
                        ReadQParams(ctx.input(3), ctx.input(4), x->dtype(), where, "y_scale", "y_zero_point"));
    OL_ASSIGN_OR_RETURN(const Geometry g, MakeGeometry(x->shape(), where));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), g.output_shape));
    int64_t window = 1;
    for (int d = 0; d < g.rank; ++d) window *= g.kernel[d];
    const int64_t outputs = y->num_elements();
    return DispatchType(EightBit{}, x->dtype(), where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const Q* xv = x->data<Q>();
      Q* yv = y->data<Q>();
      // One unit = one output element; its window costs `window` reads.
      return parallel_.Run(ctx.parallel(), "qlinear_average_pool.outputs", outputs, window,
                           [&](int64_t begin, int64_t end) {
                             for (int64_t o = begin; o < end; ++o) yv[o] = Quantize<Q>(Pool(g, xv, px, o), py);
                           });
    });
  }

 private:
  StatusOr<Geometry> MakeGeometry(const Shape& x, const std::string& where) const {
    const int rank = static_cast<int>(attrs_.kernel.size());
    if (x.rank() != rank + 2) {
      return InvalidArgument(where, ": input shape ", x.ToString(), " must have rank ", rank + 2, " (",
                             channels_last_ ? "[N] + spatial + [C]" : "[N, C] + spatial", " for ", rank,
                             " kernel_shape dims)");
    }
    std::vector<int64_t> nchw = x.dims();
    if (channels_last_) {
      nchw.insert(nchw.begin() + 1, nchw.back());
      nchw.pop_back();
    }
    OL_ASSIGN_OR_RETURN(PoolGeometry pool, MakePoolGeometry(attrs_, Shape(nchw), where));
    Geometry g;
    static_cast<PoolGeometry&>(g) = std::move(pool);
    g.batch = nchw[0];
    g.channels = nchw[1];
    if (channels_last_) {
      std::vector<int64_t> out = g.output_shape.dims();
      out.push_back(out[1]);
      out.erase(out.begin() + 1);
      g.output_shape = Shape(out);
    }
    return g;
  }

  // The average of output element `o` (in the output's layout), dequantized.
  template <typename Q>
  float Pool(const Geometry& g, const Q* x, const QParams& px, int64_t o) const {
    int64_t n, c, pos;  // batch, channel, spatial index in the output plane
    if (channels_last_) {
      c = o % g.channels;
      pos = (o / g.channels) % g.out_plane;
      n = o / (g.channels * g.out_plane);
    } else {
      pos = o % g.out_plane;
      c = (o / g.out_plane) % g.channels;
      n = o / (g.out_plane * g.channels);
    }
    std::array<int64_t, kMaxPoolRank> lo{}, hi{}, start{};
    int64_t count = 1;
    int64_t rest = pos;
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t od = rest % g.out[d];
      rest /= g.out[d];
      start[d] = od * g.stride[d] - g.pad_begin[d];
      lo[d] = std::max<int64_t>(start[d], 0);
      hi[d] = std::min<int64_t>(start[d] + g.kernel[d], g.in[d]);
      if (count_include_pad_) {
        count *= std::min<int64_t>(start[d] + g.kernel[d], g.in[d] + g.pad_end[d]) - start[d];
      } else {
        count *= std::max<int64_t>(0, hi[d] - lo[d]);
      }
    }
    if (count <= 0) return 0.0f;
    // Walk the valid taps (an odometer over the spatial dims).
    const int64_t plane_base = channels_last_ ? n * g.in_plane * g.channels + c : (n * g.channels + c) * g.in_plane;
    const int64_t step = channels_last_ ? g.channels : 1;
    std::array<int64_t, kMaxPoolRank> idx = lo;
    for (int d = 0; d < g.rank; ++d) {
      if (lo[d] >= hi[d]) return Average(0, count, px);
    }
    int64_t sum = 0;
    while (true) {
      int64_t offset = 0;
      for (int d = 0; d < g.rank; ++d) offset = offset * g.in[d] + idx[d];
      sum += static_cast<int64_t>(x[plane_base + offset * step]) - px.zero_point;
      int d = g.rank - 1;
      while (d >= 0 && ++idx[d] == hi[d]) {
        idx[d] = lo[d];
        --d;
      }
      if (d < 0) break;
    }
    return Average(sum, count, px);
  }

  PoolAttributes attrs_;
  bool count_include_pad_ = false, channels_last_ = false;
  ThresholdedParallel parallel_;
};

class QLinearGlobalAveragePoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_ASSIGN_OR_RETURN(const int64_t channels_last, info.GetInt("channels_last", 0));
    channels_last_ = channels_last != 0;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_RETURN_IF_ERROR(CheckEightBit(*x, where, "X"));
    const Shape& s = x->shape();
    if (s.rank() < 3) {
      return InvalidArgument(where, ": input shape ", s.ToString(), " must have rank >= 3 (N, C and spatial dims)");
    }
    OL_ASSIGN_OR_RETURN(const QParams px,
                        ReadQParams(ctx.input(1), ctx.input(2), x->dtype(), where, "x_scale", "x_zero_point"));
    OL_ASSIGN_OR_RETURN(const QParams py,
                        ReadQParams(ctx.input(3), ctx.input(4), x->dtype(), where, "y_scale", "y_zero_point"));
    const int64_t batch = s[0], channels = channels_last_ ? s[s.rank() - 1] : s[1];
    int64_t spatial = 1;
    std::vector<int64_t> out_dims(s.rank(), 1);
    out_dims[0] = batch;
    out_dims[channels_last_ ? s.rank() - 1 : 1] = channels;
    for (int d = channels_last_ ? 1 : 2, k = 0; k < s.rank() - 2; ++d, ++k) spatial *= s[d];
    if (spatial == 0) return InvalidArgument(where, ": input shape ", s.ToString(), " has an empty spatial extent");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(out_dims)));
    return DispatchType(EightBit{}, x->dtype(), where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const Q* xv = x->data<Q>();
      Q* yv = y->data<Q>();
      if (channels_last_) {
        // A row reduction: image n is `spatial` rows of `channels` contiguous values; a unit
        // is one image's slice of kChannelBlock channels, summed row by row into int32
        // lanes (exact: spatial * 255 fits, else int64 lanes) with a contiguous inner loop.
        const int64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
        const bool narrow = spatial < (int64_t{1} << 23);
        return parallel_.Run(ctx.parallel(), "qlinear_global_average_pool.channels", batch * blocks,
                             spatial * std::min(channels, kChannelBlock), [&](int64_t begin, int64_t end) {
                               for (int64_t u = begin; u < end; ++u) {
                                 const int64_t n = u / blocks, c0 = (u % blocks) * kChannelBlock;
                                 const int64_t width = std::min(kChannelBlock, channels - c0);
                                 const Q* rows = xv + n * spatial * channels + c0;
                                 Q* out = yv + n * channels + c0;
                                 if (narrow) {
                                   ChannelsLastBlock<Q, int32_t>(rows, spatial, channels, width, px, py, out);
                                 } else {
                                   ChannelsLastBlock<Q, int64_t>(rows, spatial, channels, width, px, py, out);
                                 }
                               }
                             });
      }
      // One unit = one (n, c) output: a contiguous plane of `spatial` inputs.
      return parallel_.Run(ctx.parallel(), "qlinear_global_average_pool.channels", batch * channels, spatial,
                           [&](int64_t begin, int64_t end) {
                             for (int64_t u = begin; u < end; ++u) {
                               const Q* base = xv + u * spatial;
                               int64_t sum = 0;
                               for (int64_t e = 0; e < spatial; ++e) sum += base[e];
                               sum -= static_cast<int64_t>(px.zero_point) * spatial;
                               yv[u] = Quantize<Q>(Average(sum, spatial, px), py);
                             }
                           });
    });
  }

 private:
  static constexpr int64_t kChannelBlock = 256;

  // out[c] for c < width: the average of rows[s * stride + c] over s < spatial.
  template <typename Q, typename Acc>
  static void ChannelsLastBlock(const Q* rows, int64_t spatial, int64_t stride, int64_t width, const QParams& px,
                                const QParams& py, Q* out) {
    Acc sums[kChannelBlock] = {};
    for (int64_t s = 0; s < spatial; ++s) {
      const Q* row = rows + s * stride;
      for (int64_t c = 0; c < width; ++c) sums[c] += static_cast<Acc>(row[c]);
    }
    const int64_t shift = static_cast<int64_t>(px.zero_point) * spatial;
    for (int64_t c = 0; c < width; ++c) {
      out[c] = Quantize<Q>(Average(static_cast<int64_t>(sums[c]) - shift, spatial, px), py);
    }
  }

  bool channels_last_ = false;
  ThresholdedParallel parallel_;
};

// Window reads below which a pool runs serially (a read and an add per tap).
constexpr int64_t kPoolMinimumReads = 65536;

std::vector<ParamSpec> PoolTuning() {
  return {
      MinimumElementsParam(kPoolMinimumReads, "input reads (outputs x window taps) below which the node runs serially"),
      ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                       "input reads per parallel block; a block holds max(1, this / reads per output) outputs"),
  };
}

}  // namespace

OL_REGISTER_KERNELS(qlinear_pool_ops) {
  Kernel("QLinearAveragePool")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(PoolTuning())
      .Factory(MakeKernel<QLinearAveragePoolKernel>())
      .AddTo(registry);
  Kernel("QLinearGlobalAveragePool")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(PoolTuning())
      .Factory(MakeKernel<QLinearGlobalAveragePoolKernel>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
