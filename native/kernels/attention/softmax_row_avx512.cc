// Softmax row primitives on the avx512 lane type. Reached only through softmax_row.cc's CPU checks.
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")

#include "native/kernels/simd/lanes_avx512.h"
#include "native/kernels/attention/softmax_row_simd.h"

namespace onnx_light {
namespace attention {

float ExpShiftedSumAvx512(float* x, int64_t n, float shift) { return ExpShiftedSumSimd<simd::Lanes16>(x, n, shift); }
float RowMaxAvx512(const float* x, int64_t n) { return RowMaxSimd<simd::Lanes16>(x, n); }

}  // namespace attention
}  // namespace onnx_light

#pragma GCC pop_options
#endif  // __x86_64__
