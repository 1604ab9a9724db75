// NEON integer microkernel (aarch64 baseline): 4 x 8 tile. Each 16-bit pair of A is
// broadcast as (a0, a1, a0, a1) and multiplied-accumulated (vmlal_s16, widening) with B's
// interleaved pairs, so every int32 lane holds a half-sum for one column and one parity
// of k; the two halves are added pairwise at the end (all wrapping int32, exact modulo 2^32).
// The requantiser is the scalar one (igemm.cc).
#include "native/kernels/quantized/igemm/igemm_kernel.h"
#include "native/kernels/quantized/igemm/zero_point_terms.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace onnx_light {
namespace igemm {

void ScalarRequantizeForNeon(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step,
                             int32_t zp, bool is_signed, void* out);

namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

void Tile(int64_t kp, const int16_t* a, const int16_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  // acc[i][q]: columns 2q, 2q + 1 of row i as (even k, odd k) half-sums.
  int32x4_t acc[kMr][4];
  for (int i = 0; i < kMr; ++i) {
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_s32(0);
  }
  for (int64_t p = 0; p < kp; ++p) {
    const int16x8_t b0 = vld1q_s16(b), b1 = vld1q_s16(b + 8);
    const int16x4_t bq[4] = {vget_low_s16(b0), vget_high_s16(b0), vget_low_s16(b1), vget_high_s16(b1)};
    for (int i = 0; i < kMr; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + 2 * i, sizeof(pair));
      const int16x4_t ai = vreinterpret_s16_s32(vdup_n_s32(pair));
      for (int q = 0; q < 4; ++q) acc[i][q] = vmlal_s16(acc[i][q], ai, bq[q]);
    }
    a += 2 * kMr;
    b += 2 * kNr;
  }
  for (int i = 0; i < kMr; ++i) {
    int32_t* row = c + i * ldc;
    int32x4_t lo = vpaddq_s32(acc[i][0], acc[i][1]), hi = vpaddq_s32(acc[i][2], acc[i][3]);
    if (accumulate) {
      lo = vaddq_s32(lo, vld1q_s32(row));
      hi = vaddq_s32(hi, vld1q_s32(row + 4));
    }
    vst1q_s32(row, lo);
    vst1q_s32(row + 4, hi);
  }
}

// Four uint32 lanes (zero_point_terms.h).
struct Lanes4 {
  using V = uint32x4_t;
  static constexpr int kLanes = 4;
  static V Set(uint32_t v) { return vdupq_n_u32(v); }
  static V Load(const uint32_t* p) { return vld1q_u32(p); }
  static void Store(uint32_t* p, V v) { vst1q_u32(p, v); }
  static V Add(V a, V b) { return vaddq_u32(a, b); }
  static V Sub(V a, V b) { return vsubq_u32(a, b); }
  static V MulLow(V a, V b) { return vmulq_u32(a, b); }
};

void AddZeroPointTerms(uint32_t* row, int64_t n, uint32_t row_term, uint32_t azp, const uint32_t* column_sums) {
  AddZeroPointTermsLanes<Lanes4>(row, n, row_term, azp, column_sums);
}

}  // namespace

extern const IgemmKernel kIgemmNeonKernel = {"neon",  kMr,     kNr,     Tile,    ScalarRequantizeForNeon,
                                             nullptr, nullptr, nullptr, nullptr, AddZeroPointTerms};

}  // namespace igemm
}  // namespace onnx_light

#endif  // __aarch64__
