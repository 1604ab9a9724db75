// AVX-512 row kernel of the depthwise convolution: 16 output columns per vector, strides
// 1 and 2 as (permuted) contiguous loads, other strides through the portable kernel.
#include "native/kernels/conv/depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define OL_AVX512 __attribute__((target("avx512f")))

namespace onnx_light {
namespace conv {
namespace {

// Columns [t, t + lanes) of the row, lanes <= 16 (masked loads past the row's end).
template <int kStride>
OL_AVX512 __m512 Columns(const DepthwiseRow& row, int64_t t, int64_t lanes) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  // Input elements touched per tap: lanes (stride 1) or 2 * lanes - 1 (stride 2).
  const int64_t span = kStride * (lanes - 1) + 1;
  const __mmask16 lo = static_cast<__mmask16>(span >= 16 ? 0xFFFF : (1u << span) - 1u);
  const __mmask16 hi = static_cast<__mmask16>(span >= 32 ? 0xFFFF : span <= 16 ? 0u : (1u << (span - 16)) - 1u);
  __m512 acc = _mm512_setzero_ps();
  for (int r = 0; r < row.count; ++r) {
    const float* in = row.rows[r] + t * kStride;
    const float* wr = row.weights[r];
    for (int64_t kw = 0; kw < row.kernel_w; ++kw) {
      const float* src = in + kw * row.dilation;
      __m512 xv = _mm512_maskz_loadu_ps(lo, src);
      if (kStride == 2) xv = _mm512_permutex2var_ps(xv, even, _mm512_maskz_loadu_ps(hi, src + 16));
      acc = _mm512_fmadd_ps(_mm512_set1_ps(wr[kw]), xv, acc);
    }
  }
  return acc;
}

template <int kStride>
OL_AVX512 void Row(const DepthwiseRow& row, int64_t n, float* out) {
  for (int64_t t = 0; t < n; t += 16) {
    const int64_t lanes = n - t < 16 ? n - t : 16;
    const __mmask16 mask = static_cast<__mmask16>(lanes == 16 ? 0xFFFF : (1u << lanes) - 1u);
    _mm512_mask_storeu_ps(out + t, mask, Columns<kStride>(row, t, lanes));
  }
}

void Dispatch(const DepthwiseRow& row, int64_t n, float* out) {
  switch (row.stride) {
    case 1: return Row<1>(row, n, out);
    case 2: return Row<2>(row, n, out);
    default: return DepthwiseRowPortable(row, n, out);
  }
}

}  // namespace

DepthwiseRowFn DepthwiseRowAvx512() { return __builtin_cpu_supports("avx512f") ? Dispatch : nullptr; }

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
DepthwiseRowFn DepthwiseRowAvx512() { return nullptr; }
}  // namespace conv
}  // namespace onnx_light
#endif
