// reorder.h's rows on AArch64 Advanced SIMD: 4 positions a step, four 4 x 4 in-register
// transposes (vtrn of 32-bit, then of 64-bit pairs), one per 4 lanes of the block; a row's
// last count % 4 positions run scalar. Compiled by isa_library(isa = "neon"); reached
// through ReorderRowsVariants().
#include "native/kernels/nchwc/reorder_rows.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace onnx_light {
namespace nchwc {
namespace {

// r[i][j] -> r[j][i] for a 4 x 4 block of floats.
inline void Transpose4x4(float32x4_t r[4]) {
  const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
  const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
  r[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
  r[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}

}  // namespace

void ToBlockedNeon(const float* x, int64_t ld, int lanes, int64_t count, float* out) {
  int64_t p0 = 0;
  for (; p0 + 4 <= count; p0 += 4) {
    for (int quarter = 0; quarter < 4; ++quarter) {
      float32x4_t r[4];
      for (int l = 0; l < 4; ++l) {
        const int lane = 4 * quarter + l;
        r[l] = lane < lanes ? vld1q_f32(x + lane * ld + p0) : vdupq_n_f32(0.0f);
      }
      Transpose4x4(r);
      for (int c = 0; c < 4; ++c) vst1q_f32(out + (p0 + c) * 16 + 4 * quarter, r[c]);
    }
  }
  for (; p0 < count; ++p0) {
    for (int l = 0; l < 16; ++l) out[p0 * 16 + l] = l < lanes ? x[l * ld + p0] : 0.0f;
  }
}

void FromBlockedNeon(const float* in, int lanes, int64_t count, float* y, int64_t ld) {
  int64_t p0 = 0;
  for (; p0 + 4 <= count; p0 += 4) {
    for (int quarter = 0; quarter * 4 < lanes; ++quarter) {
      float32x4_t r[4];
      for (int c = 0; c < 4; ++c) r[c] = vld1q_f32(in + (p0 + c) * 16 + 4 * quarter);
      Transpose4x4(r);
      for (int l = 0; l < 4 && 4 * quarter + l < lanes; ++l) vst1q_f32(y + (4 * quarter + l) * ld + p0, r[l]);
    }
  }
  for (; p0 < count; ++p0) {
    for (int l = 0; l < lanes; ++l) y[l * ld + p0] = in[p0 * 16 + l];
  }
}

}  // namespace nchwc
}  // namespace onnx_light

#else
namespace onnx_light {
namespace nchwc {
void ToBlockedNeon(const float*, int64_t, int, int64_t, float*) {}
void FromBlockedNeon(const float*, int, int64_t, float*, int64_t) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
