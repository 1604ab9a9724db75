// reorder.h's rows on AVX2: 8 positions a step, two 8 x 8 in-register transposes (lanes
// 0-7 and 8-15 of the block: unpack pairs, 4 x 4 shuffles within 128-bit halves, then the
// halves exchanged); a row's last count % 8 positions run scalar. Compiled with AVX2 flags
// (isa_library); reached through ReorderRowsVariants() after IsaEnabled(Isa::kAvx2).
#include "native/kernels/nchwc/reorder_rows.h"

#if defined(__x86_64__)
#if !defined(__AVX2__)
#error "reorder_avx2.cc needs AVX2 flags (isa_library isa = \"avx2\")"
#endif
#include <immintrin.h>

namespace onnx_light {
namespace nchwc {
namespace {

// r[i][j] -> r[j][i] for an 8 x 8 block of floats.
inline void Transpose8x8(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Within each 128-bit half H: s[4i + k] = column 4H + k of rows 4i .. 4i + 3.
  for (int i = 0; i < 2; ++i) {
    s[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2f128_ps(s[k], s[4 + k], 0x20);
    r[4 + k] = _mm256_permute2f128_ps(s[k], s[4 + k], 0x31);
  }
}

}  // namespace

void ToBlockedAvx2(const float* x, int64_t ld, int lanes, int64_t count, float* out) {
  int64_t p0 = 0;
  for (; p0 + 8 <= count; p0 += 8) {
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      __m256 r[8];
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        const int lane = 8 * half + l;
        r[l] = lane < lanes ? _mm256_loadu_ps(x + lane * ld + p0) : _mm256_setzero_ps();
      }
      Transpose8x8(r);
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(out + (p0 + c) * 16 + 8 * half, r[c]);
    }
  }
  for (; p0 < count; ++p0) {
    for (int l = 0; l < 16; ++l) out[p0 * 16 + l] = l < lanes ? x[l * ld + p0] : 0.0f;
  }
}

void FromBlockedAvx2(const float* in, int lanes, int64_t count, float* y, int64_t ld) {
  int64_t p0 = 0;
  for (; p0 + 8 <= count; p0 += 8) {
    for (int half = 0; half * 8 < lanes; ++half) {
      __m256 r[8];
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(in + (p0 + c) * 16 + 8 * half);
      Transpose8x8(r);
      for (int l = 0; l < 8 && 8 * half + l < lanes; ++l) _mm256_storeu_ps(y + (8 * half + l) * ld + p0, r[l]);
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
void ToBlockedAvx2(const float*, int64_t, int, int64_t, float*) {}
void FromBlockedAvx2(const float*, int, int64_t, float*, int64_t) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
