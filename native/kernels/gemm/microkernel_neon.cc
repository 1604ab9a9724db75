// NEON microkernels (aarch64): 8 x 12 register tile (24 accumulators).
#include "native/kernels/gemm/microkernel.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace onnx_light {
namespace gemm {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;

void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  float32x4_t acc[kMr][3];
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = acc[i][2] = vdupq_n_f32(0.0f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
#define OL_ROW(i, av, lane)                                   \
  acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av, lane);       \
  acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av, lane);       \
  acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, av, lane);
    OL_ROW(0, a0, 0) OL_ROW(1, a0, 1) OL_ROW(2, a0, 2) OL_ROW(3, a0, 3)
    OL_ROW(4, a1, 0) OL_ROW(5, a1, 1) OL_ROW(6, a1, 2) OL_ROW(7, a1, 3)
#undef OL_ROW
    a += kMr;
    b += kNr;
  }
  const float32x4_t va = vdupq_n_f32(alpha);
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    for (int q = 0; q < 3; ++q) {
      float32x4_t out = vmulq_f32(va, acc[i][q]);
      if (beta != 0.0f) out = vfmaq_f32(out, vdupq_n_f32(beta), vld1q_f32(row + 4 * q));
      vst1q_f32(row + 4 * q, out);
    }
  }
}

// y[j] = sum_k x[k] m[k * ld + j]; lanes and tail both use one fused multiply-add per k.
void GemvRows(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  const int64_t full = n / 4 * 4;
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* r = m + kk * ld;
    const float32x4_t xv = vdupq_n_f32(x[kk]);
    for (int64_t j = 0; j < full; j += 4) vst1q_f32(y + j, vfmaq_f32(vld1q_f32(y + j), xv, vld1q_f32(r + j)));
    for (int64_t j = full; j < n; ++j) y[j] = __builtin_fmaf(x[kk], r[j], y[j]);
  }
}

void GemvDots(int64_t k, int64_t n, const float* x, const float* m, int64_t ld, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* r = m + j * ld;
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    int64_t kk = 0;
    for (; kk + 8 <= k; kk += 8) {
      acc0 = vfmaq_f32(acc0, vld1q_f32(x + kk), vld1q_f32(r + kk));
      acc1 = vfmaq_f32(acc1, vld1q_f32(x + kk + 4), vld1q_f32(r + kk + 4));
    }
    float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
    for (; kk < k; ++kk) sum = __builtin_fmaf(x[kk], r[kk], sum);
    y[j] = sum;
  }
}

}  // namespace

const MicroKernel* NeonKernel() {
  static const MicroKernel kernel{"neon", kMr, kNr, /*kc=*/256, /*nc=*/480, Tile, GemvRows, GemvDots};
  return &kernel;
}

}  // namespace gemm
}  // namespace onnx_light

#else
namespace onnx_light {
namespace gemm {
const MicroKernel* NeonKernel() { return nullptr; }
}  // namespace gemm
}  // namespace onnx_light
#endif
