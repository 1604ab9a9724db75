// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is flattened to 2-D at `axis`
// (default 1) and each row of the flattened tail is normalised; from opset 13 only the
// single `axis` (default -1) is. Rows (or tiles of strided lanes) are independent, so
// they are split across participants; each lane's arithmetic never depends on the split.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/simd/rows.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Portable parallel.minimum_elements defaults: the serial run must last about 100 us
// (about three times the ~30 us, 100k-cycle cost of opening a region). Serial costs per
// element from benchmarks/reduce_norm.
// Softmax/LogSoftmax: ~3.2 ns/element for float16/bfloat16/double; float's vector rows run
// at ~0.6 ns/element, so a float region opens from ~20 us of serial work (yet measured
// 1.5x faster at 2 threads on 98k elements, benchmarks/softmax_layernorm_vs_ort.py).
constexpr int64_t kExpMinimum = int64_t{1} << 15;
constexpr int64_t kHardmaxMinimum = int64_t{1} << 16;  // compare + write: ~1.4 ns/element

// Strided lanes are processed this many at a time (stack buffers; changes no result).
constexpr int64_t kTileLanes = 128;

template <typename A>
A MaxPropagatingNan(A a, A b) {
  return (std::isnan(a) || std::isnan(b)) ? a + b : (a < b ? b : a);
}

// One lane of `length` elements at stride `stride` (1 for contiguous rows).
template <SoftmaxKind K, typename T>
void NormalizeLane(const T* x, T* y, int64_t length, int64_t stride) {
  using N = Numeric<T>;
  using A = typename N::Acc;
  if constexpr (K == SoftmaxKind::kHardmax) {
    int64_t best_k = 0;
    A best = N::Load(x[0]);
    for (int64_t k = 1; k < length && !std::isnan(best); ++k) {  // first maximum; NaN wins
      const A v = N::Load(x[k * stride]);
      if (std::isnan(v) || best < v) best = v, best_k = k;
    }
    for (int64_t k = 0; k < length; ++k) y[k * stride] = N::Store(A(k == best_k ? 1 : 0));
  } else {
    A m = -std::numeric_limits<A>::infinity();
    for (int64_t k = 0; k < length; ++k) m = MaxPropagatingNan(m, N::Load(x[k * stride]));
    // Where y can hold an unrounded exp (T is its own accumulator type), exp runs once.
    constexpr bool kKeepExp = K == SoftmaxKind::kSoftmax && std::is_same_v<T, A>;
    A sum = 0;
    for (int64_t k = 0; k < length; ++k) {
      const A e = std::exp(N::Load(x[k * stride]) - m);
      if constexpr (kKeepExp) y[k * stride] = e;
      sum += e;
    }
    if constexpr (K == SoftmaxKind::kLogSoftmax) {
      const A shift = m + std::log(sum);
      for (int64_t k = 0; k < length; ++k) y[k * stride] = N::Store(N::Load(x[k * stride]) - shift);
    } else if constexpr (kKeepExp) {
      const A scale = A(1) / sum;
      for (int64_t k = 0; k < length; ++k) y[k * stride] *= scale;
    } else {
      const A scale = A(1) / sum;
      for (int64_t k = 0; k < length; ++k) y[k * stride] = N::Store(std::exp(N::Load(x[k * stride]) - m) * scale);
    }
  }
}

// `lanes` adjacent strided lanes together, so every step along the axis reads contiguous
// memory; per lane the same operations in the same order as NormalizeLane.
template <SoftmaxKind K, typename T>
void NormalizeLaneTile(const T* x, T* y, int64_t length, int64_t inner, int64_t lanes) {
  using N = Numeric<T>;
  using A = typename N::Acc;
  if constexpr (K == SoftmaxKind::kHardmax) {
    for (int64_t j = 0; j < lanes; ++j) NormalizeLane<K, T>(x + j, y + j, length, inner);
  } else {
    A m[kTileLanes], sum[kTileLanes];
    for (int64_t j = 0; j < lanes; ++j) m[j] = -std::numeric_limits<A>::infinity(), sum[j] = 0;
    for (int64_t k = 0; k < length; ++k) {
      for (int64_t j = 0; j < lanes; ++j) m[j] = MaxPropagatingNan(m[j], N::Load(x[k * inner + j]));
    }
    for (int64_t k = 0; k < length; ++k) {
      for (int64_t j = 0; j < lanes; ++j) sum[j] += std::exp(N::Load(x[k * inner + j]) - m[j]);
    }
    for (int64_t j = 0; j < lanes; ++j) {
      if constexpr (K == SoftmaxKind::kLogSoftmax)
        sum[j] = m[j] + std::log(sum[j]);
      else
        sum[j] = A(1) / sum[j];
    }
    for (int64_t k = 0; k < length; ++k) {
      for (int64_t j = 0; j < lanes; ++j) {
        const A v = N::Load(x[k * inner + j]);
        if constexpr (K == SoftmaxKind::kLogSoftmax)
          y[k * inner + j] = N::Store(v - sum[j]);
        else
          y[k * inner + j] = N::Store(std::exp(v - m[j]) * sum[j]);
      }
    }
  }
}

// float: the vectorised rows of simd/rows.h (its exp flushes results below float's
// normal range to 0, within 2^-126 of the exact value).
template <SoftmaxKind K>
void NormalizeFloatRow(const float* x, float* y, int64_t length) {
  if constexpr (K == SoftmaxKind::kLogSoftmax)
    simd::LogSoftmaxRow(x, y, length);
  else
    simd::SoftmaxRow(x, y, length);
}

// `lanes` adjacent strided float lanes: every step along the axis is one contiguous
// lane-wise vector operation; per lane the same arithmetic as NormalizeFloatRow's rows.
template <SoftmaxKind K>
void NormalizeFloatLaneTile(const float* x, float* y, int64_t length, int64_t inner, int64_t lanes) {
  float m[kTileLanes], sum[kTileLanes];
  std::copy(x, x + lanes, m);
  std::fill(sum, sum + lanes, 0.0f);
  for (int64_t k = 1; k < length; ++k) simd::MaxInto(x + k * inner, m, lanes);
  for (int64_t k = 0; k < length; ++k) simd::ExpShiftedAccumulate(x + k * inner, m, y + k * inner, sum, lanes);
  for (int64_t j = 0; j < lanes; ++j) {
    if constexpr (K == SoftmaxKind::kLogSoftmax)
      sum[j] = m[j] + std::log(sum[j]);
    else
      sum[j] = 1.0f / sum[j];
  }
  for (int64_t k = 0; k < length; ++k) {
    const float* xk = x + k * inner;
    float* yk = y + k * inner;
    for (int64_t j = 0; j < lanes; ++j) {
      if constexpr (K == SoftmaxKind::kLogSoftmax)
        yk[j] = xk[j] - sum[j];
      else
        yk[j] *= sum[j];
    }
  }
}

// Rows or tiles of one lane space [begin, end) of outer * inner lanes.
template <SoftmaxKind K, typename T>
void NormalizeLanes(const T* x, T* y, int64_t length, int64_t inner, int64_t begin, int64_t end) {
  constexpr bool kVector = std::is_same_v<T, float> && K != SoftmaxKind::kHardmax;
  if (inner == 1) {
    for (int64_t r = begin; r < end; ++r) {
      if constexpr (kVector)
        NormalizeFloatRow<K>(x + r * length, y + r * length, length);
      else
        NormalizeLane<K, T>(x + r * length, y + r * length, length, 1);
    }
    return;
  }
  ForEachLaneTile(length, inner, kTileLanes, begin, end, [&](int64_t offset, int64_t, int64_t n) {
    if constexpr (kVector)
      NormalizeFloatLaneTile<K>(x + offset, y + offset, length, inner, n);
    else
      NormalizeLaneTile<K, T>(x + offset, y + offset, length, inner, n);
  });
}

template <SoftmaxKind K>
class SoftmaxKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    flatten_ = info.opset_version() < 13;
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", flatten_ ? 1 : -1));
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    const Shape& shape = input->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(axis_, shape, ctx.Where()));
    const int64_t outer = shape.SizeTo(axis);
    const int64_t length = flatten_ ? shape.SizeFrom(axis) : shape[axis];
    const int64_t inner = flatten_ ? 1 : shape.SizeFrom(axis + 1);
    OL_ASSIGN_OR_RETURN(Tensor * output, ctx.AllocateOutput(0, input->dtype(), shape));
    if (outer * length * inner == 0) return Status::Ok();
    return DispatchType(FloatTypes{}, input->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = input->data<T>();
      T* y = output->data<T>();
      auto lanes = [&](int64_t begin, int64_t end) {
        NormalizeLanes<K, T>(x, y, length, inner, begin, end);
        return Status::Ok();
      };
      return parallel_.Run(ctx.parallel(), "softmax.lanes", outer * inner, length, lanes);
    });
  }

 private:
  bool flatten_ = false;
  int64_t axis_ = -1;
  ThresholdedParallel parallel_;
};

using LegacySoftmaxTypes = TypeList<Float16, float, double>;
using SoftmaxTypes = TypeList<Float16, float, double, BFloat16>;

std::vector<ParamSpec> SoftmaxTuning(int64_t minimum_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the op runs serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

}  // namespace

OL_REGISTER_KERNELS(softmax_family) {
  const std::vector<OpsetTypes> history = {Since(1, LegacySoftmaxTypes{}), Since(11, LegacySoftmaxTypes{}),
                                           Since(13, SoftmaxTypes{})};
  Kernel("Softmax")
      .Opsets(history)
      .Tuning(SoftmaxTuning(kExpMinimum))
      .Factory(MakeKernel<SoftmaxKernel<SoftmaxKind::kSoftmax>>())
      .AddTo(registry);
  Kernel("LogSoftmax")
      .Opsets(history)
      .Tuning(SoftmaxTuning(kExpMinimum))
      .Factory(MakeKernel<SoftmaxKernel<SoftmaxKind::kLogSoftmax>>())
      .AddTo(registry);
  Kernel("Hardmax")
      .Opsets(history)
      .Tuning(SoftmaxTuning(kHardmaxMinimum))
      .Factory(MakeKernel<SoftmaxKernel<SoftmaxKind::kHardmax>>())
      .AddTo(registry);
}

}  // namespace onnx_light
