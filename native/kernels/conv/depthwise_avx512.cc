// AVX-512 row kernel of the depthwise convolution: 16 output columns per vector, strides
// 1 and 2 as (permuted) contiguous loads, other strides through the portable kernel.
#include "native/kernels/conv/depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define OL_AVX512 __attribute__((target("avx512f")))

namespace onnx_light {
namespace conv {
namespace {

template <int kStride>
OL_AVX512 void Row(const DepthwiseRow& row, int64_t n, float* out) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  int64_t t = 0;
  for (; t + 16 <= n; t += 16) {
    __m512 acc = _mm512_setzero_ps();
    for (int r = 0; r < row.count; ++r) {
      const float* in = row.rows[r] + t * kStride;
      const float* wr = row.weights[r];
      for (int64_t kw = 0; kw < row.kernel_w; ++kw) {
        const float* src = in + kw * row.dilation;
        __m512 xv;
        if (kStride == 1) {
          xv = _mm512_loadu_ps(src);
        } else {
          xv = _mm512_permutex2var_ps(_mm512_loadu_ps(src), even, _mm512_loadu_ps(src + 16));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(wr[kw]), xv, acc);
      }
    }
    _mm512_storeu_ps(out + t, acc);
  }
  // Tail columns: the same taps in the same order, one fused multiply-add each.
  for (; t < n; ++t) {
    float acc = 0.0f;
    for (int r = 0; r < row.count; ++r) {
      const float* in = row.rows[r] + t * kStride;
      for (int64_t kw = 0; kw < row.kernel_w; ++kw) acc = __builtin_fmaf(row.weights[r][kw], in[kw * row.dilation], acc);
    }
    out[t] = acc;
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
