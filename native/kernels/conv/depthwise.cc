#include "native/kernels/conv/depthwise.h"

#include <algorithm>

#include "native/kernels/gemm/epilogue.h"

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The activation as the separate kernels compute it (gemm::Epilogue, the epilogue's widest
// enabled span on this CPU): what the portable planes apply.
gemm::Epilogue EpilogueOf(const PlaneActivation& act) {
  static constexpr gemm::Activation kEpilogue[] = {gemm::Activation::kNone,      gemm::Activation::kRelu,
                                                   gemm::Activation::kClip,      gemm::Activation::kSigmoid,
                                                   gemm::Activation::kHardSwish, gemm::Activation::kSwish};
  gemm::Epilogue epilogue;
  epilogue.activation = kEpilogue[static_cast<int>(act.kind)];
  epilogue.alpha = act.alpha;
  epilogue.beta = act.beta;
  return epilogue;
}

// The row strips of depthwise_plane_simd.inc at the baseline: 4 lanes in a GCC vector
// (SSE2 on x86-64, Advanced SIMD on aarch64), compiled with the baseline's flags. Fma is
// a * b + c as the compiler contracts it, as in DepthwisePlanePortable's loop: two roundings
// on x86-64 (no FMA in its baseline), one fused multiply-add on aarch64. Masked loads and
// stores are lane loops (edge vectors only); the activation is the epilogue's (below),
// applied to each strip's rows as the SIMD planes apply theirs.
struct Portable {
  static constexpr int64_t kLanes = 4;
  static constexpr int kVectorRegisters = 16;              // SSE2 (aarch64 has 32: counted low)
  static constexpr int64_t kPaddedMinVectors[2] = {0, 0};  // depthwise_plane_simd.inc
  typedef float Vec __attribute__((vector_size(16)));
  struct Mask {
    int64_t lo, hi;  // lanes [lo, hi)
  };
  struct Tap {
    int64_t first, last;  // lanes [first, last) read the row
  };
  static Mask Lanes(int64_t lo, int64_t hi) {
    lo = lo < 0 ? 0 : lo > kLanes ? kLanes : lo;
    hi = hi < lo ? lo : hi > kLanes ? kLanes : hi;
    return Mask{lo, hi};
  }
  template <int kStride>
  static Tap MakeTap(int64_t first, int64_t last) {
    const Mask m = Lanes(first, last);
    return Tap{m.lo, m.hi};
  }
  template <int kStride>
  static Vec Load(const float* p, const Tap& tap) {
    Vec v = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t j = tap.first; j < tap.last; ++j) v[j] = p[j * kStride];
    return v;
  }
  template <int kStride>
  static Vec LoadFull(const float* p) {
    if constexpr (kStride == 2) {
      const Vec v = {p[0], p[2], p[4], p[6]};
      return v;
    }
    Vec v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  template <int kStride>
  static Vec Ordered(Vec v) {
    return v;
  }
  static Vec Zero() {
    const Vec v = {0.0f, 0.0f, 0.0f, 0.0f};
    return v;
  }
  static Vec Set1(float f) {
    const Vec v = {f, f, f, f};
    return v;
  }
  static Vec Fma(Vec a, Vec b, Vec c) { return a * b + c; }
  static Vec Add(Vec a, Vec b) { return a + b; }
  static void Store(float* p, Mask mask, Vec v) {
    for (int64_t j = mask.lo; j < mask.hi; ++j) p[j] = v[j];
  }
  static void StoreFull(float* p, Vec v) { __builtin_memcpy(p, &v, sizeof v); }
};

// The strips' activation hook (depthwise_activation_simd.inc's ActivateRow for the SIMD
// lanes): the epilogue over the n outputs just written.
template <class V>
void ActivateRow(const PlaneActivation& act, float* y, int64_t n) {
  if (act.kind == PlaneActivationKind::kNone) return;
  EpilogueOf(act).Apply(y, 0, 1, n, n);
}

#include "native/kernels/conv/depthwise_plane_simd.inc"

// Square 3x3 and 5x5 kernels take the strips over Portable, the rest the scalar loop.
DepthwisePlaneFn SelectDepthwisePlanePortable(const Geometry3d& g) {
  const DepthwisePlaneFn strips = SelectDepthwiseStrips<Portable>(g);
  return strips != nullptr ? strips : DepthwisePlanePortable;
}

}  // namespace

const std::vector<IsaVariant<DepthwiseSelectFn>>& DepthwisePlaneVariants() {
  static const auto* variants = new std::vector<IsaVariant<DepthwiseSelectFn>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, SelectDepthwisePlaneAvx512}, {"avx2", Isa::kAvx2, SelectDepthwisePlaneAvx2},
#endif
        {"portable", Isa::kPortable, SelectDepthwisePlanePortable},
  };
  return *variants;
}

const std::vector<IsaVariant<DepthwiseChannels>>& DepthwiseChannelsVariants() {
  static const auto* variants = new std::vector<IsaVariant<DepthwiseChannels>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, DepthwiseChannels{16, DepthwiseChannelsAvx512, {{8, 16}, {32, 32}}}},
        {"avx2", Isa::kAvx2, DepthwiseChannels{8, DepthwiseChannelsAvx2, {{16, 16}, {16, 16}}}},
#endif
  };
  return *variants;
}

bool DepthwiseChannelsTake(const Geometry3d& g, int64_t out_channels, const DepthwiseChannels& variant) {
  const int64_t lanes = variant.lanes;
  const bool two_d = g.out[0] == 1 && g.in[0] == 1 && g.kernel[0] == 1;
  if (!two_d || out_channels < lanes) return false;
  if (2 * g.out[2] <= lanes) return true;
  const bool square = g.kernel[1] == g.kernel[2] && (g.kernel[1] == 3 || g.kernel[1] == 5) && g.dilation[1] == 1 &&
                      g.dilation[2] == 1 && g.stride[1] == g.stride[2] && (g.stride[2] == 1 || g.stride[2] == 2);
  return square && g.out[2] <= variant.square_max_cols[g.kernel[1] == 5][g.stride[2] - 1];
}

DepthwiseChannels SelectDepthwiseChannels(const Geometry3d& g, int64_t out_channels) {
  static const std::vector<const IsaVariant<DepthwiseChannels>*> enabled = EnabledVariants(DepthwiseChannelsVariants());
  if (enabled.empty() || !DepthwiseChannelsTake(g, out_channels, enabled.front()->impl)) return {};
  return enabled.front()->impl;
}

int64_t DepthwiseChannelsScratch(const Geometry3d& g, int lanes) {
  const int64_t rows = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1;
  const int64_t cols = (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1;
  return (rows * cols + g.kernel[1] * g.kernel[2] + g.out[1] * g.out[2]) * lanes;
}

DepthwisePlaneFn SelectDepthwisePlane(const Geometry3d& g) {
  static const std::vector<const IsaVariant<DepthwiseSelectFn>*> enabled = EnabledVariants(DepthwisePlaneVariants());
  for (const IsaVariant<DepthwiseSelectFn>* variant : enabled) {
    if (DepthwisePlaneFn fn = variant->impl(g)) return fn;
  }
  return DepthwisePlanePortable;
}

void DepthwisePlanePortable(const Geometry3d& g, const float* x, const float* w, float bias, const PlaneActivation& act,
                            float* y) {
  const int64_t s = g.stride[2], d = g.dilation[2], p = g.pad[2], kernel_w = g.kernel[2], in_w = g.in[2];
  // Columns whose every kw tap is inside the row: ow * s - p >= 0 and ow * s - p + (kernel_w - 1) * d < in_w.
  const int64_t lo = std::min(g.out[2], std::max<int64_t>(0, CeilDiv(p, s)));
  const int64_t hi = std::max(lo, std::min(g.out[2], CeilDiv(in_w + p - (kernel_w - 1) * d, s)));
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      float* out = y + (od * g.out[1] + oh) * g.out[2];
      std::fill(out, out + g.out[2], 0.0f);
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = od * g.stride[0] + kd * g.dilation[0] - g.pad[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t ih = oh * g.stride[1] + kh * g.dilation[1] - g.pad[1];
          if (ih < 0 || ih >= g.in[1]) continue;
          const float* row = x + (id * g.in[1] + ih) * in_w;
          const float* wr = w + (kd * g.kernel[1] + kh) * kernel_w;
          // Per column this row's taps are added in kw order; rows in (kd, kh) order.
          const auto border = [&](int64_t ow) {
            for (int64_t kw = 0; kw < kernel_w; ++kw) {
              const int64_t iw = ow * s - p + kw * d;
              if (iw >= 0 && iw < in_w) out[ow] += wr[kw] * row[iw];
            }
          };
          for (int64_t ow = 0; ow < lo; ++ow) border(ow);
          for (int64_t ow = lo; ow < hi; ++ow) {
            float acc = out[ow];
            const float* in = row + ow * s - p;
            for (int64_t kw = 0; kw < kernel_w; ++kw) acc += wr[kw] * in[kw * d];
            out[ow] = acc;
          }
          for (int64_t ow = hi; ow < g.out[2]; ++ow) border(ow);
        }
      }
      for (int64_t ow = 0; ow < g.out[2]; ++ow) out[ow] += bias;
    }
  }
  if (act.kind == PlaneActivationKind::kNone) return;
  EpilogueOf(act).Apply(y, 0, 1, g.out_size, g.out_size);
}

}  // namespace conv
}  // namespace onnx_light
