#include "native/kernels/attention/softmax_row.h"

#include <cmath>

namespace onnx_light {
namespace attention {

// The vectorised rows (simd/math.h's exp over each ISA's lanes), in softmax_row_<isa>.cc:
// reach them only through the CPU checks below.
#if defined(__x86_64__)
float ExpShiftedSumAvx2(float* x, int64_t n, float shift);
float ExpShiftedSumAvx512(float* x, int64_t n, float shift);
float RowMaxAvx2(const float* x, int64_t n);
float RowMaxAvx512(const float* x, int64_t n);
#elif defined(__aarch64__)
float ExpShiftedSumNeon(float* x, int64_t n, float shift);
float RowMaxNeon(const float* x, int64_t n);
#endif

namespace {

template <typename T>
T ExpShiftedSumPortable(T* x, int64_t n, T shift) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

// Eight independent running maxima: no loop-carried latency chain, vectorisable.
template <typename T>
T RowMaxPortable(const T* x, int64_t n) {
  constexpr int kLanes = 8;
  T lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  }
  T m = x[0];
  for (int l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

#if defined(__x86_64__)
bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("fma");
  return has;
}

bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

}  // namespace

float ExpShiftedSum(float* x, int64_t n, float shift) {
#if defined(__x86_64__)
  if (HasAvx512()) return ExpShiftedSumAvx512(x, n, shift);
  if (HasAvx2Fma()) return ExpShiftedSumAvx2(x, n, shift);
#elif defined(__aarch64__)
  return ExpShiftedSumNeon(x, n, shift);
#endif
  return ExpShiftedSumPortable(x, n, shift);
}

double ExpShiftedSum(double* x, int64_t n, double shift) { return ExpShiftedSumPortable(x, n, shift); }

float RowMax(const float* x, int64_t n) {
#if defined(__x86_64__)
  if (HasAvx512()) return RowMaxAvx512(x, n);
  if (HasAvx2Fma()) return RowMaxAvx2(x, n);
#elif defined(__aarch64__)
  return RowMaxNeon(x, n);
#endif
  return RowMaxPortable(x, n);
}
double RowMax(const double* x, int64_t n) { return RowMaxPortable(x, n); }

}  // namespace attention
}  // namespace onnx_light
