// DynamicQuantizeLinear (opset 11): uint8 quantization of a float tensor with the scale
// and zero point derived from its range [min(0, min x), max(0, max x)].
//
// The range is found over fixed chunks of parallel.block_elements elements (min and max
// are exact, so the result never depends on the participant count), then the tensor is
// quantized in contiguous blocks. NaN elements do not take part in the range.
//
// Both passes are one loop each over the elements, 4 lanes at a time with SSE2 on x86-64
// (the baseline: no ISA variant to choose) and scalar elsewhere and for the tails. The lanes
// compute what the scalar loops compute, bit for bit: min/max are exact and order-free (a
// NaN keeps the running value, as the scalar comparison does; a -0 never replaces +0), the
// division is IEEE, cvtps2dq rounds half to even in the default rounding mode as nearbyint
// does, and the saturating packs are the clamp to [0, 255] (q is clamped to +-1024 first,
// which changes no result since zero is in [0, 255]; a NaN quotient counts as 0).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantization/quant_kernel_base.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace onnx_light {
namespace quantization {
namespace {

struct Range {
  float lo = 0.0f, hi = 0.0f;  // starts at 0: the range always contains zero
};

Range RangeOf(const float* x, int64_t begin, int64_t end) {
  Range r;
  int64_t i = begin;
#if defined(__x86_64__)
  if (end - begin >= 8) {
    // minps(a, b) = a < b ? a : b and maxps(a, b) = a > b ? a : b: the scalar rule per lane.
    __m128 lo0 = _mm_setzero_ps(), hi0 = _mm_setzero_ps(), lo1 = lo0, hi1 = hi0;
    for (; i + 8 <= end; i += 8) {
      const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
      lo0 = _mm_min_ps(a, lo0);
      hi0 = _mm_max_ps(a, hi0);
      lo1 = _mm_min_ps(b, lo1);
      hi1 = _mm_max_ps(b, hi1);
    }
    alignas(16) float lo[4], hi[4];
    _mm_store_ps(lo, _mm_min_ps(lo0, lo1));
    _mm_store_ps(hi, _mm_max_ps(hi0, hi1));
    for (int l = 0; l < 4; ++l) {
      r.lo = lo[l] < r.lo ? lo[l] : r.lo;
      r.hi = hi[l] > r.hi ? hi[l] : r.hi;
    }
  }
#endif
  for (; i < end; ++i) {
    r.lo = x[i] < r.lo ? x[i] : r.lo;
    r.hi = x[i] > r.hi ? x[i] : r.hi;
  }
  return r;
}

// y[i] = saturate(round_half_even(x[i] / scale) + zero) to uint8 (a NaN quotient: zero).
void QuantizeSpan(const float* x, uint8_t* y, int64_t begin, int64_t end, float scale, float zero) {
  int64_t i = begin;
#if defined(__x86_64__)
  const __m128 vscale = _mm_set1_ps(scale), limit = _mm_set1_ps(1024.0f), neg_limit = _mm_set1_ps(-1024.0f);
  const __m128i vzero = _mm_set1_epi32(static_cast<int32_t>(zero));
  auto lanes = [&](const float* p) {
    __m128 q = _mm_div_ps(_mm_loadu_ps(p), vscale);
    q = _mm_and_ps(q, _mm_cmpord_ps(q, q));  // NaN -> +0
    q = _mm_max_ps(_mm_min_ps(q, limit), neg_limit);
    return _mm_add_epi32(_mm_cvtps_epi32(q), vzero);
  };
  for (; i + 16 <= end; i += 16) {
    const __m128i w0 = _mm_packs_epi32(lanes(x + i), lanes(x + i + 4));
    const __m128i w1 = _mm_packs_epi32(lanes(x + i + 8), lanes(x + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w0, w1));
  }
#endif
  for (; i < end; ++i) {
    const float q = x[i] / scale;
    const float v = (std::isnan(q) ? 0.0f : std::nearbyint(q)) + zero;
    y[i] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, v)));
  }
}

class DynamicQuantizeLinearKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->dtype() != DataType::kFloat) {
      return NotImplemented(where_, ": input must be float, got ", x->TypeAndShape());
    }
    const float* xs = x->data<float>();
    const int64_t n = x->num_elements();
    OL_ASSIGN_OR_RETURN(Range range, FindRange(ctx, xs, n));

    // As the ONNX definition spells it, in float.
    const float scale = (range.hi == range.lo ? 1.0f : range.hi - range.lo) / 255.0f;
    const float zero = std::nearbyint(std::min(255.0f, std::max(0.0f, 0.0f - range.lo / scale)));

    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kUint8, x->shape()));
    OL_ASSIGN_OR_RETURN(Tensor * y_scale, ctx.AllocateOutput(1, DataType::kFloat, Shape()));
    OL_ASSIGN_OR_RETURN(Tensor * y_zero, ctx.AllocateOutput(2, DataType::kUint8, Shape()));
    *y_scale->data<float>() = scale;
    *y_zero->data<uint8_t>() = static_cast<uint8_t>(zero);
    uint8_t* ys = y->data<uint8_t>();
    return ForEachChunk(ctx, policy_, "DynamicQuantizeLinear", n,
                        [&](int64_t begin, int64_t end) { QuantizeSpan(xs, ys, begin, end, scale, zero); });
  }

 private:
  StatusOr<Range> FindRange(const KernelContext& ctx, const float* x, int64_t n) const {
    // The helper's serial decision; in parallel, per-block partials merged in block order.
    if (policy_.parallel.Serial(n, /*cost=*/1)) return RangeOf(x, 0, n);
    const int64_t chunk = policy_.parallel.block;
    std::vector<Range> partial(static_cast<size_t>((n + chunk - 1) / chunk));
    OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), static_cast<int64_t>(partial.size()),
                                   ParallelPlan{"DynamicQuantizeLinear.range", 1}, [&](int64_t begin, int64_t end) {
                                     for (int64_t c = begin; c < end; ++c) {
                                       partial[c] = RangeOf(x, c * chunk, std::min(n, (c + 1) * chunk));
                                     }
                                     return Status::Ok();
                                   }));
    Range r;
    for (const Range& p : partial) r = {std::min(r.lo, p.lo), std::max(r.hi, p.hi)};
    return r;
  }

  std::string where_;
  elementwise::ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(dynamic_quantize_linear) {
  Kernel("DynamicQuantizeLinear")
      .Versions(11, kOpenEnded)
      .Types(TypeList<float>{})
      .Tuning(elementwise::ElementwiseTuning(elementwise::kCheapMinimumElements))
      .Calibratable()
      .Factory(MakeKernel<DynamicQuantizeLinearKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace quantization
}  // namespace onnx_light
