// reorder.h's rows on AVX-512: 16 positions a step through a 16 x 16 in-register transpose
// (unpack pairs, 4 x 4 shuffles within 128-bit lanes, then a 4 x 4 transpose of the 128-bit
// lanes); the tail of a row (< 16 positions) runs the same step under a position mask, so
// nothing is read or written past the row. Compiled with AVX-512 flags (isa_library);
// reached through ReorderRowsVariants() after IsaEnabled(Isa::kAvx512).
#include "native/kernels/nchwc/reorder_rows.h"

#if defined(__x86_64__)
#if !defined(__AVX512F__)
#error "reorder_avx512.cc needs AVX-512 flags (isa_library isa = \"avx512\")"
#endif
#include <immintrin.h>

namespace onnx_light {
namespace nchwc {
namespace {

// r[i][j] -> r[j][i] for a 16 x 16 block of floats.
inline void Transpose16x16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Within each 128-bit lane L: s[4i + k] = column 4L + k of rows 4i .. 4i + 3.
  __m512 s[16];
  for (int i = 0; i < 4; ++i) {
    s[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    s[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    s[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    s[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // Column 4L + k = 128-bit lane L of s[k], s[4 + k], s[8 + k], s[12 + k].
  for (int k = 0; k < 4; ++k) {
    const __m512 b0 = _mm512_shuffle_f32x4(s[k], s[4 + k], 0x44), b1 = _mm512_shuffle_f32x4(s[k], s[4 + k], 0xEE);
    const __m512 b2 = _mm512_shuffle_f32x4(s[8 + k], s[12 + k], 0x44),
                 b3 = _mm512_shuffle_f32x4(s[8 + k], s[12 + k], 0xEE);
    r[k] = _mm512_shuffle_f32x4(b0, b2, 0x88);
    r[4 + k] = _mm512_shuffle_f32x4(b0, b2, 0xDD);
    r[8 + k] = _mm512_shuffle_f32x4(b1, b3, 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(b1, b3, 0xDD);
  }
}

}  // namespace

void ToBlockedAvx512(const float* x, int64_t ld, int lanes, int64_t count, float* out) {
  for (int64_t p0 = 0; p0 < count; p0 += 16) {
    const int n = count - p0 < 16 ? static_cast<int>(count - p0) : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
    __m512 r[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; ++l) r[l] = l < lanes ? _mm512_maskz_loadu_ps(mask, x + l * ld + p0) : _mm512_setzero_ps();
    Transpose16x16(r);
    float* o = out + p0 * 16;
    if (n == 16) {
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c) _mm512_storeu_ps(o + c * 16, r[c]);
    } else {
      for (int c = 0; c < n; ++c) _mm512_storeu_ps(o + c * 16, r[c]);
    }
  }
}

void FromBlockedAvx512(const float* in, int lanes, int64_t count, float* y, int64_t ld) {
  for (int64_t p0 = 0; p0 < count; p0 += 16) {
    const int n = count - p0 < 16 ? static_cast<int>(count - p0) : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
    __m512 r[16];
    const float* i0 = in + p0 * 16;
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) r[c] = c < n ? _mm512_loadu_ps(i0 + c * 16) : _mm512_setzero_ps();
    Transpose16x16(r);
    for (int l = 0; l < lanes; ++l) _mm512_mask_storeu_ps(y + l * ld + p0, mask, r[l]);
  }
}

}  // namespace nchwc
}  // namespace onnx_light

#else
namespace onnx_light {
namespace nchwc {
void ToBlockedAvx512(const float*, int64_t, int, int64_t, float*) {}
void FromBlockedAvx512(const float*, int, int64_t, float*, int64_t) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
