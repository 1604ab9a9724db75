// The variant list of nchwc_depthwise.h and the portable variant: 16 scalars per block,
// std::fma per lane (a fused multiply-add, as the SIMD variants': the same bits).
#include "native/kernels/nchwc/nchwc_depthwise.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace onnx_light {
namespace nchwc {
namespace {

struct Portable {
  struct Vec {
    float v[16];
  };
  static constexpr int kCols = 4;
  static constexpr bool kPairRows = false;
  static constexpr int kColsAlt = kCols;
  static Vec Zero() { return Vec{}; }
  static Vec Load(const float* p) {
    Vec r;
    for (int i = 0; i < 16; ++i) r.v[i] = p[i];
    return r;
  }
  static void Store(float* p, const Vec& v) {
    for (int i = 0; i < 16; ++i) p[i] = v.v[i];
  }
  static Vec Add(Vec a, const Vec& b) {
    for (int i = 0; i < 16; ++i) a.v[i] = a.v[i] + b.v[i];
    return a;
  }
  static Vec Mul(Vec a, const Vec& b) {
    for (int i = 0; i < 16; ++i) a.v[i] = a.v[i] * b.v[i];
    return a;
  }
  static Vec Fma(const Vec& a, const Vec& b, Vec c) {
    for (int i = 0; i < 16; ++i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
    return c;
  }
};

#include "native/kernels/nchwc/nchwc_depthwise_simd.inc"

}  // namespace

const std::vector<IsaVariant<NchwcBlockKernels>>& NchwcBlockVariants() {
  static const auto* variants = new std::vector<IsaVariant<NchwcBlockKernels>> {
#if defined(__x86_64__)
    {"avx512",
     Isa::kAvx512,
     {&NchwcDepthwiseRowAvx512, &NchwcDepthwiseRowPairAvx512, &NchwcBlockSumsAvx512, &NchwcBlockScaleAvx512}},
        {"avx2",
         Isa::kAvx2,
         {&NchwcDepthwiseRowAvx2, &NchwcDepthwiseRowPairAvx2, &NchwcBlockSumsAvx2, &NchwcBlockScaleAvx2}},
#elif defined(__aarch64__)
    {"neon",
     Isa::kNeon,
     {&NchwcDepthwiseRowNeon, &NchwcDepthwiseRowPairNeon, &NchwcBlockSumsNeon, &NchwcBlockScaleNeon}},
#endif
    {
      "portable", Isa::kPortable, BlockOps<Portable>::Kernels()
    }
  };
  return *variants;
}

const NchwcBlockKernels& BestNchwcBlockKernels() {
  static const NchwcBlockKernels kernels = BestVariant(NchwcBlockVariants()).impl;
  return kernels;
}

std::vector<float> PackDepthwiseWeights(const float* w, int64_t channels, int64_t kernel_h, int64_t kernel_w) {
  const int64_t blocks = (channels + kBlock - 1) / kBlock, taps = kernel_h * kernel_w;
  std::vector<float> packed(static_cast<size_t>(blocks * taps * kBlock), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < taps; ++t) packed[((c / kBlock) * taps + t) * kBlock + c % kBlock] = w[c * taps + t];
  }
  return packed;
}

}  // namespace nchwc
}  // namespace onnx_light
