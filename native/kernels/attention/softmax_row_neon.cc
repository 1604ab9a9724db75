// Softmax row primitives on the neon lane type. Reached only through softmax_row.cc's CPU checks.
#include <cstdint>
#include <cstring>

#if defined(__aarch64__)
#include <arm_neon.h>

#include "native/kernels/simd/lanes_neon.h"
#include "native/kernels/attention/softmax_row_simd.h"

namespace onnx_light {
namespace attention {

float ExpShiftedSumNeon(float* x, int64_t n, float shift) { return ExpShiftedSumSimd<simd::Lanes4>(x, n, shift); }
float RowMaxNeon(const float* x, int64_t n) { return RowMaxSimd<simd::Lanes4>(x, n); }

}  // namespace attention
}  // namespace onnx_light
#endif  // __aarch64__
