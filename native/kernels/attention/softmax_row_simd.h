// The softmax row primitives over a lane type of simd/math.h; included by the per-ISA
// softmax_row files after their `#pragma GCC target` and lane header.
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace attention {
namespace {

// exp, with inputs below the float range flushed to 0: masked keys arrive as -inf (or
// very negative scores) and must weigh exactly nothing.
template <class S>
inline typename S::V ExpOrZero(typename S::V x) {
  return S::Select(S::Less(x, S::Set(-87.33654f)), S::Set(0.0f), simd::Exp<S>(x));
}

// Lanes summed as a fixed pairwise tree: the order depends only on the lane count.
template <class S>
float SumLanes(typename S::V v) {
  float lanes[S::kLanes];
  S::Store(lanes, v);
  for (int width = S::kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

template <class S>
float ExpShiftedSumSimd(float* x, int64_t n, float shift) {
  using V = typename S::V;
  const V s = S::Set(shift);
  V acc = S::Set(0.0f);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) {
    const V v = ExpOrZero<S>(S::Sub(S::Load(x + i), s));
    S::Store(x + i, v);
    acc = S::Add(acc, v);
  }
  if (i < n) {  // the tail through the same approximation; unused lanes add 0
    float buffer[S::kLanes] = {};
    const size_t tail = static_cast<size_t>(n - i);
    std::memcpy(buffer, x + i, tail * sizeof(float));
    S::Store(buffer, ExpOrZero<S>(S::Sub(S::Load(buffer), s)));
    std::memcpy(x + i, buffer, tail * sizeof(float));
    std::memset(buffer + tail, 0, (S::kLanes - tail) * sizeof(float));
    acc = S::Add(acc, S::Load(buffer));
  }
  return SumLanes<S>(acc);
}

// Four independent running maxima hide the max latency; max is exact, so the split
// cannot change the result.
template <class S>
float RowMaxSimd(const float* x, int64_t n) {
  using V = typename S::V;
  constexpr int64_t kStep = 4 * S::kLanes;
  V m0 = S::Set(x[0]), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    m0 = S::Max(S::Load(x + i), m0);
    m1 = S::Max(S::Load(x + i + S::kLanes), m1);
    m2 = S::Max(S::Load(x + i + 2 * S::kLanes), m2);
    m3 = S::Max(S::Load(x + i + 3 * S::kLanes), m3);
  }
  for (; i + S::kLanes <= n; i += S::kLanes) m0 = S::Max(S::Load(x + i), m0);
  float lanes[S::kLanes];
  S::Store(lanes, S::Max(S::Max(m0, m1), S::Max(m2, m3)));
  float r = lanes[0];
  for (int l = 1; l < S::kLanes; ++l) r = lanes[l] > r ? lanes[l] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

}  // namespace
}  // namespace attention
}  // namespace onnx_light
