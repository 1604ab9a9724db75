// Softmax row primitives on the avx2 lane type. Reached only through softmax_row.cc's CPU checks.
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

#include "native/kernels/simd/lanes_avx2.h"
#include "native/kernels/attention/softmax_row_simd.h"

namespace onnx_light {
namespace attention {

float ExpShiftedSumAvx2(float* x, int64_t n, float shift) { return ExpShiftedSumSimd<simd::Lanes8>(x, n, shift); }
float RowMaxAvx2(const float* x, int64_t n) { return RowMaxSimd<simd::Lanes8>(x, n); }

}  // namespace attention
}  // namespace onnx_light

#pragma GCC pop_options
#endif  // __x86_64__
