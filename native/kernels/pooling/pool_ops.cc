// MaxPool (with Indices), AveragePool, LpPool and their Global* forms. Every output
// element is independent: the window ops split the flattened [N*C, out...] output space
// (2-D float/double pools and int8/uint8 MaxPool, without Indices, split [N*C, out rows]
// and take the row-interior fast path of pool_rows.h), the global ops split the N*C planes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/pooling/pool_geometry.h"
#include "native/kernels/pooling/pool_rows.h"
#include "native/kernels/pooling/pool_window.h"
#include "native/kernels/reduce_util/numeric.h"

namespace onnx_light {
namespace {

using MaxPoolTypes = TypeList<Float16, float, double, BFloat16, int8_t, uint8_t>;

struct PoolTuning {
  ThresholdedParallel outputs;  // input reads (outputs x window) below which the pool runs serially
  ThresholdedParallel rows;     // the same for the 2-D row path (window pools only)
};

// Portable parallel.minimum_elements defaults: the serial run must last about 100 us
// (about three times the ~30 us, 100k-cycle cost of opening a region). Serial costs from
// benchmarks/reduce_norm.
constexpr int64_t kMaxPoolMinimum = int64_t{1} << 16;     // window taps: ~1.7 ns/tap
constexpr int64_t kSumPoolMinimum = int64_t{1} << 15;     // AveragePool/LpPool taps: ~4.8 ns/tap
constexpr int64_t kGlobalPoolMinimum = int64_t{1} << 18;  // contiguous planes: ~0.35 ns/element
// The 2-D row path (pool_rows.h), from benchmarks/pooling_vs_ort (AVX2, float; the byte
// MaxPool rows are cheaper per tap, so the float threshold is conservative for them):
constexpr int64_t kRowPoolMinimum = int64_t{1} << 19;    // MaxPool/AveragePool: ~0.15-0.25 ns/tap
constexpr int64_t kLpRowPoolMinimum = int64_t{1} << 18;  // LpPool: ~0.4 ns/tap

// row_minimum > 0: a window pool, which also has the row path's threshold.
std::vector<ParamSpec> PoolTuningParams(int64_t minimum_elements, int64_t row_minimum) {
  std::vector<ParamSpec> params = {
      MinimumElementsParam(minimum_elements, "input reads (outputs x window taps) below which the pool runs serially"),
      ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40, "smallest parallel block, in input reads")};
  if (row_minimum > 0) {
    params.push_back(ParamSpec::Int64(param::kMinimumRowReads, row_minimum, 1, int64_t{1} << 40,
                                      "input reads below which a 2-D float/double pool or int8/uint8 MaxPool "
                                      "without Indices (the vectorised row path) runs serially"));
  }
  return params;
}

StatusOr<PoolTuning> ReadPoolTuning(const KernelInfo& info, bool window) {
  PoolTuning t;
  OL_RETURN_IF_ERROR(t.outputs.Init(info));
  if (window) OL_RETURN_IF_ERROR(t.rows.Init(info, param::kMinimumRowReads));
  return t;
}

// LpPool's p: a float before opset 2, an int after.
StatusOr<int64_t> ReadP(const KernelInfo& info) {
  const Attribute* a = info.FindAttribute("p");
  if (a != nullptr && a->type == Attribute::Type::kFloat) return static_cast<int64_t>(a->f);
  OL_ASSIGN_OR_RETURN(int64_t p, info.GetInt("p", 2));
  if (p < 1) return InvalidArgument(info.Where(), ": p must be >= 1, got ", p);
  return p;
}

// Output elements [begin, end) of the flattened [planes, out...] space.
template <PoolKind K, typename T>
void PoolOutputs(const PoolGeometry& g, const PoolOptions& opt, const T* x, T* y, int64_t* indices, int64_t begin,
                 int64_t end) {
  using A = typename Numeric<T>::Acc;
  const int r = g.rank;
  std::array<int64_t, kMaxPoolRank> o{}, in_stride{}, w{};
  in_stride[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * g.in[d + 1];
  int64_t rem = begin % g.out_plane;
  for (int d = r - 1; d >= 0; --d) o[d] = rem % g.out[d], rem /= g.out[d];

  for (int64_t out = begin; out < end; ++out) {
    const int64_t plane = out / g.out_plane;
    const T* xp = x + plane * g.in_plane;
    std::array<WindowSpan, kMaxPoolRank> span;
    bool empty = false;
    int64_t padded_taps = 1;
    for (int d = 0; d < r; ++d) {
      span[d] = SpanOf(g, d, o[d]);
      empty = empty || span[d].lo == span[d].hi;
      w[d] = span[d].lo;
      const int64_t reach = g.in[d] + g.pad_end[d] - span[d].start;  // taps inside the padded input
      padded_taps *= std::min(g.kernel[d], (reach + g.dilation[d] - 1) / g.dilation[d]);
    }
    A acc = K == PoolKind::kMax ? std::numeric_limits<A>::lowest() : A(0);
    if constexpr (K == PoolKind::kMax) {
      if constexpr (std::numeric_limits<A>::has_infinity) acc = -std::numeric_limits<A>::infinity();
    }
    int64_t best = -1, taps = 0;
    const int last = r - 1;
    while (!empty) {
      int64_t offset = 0;
      for (int d = 0; d < last; ++d) offset += (span[d].start + w[d] * g.dilation[d]) * in_stride[d];
      for (int64_t t = span[last].lo; t < span[last].hi; ++t) {
        const int64_t at = offset + span[last].start + t * g.dilation[last];
        const A v = Numeric<T>::Load(xp[at]);
        if constexpr (K == PoolKind::kMax) {
          if (v > acc || best < 0) acc = v, best = at;
        } else if constexpr (K == PoolKind::kAverage) {
          acc += v;
        } else {
          acc += LpPower(v, opt.p);
        }
      }
      taps += span[last].hi - span[last].lo;
      int d = last - 1;  // advance the outer taps
      for (; d >= 0; --d) {
        if (++w[d] < span[d].hi) break;
        w[d] = span[d].lo;
      }
      if (d < 0) break;
    }
    if constexpr (K == PoolKind::kAverage) {
      const int64_t count = opt.count_include_pad ? padded_taps : taps;
      acc = count > 0 ? acc / static_cast<A>(count) : A(0);
    } else if constexpr (K == PoolKind::kLp) {
      acc = LpRoot(acc, opt.p);
    }
    y[out] = Numeric<T>::Store(acc);
    if (indices != nullptr) {
      int64_t spatial = std::max<int64_t>(best, 0);
      if (opt.column_major_indices) {
        int64_t col = 0, col_stride = 1, row = spatial;
        std::array<int64_t, kMaxPoolRank> idx{};
        for (int d = r - 1; d >= 0; --d) idx[d] = row % g.in[d], row /= g.in[d];
        for (int d = 0; d < r; ++d) col += idx[d] * col_stride, col_stride *= g.in[d];
        spatial = col;
      }
      indices[out] = plane * g.in_plane + spatial;
    }
    for (int d = r - 1; d >= 0; --d) {  // next output position
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

template <PoolKind K>
class PoolKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(attrs_.Init(info));
    if constexpr (K == PoolKind::kAverage) {
      OL_ASSIGN_OR_RETURN(int64_t include, info.GetInt("count_include_pad", 0));
      options_.count_include_pad = include != 0;
    }
    if constexpr (K == PoolKind::kMax) {
      OL_ASSIGN_OR_RETURN(int64_t order, info.GetInt("storage_order", 0));
      options_.column_major_indices = order != 0;
    }
    if constexpr (K == PoolKind::kLp) {
      OL_ASSIGN_OR_RETURN(options_.p, ReadP(info));
    }
    OL_ASSIGN_OR_RETURN(tuning_, ReadPoolTuning(info, /*window=*/true));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(PoolGeometry g, MakePoolGeometry(attrs_, x->shape(), ctx.Where()));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), g.output_shape));
    int64_t* indices = nullptr;
    if (K == PoolKind::kMax && ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * i, ctx.AllocateOutput(1, DataType::kInt64, g.output_shape));
      indices = i->data<int64_t>();
    }
    const int64_t outputs = g.planes * g.out_plane;
    int64_t window = 1;
    for (int d = 0; d < g.rank; ++d) window *= g.kernel[d];
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      constexpr bool kByteMax = K == PoolKind::kMax && (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || kByteMax) {
        if (g.rank == 2 && indices == nullptr) {
          const int64_t rows = g.planes * g.out[0];
          auto row_block = [&](int64_t begin, int64_t end) {
            PoolRows2d<K, T>(g, options_, in, out, begin, end);
            return Status::Ok();
          };
          return tuning_.rows.Run(ctx.parallel(), "pool.rows", rows, window * g.out[1], row_block);
        }
      }
      auto block = [&](int64_t begin, int64_t end) {
        PoolOutputs<K, T>(g, options_, in, out, indices, begin, end);
        return Status::Ok();
      };
      return tuning_.outputs.Run(ctx.parallel(), "pool.outputs", outputs, window, block);
    };
    if constexpr (K == PoolKind::kMax)
      return DispatchType(MaxPoolTypes{}, x->dtype(), ctx.Where(), run);
    else
      return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), run);
  }

 private:
  PoolAttributes attrs_;
  PoolOptions options_;
  PoolTuning tuning_;
};

// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one value per [n, c] plane.
template <PoolKind K>
class GlobalPoolKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if constexpr (K == PoolKind::kLp) {
      OL_ASSIGN_OR_RETURN(p_, ReadP(info));
    }
    OL_ASSIGN_OR_RETURN(tuning_, ReadPoolTuning(info, /*window=*/false));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& s = x->shape();
    if (s.rank() < 2) {
      return InvalidArgument(ctx.Where(), ": input must have rank >= 2 ([N, C, ...]), got shape ", s.ToString());
    }
    std::vector<int64_t> dims = s.dims();
    std::fill(dims.begin() + 2, dims.end(), 1);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape(dims)));
    const int64_t planes = s[0] * s[1], plane = s.SizeFrom(2);
    return DispatchType(FloatTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      // Planes [first, first + L): L independent in-order folds interleaved, so that the
      // chains overlap; each plane's result is the same as folding it alone.
      auto planes_at = [&](auto lanes, int64_t first) {
        constexpr int L = decltype(lanes)::value;
        A acc[L];
        for (int l = 0; l < L; ++l) acc[l] = K == PoolKind::kMax ? -std::numeric_limits<A>::infinity() : A(0);
        const T* xp = in + first * plane;
        for (int64_t i = 0; i < plane; ++i) {
          for (int l = 0; l < L; ++l) {
            const A v = Numeric<T>::Load(xp[l * plane + i]);
            if constexpr (K == PoolKind::kMax)
              acc[l] = v > acc[l] ? v : acc[l];
            else if constexpr (K == PoolKind::kAverage)
              acc[l] += v;
            else
              acc[l] += LpPower(v, p_);
          }
        }
        for (int l = 0; l < L; ++l) {
          if constexpr (K == PoolKind::kAverage) acc[l] /= static_cast<A>(plane);
          if constexpr (K == PoolKind::kLp) acc[l] = LpRoot(acc[l], p_);
          out[first + l] = Numeric<T>::Store(acc[l]);
        }
      };
      // The unit of work is a group of 8 planes (the last one shorter): a participant
      // always folds whole groups, so every plane takes the same path (interleaved or
      // tail) whatever the split, and no block falls back to one latency-bound chain.
      constexpr int64_t kGroup = 8;
      auto groups_of = [&](int64_t begin, int64_t end) {
        const int64_t last = std::min(end * kGroup, planes);
        int64_t p = begin * kGroup;
        for (; p + kGroup <= last; p += kGroup) planes_at(std::integral_constant<int, kGroup>{}, p);
        for (; p < last; ++p) planes_at(std::integral_constant<int, 1>{}, p);
        return Status::Ok();
      };
      return tuning_.outputs.Run(ctx.parallel(), "globalpool.planes", (planes + kGroup - 1) / kGroup, kGroup * plane,
                                 groups_of);
    });
  }

 private:
  int64_t p_ = 2;
  PoolTuning tuning_;
};

std::vector<DataType> PoolFloats(int opset) {
  std::vector<DataType> t = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  if (opset >= 22) t.push_back(DataType::kBFloat16);
  return t;
}

}  // namespace

OL_REGISTER_KERNELS(pooling_family) {
  Kernel("MaxPool")
      .SinceVersions({1, 8, 10, 11, 12, 22})
      .TypesAt([](int v) {
        std::vector<DataType> types = PoolFloats(v);
        if (v >= 12) types.insert(types.end(), {DataType::kInt8, DataType::kUint8});
        return types;
      })
      .Tuning(PoolTuningParams(kMaxPoolMinimum, kRowPoolMinimum))
      .Factory(MakeKernel<PoolKernel<PoolKind::kMax>>())
      .AddTo(registry);
  Kernel("AveragePool")
      .SinceVersions({1, 7, 10, 11, 19, 22})
      .TypesAt(PoolFloats)
      .Tuning(PoolTuningParams(kSumPoolMinimum, kRowPoolMinimum))
      .Factory(MakeKernel<PoolKernel<PoolKind::kAverage>>())
      .AddTo(registry);
  Kernel("LpPool")
      .SinceVersions({1, 2, 11, 18, 22})
      .TypesAt(PoolFloats)
      .Tuning(PoolTuningParams(kSumPoolMinimum, kLpRowPoolMinimum))
      .Factory(MakeKernel<PoolKernel<PoolKind::kLp>>())
      .AddTo(registry);
  Kernel("GlobalAveragePool")
      .SinceVersions({1, 22})
      .TypesAt(PoolFloats)
      .Tuning(PoolTuningParams(kGlobalPoolMinimum, 0))
      .Factory(MakeKernel<GlobalPoolKernel<PoolKind::kAverage>>())
      .AddTo(registry);
  Kernel("GlobalMaxPool")
      .SinceVersions({1, 22})
      .TypesAt(PoolFloats)
      .Tuning(PoolTuningParams(kGlobalPoolMinimum, 0))
      .Factory(MakeKernel<GlobalPoolKernel<PoolKind::kMax>>())
      .AddTo(registry);
  Kernel("GlobalLpPool")
      .SinceVersions({1, 2, 22})
      .TypesAt(PoolFloats)
      .Tuning(PoolTuningParams(kGlobalPoolMinimum, 0))
      .Factory(MakeKernel<GlobalPoolKernel<PoolKind::kLp>>())
      .AddTo(registry);
}

}  // namespace onnx_light
