// What a window pool computes: the kind, its options, and the Lp helpers shared by the
// generic N-d path (pool_ops.cc) and the 2-D row-interior path (pool_rows.cc).
#pragma once

#include <cstdint>

namespace onnx_light {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolOptions {
  bool count_include_pad = false;
  bool column_major_indices = false;  // MaxPool storage_order = 1
  int64_t p = 2;
};

// Internal linkage, and builtins rather than std::sqrt/std::pow/std::fabs (inline functions
// with external linkage): the AVX2 interior rows (pool_rows_avx2.cc) instantiate these
// under AVX2 flags (native/kernels/common/README.md). Same functions, same results.
namespace {
inline float LpSqrt(float v) { return __builtin_sqrtf(v); }
inline double LpSqrt(double v) { return __builtin_sqrt(v); }
inline float LpPow(float v, float e) { return __builtin_powf(v, e); }
inline double LpPow(double v, double e) { return __builtin_pow(v, e); }
inline float LpAbs(float v) { return __builtin_fabsf(v); }
inline double LpAbs(double v) { return __builtin_fabs(v); }

template <typename A>
A LpRoot(A sum, int64_t p) {
  return p == 1 ? sum : p == 2 ? LpSqrt(sum) : LpPow(sum, A(1) / static_cast<A>(p));
}
template <typename A>
A LpPower(A v, int64_t p) {
  const A a = LpAbs(v);
  return p == 1 ? a : p == 2 ? a * a : LpPow(a, static_cast<A>(p));
}
}  // namespace

}  // namespace onnx_light
