// NEON blocks of nchwc_depthwise.h: four q registers per channel block, runs of 4
// positions (16 accumulators of the 32 registers).
// Compiled by isa_library(isa = "neon"); reached only through NchwcBlockVariants().
#include "native/kernels/nchwc/nchwc_depthwise.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace onnx_light {
namespace nchwc {
namespace {

struct Neon {
  struct Vec {
    float32x4_t q[4];
  };
  static constexpr int kCols = 4;
  static constexpr bool kPairRows = false;
  static constexpr int kColsAlt = kCols;
  static Vec Zero() {
    const float32x4_t z = vdupq_n_f32(0.0f);
    return {{z, z, z, z}};
  }
  static Vec Load(const float* p) { return {{vld1q_f32(p), vld1q_f32(p + 4), vld1q_f32(p + 8), vld1q_f32(p + 12)}}; }
  static void Store(float* p, Vec v) {
    for (int i = 0; i < 4; ++i) vst1q_f32(p + 4 * i, v.q[i]);
  }
  static Vec Add(Vec a, Vec b) {
    for (int i = 0; i < 4; ++i) a.q[i] = vaddq_f32(a.q[i], b.q[i]);
    return a;
  }
  static Vec Mul(Vec a, Vec b) {
    for (int i = 0; i < 4; ++i) a.q[i] = vmulq_f32(a.q[i], b.q[i]);
    return a;
  }
  // a x b + c, fused (vfmaq_f32(c, a, b)).
  static Vec Fma(Vec a, Vec b, Vec c) {
    for (int i = 0; i < 4; ++i) c.q[i] = vfmaq_f32(c.q[i], a.q[i], b.q[i]);
    return c;
  }
};

#include "native/kernels/nchwc/nchwc_depthwise_simd.inc"

}  // namespace

void NchwcDepthwiseRowNeon(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                           const float* bias_block, int64_t oh, float* y_row) {
  BlockOps<Neon>::DepthwiseRow(g, x_block, w_block, bias_block, oh, y_row);
}
void NchwcDepthwiseRowPairNeon(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                               const float* bias_block, int64_t oh, float* y_rows) {
  BlockOps<Neon>::DepthwiseRowPair(g, x_block, w_block, bias_block, oh, y_rows);
}
void NchwcBlockSumsNeon(const float* x_block, int64_t positions, float* sums) {
  BlockOps<Neon>::BlockSums(x_block, positions, sums);
}
void NchwcBlockScaleNeon(const float* x_block, const float* gate, int64_t positions, float* y_block) {
  BlockOps<Neon>::BlockScale(x_block, gate, positions, y_block);
}

}  // namespace nchwc
}  // namespace onnx_light

#else
namespace onnx_light {
namespace nchwc {
void NchwcDepthwiseRowNeon(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcDepthwiseRowPairNeon(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcBlockSumsNeon(const float*, int64_t, float*) {}
void NchwcBlockScaleNeon(const float*, const float*, int64_t, float*) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
