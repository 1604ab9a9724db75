// What a window pool computes: the kind, its options, and the Lp helpers shared by the
// generic N-d path (pool_ops.cc) and the 2-D row-interior path (pool_rows.cc).
#pragma once

#include <cmath>
#include <cstdint>

namespace onnx_light {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolOptions {
  bool count_include_pad = false;
  bool column_major_indices = false;  // MaxPool storage_order = 1
  int64_t p = 2;
};

template <typename A>
A LpRoot(A sum, int64_t p) {
  return p == 1 ? sum : p == 2 ? std::sqrt(sum) : std::pow(sum, A(1) / static_cast<A>(p));
}
template <typename A>
A LpPower(A v, int64_t p) {
  const A a = std::fabs(v);
  return p == 1 ? a : p == 2 ? a * a : std::pow(a, static_cast<A>(p));
}

}  // namespace onnx_light
