// The row primitives of rows.h over a lane type of math.h; included by the per-ISA
// rows_<isa>.cc files (isa_library targets) after their lane header. Tails go through
// the same vector code on a zero-padded buffer, so every element sees the same arithmetic.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace simd {
namespace {

// exp, with inputs below the float range flushed to 0: masked keys arrive as -inf (or
// very negative scores) and must weigh exactly nothing.
template <class S>
inline typename S::V ExpOrZero(typename S::V x) {
  return S::Select(S::Less(x, S::Set(-87.33654f)), S::Set(0.0f), Exp<S>(x));
}

// exp(d) for d = x - shift: the general ExpOrZero, or with kBelowShift (shift is the
// maximum of the values it is taken from: d <= 0 or NaN) math.h's shorter
// ExpNonPositiveOrZero, which gives the same value there.
template <class S, bool kBelowShift>
inline typename S::V ExpOfShifted(typename S::V d) {
  if constexpr (kBelowShift) {
    return ExpNonPositiveOrZero<S>(d);
  } else {
    return ExpOrZero<S>(d);
  }
}

// Lanes summed as a fixed pairwise tree: the order depends only on the lane count. Fully
// unrolled (kLanes - 1 adds in log2(kLanes) levels): a row of 128 floats has only 8
// AVX-512 vectors, so a looped tree was a visible part of its cost.
template <class S>
float SumLanes(typename S::V v) {
  float lanes[S::kLanes];
  S::Store(lanes, v);
#pragma GCC unroll 8
  for (int width = S::kLanes / 2; width >= 1; width /= 2) {
#pragma GCC unroll 16
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

// The `tail` < kLanes last elements of `src` as a vector, zero-padded.
template <class S>
typename S::V LoadTail(const float* src, int64_t tail) {
  float buffer[S::kLanes] = {};
  std::memcpy(buffer, src, static_cast<size_t>(tail) * sizeof(float));
  return S::Load(buffer);
}

template <class S>
void StoreTail(float* dst, typename S::V v, int64_t tail) {
  float buffer[S::kLanes];
  S::Store(buffer, v);
  std::memcpy(dst, buffer, static_cast<size_t>(tail) * sizeof(float));
}

template <class S, bool kBelowShift = false>
float ExpShiftedSumSimd(const float* x, float* y, int64_t n, float shift) {
  using V = typename S::V;
  const V s = S::Set(shift);
  V acc = S::Set(0.0f);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) {
    const V e = ExpOfShifted<S, kBelowShift>(S::Sub(S::Load(x + i), s));
    S::Store(y + i, e);
    acc = S::Add(acc, e);
  }
  if (i < n) {  // the padding's lanes (0 - shift, possibly above 0) are not stored
    const int64_t tail = n - i;
    StoreTail<S>(y + i, ExpOfShifted<S, kBelowShift>(S::Sub(LoadTail<S>(x + i, tail), s)), tail);
    acc = S::Add(acc, LoadTail<S>(y + i, tail));  // unused lanes add 0
  }
  return SumLanes<S>(acc);
}

template <class S>
void ScaleRowSimd(float* x, int64_t n, float factor) {
  const typename S::V f = S::Set(factor);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(x + i, S::Mul(S::Load(x + i), f));
  for (; i < n; ++i) x[i] *= factor;
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
  // The lanes as a pairwise tree (log2(kLanes) levels, not a chain of kLanes - 1 compares
  // that the exp pass waits for); the largest value whatever the order.
  float lanes[S::kLanes];
  S::Store(lanes, S::Max(S::Max(m0, m1), S::Max(m2, m3)));
#pragma GCC unroll 8
  for (int width = S::kLanes / 2; width >= 1; width /= 2) {
#pragma GCC unroll 16
    for (int l = 0; l < width; ++l) lanes[l] = lanes[l + width] > lanes[l] ? lanes[l + width] : lanes[l];
  }
  float r = lanes[0];
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

template <class S>
void SoftmaxRowSimd(const float* x, float* y, int64_t n) {
  ScaleRowSimd<S>(y, n, 1.0f / ExpShiftedSumSimd<S, /*kBelowShift=*/true>(x, y, n, RowMaxSimd<S>(x, n)));
}

template <class S>
void LogSoftmaxRowSimd(const float* x, float* y, int64_t n) {
  const float m = RowMaxSimd<S>(x, n);
  // logf, not std::log: the C++ overload is an inline function this ISA-flagged file would
  // emit with external linkage (isa_variants.h).
  const typename S::V shift = S::Set(m + logf(ExpShiftedSumSimd<S, /*kBelowShift=*/true>(x, y, n, m)));
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(y + i, S::Sub(S::Load(x + i), shift));
  if (i < n) StoreTail<S>(y + i, S::Sub(LoadTail<S>(x + i, n - i), shift), n - i);
}

template <class S>
void MaxIntoSimd(const float* x, float* m, int64_t n) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(m + i, S::Max(S::Load(x + i), S::Load(m + i)));
  for (; i < n; ++i) m[i] = x[i] > m[i] ? x[i] : m[i];  // the vector Max's choice, lane by lane
}

template <class S>
void ExpShiftedAccumulateSimd(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  using V = typename S::V;
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) {
    const V e = ExpNonPositiveOrZero<S>(S::Sub(S::Load(x + i), S::Load(shift + i)));
    S::Store(y + i, e);
    S::Store(sum + i, S::Add(S::Load(sum + i), e));
  }
  if (i < n) {
    const int64_t tail = n - i;
    const V e = ExpNonPositiveOrZero<S>(S::Sub(LoadTail<S>(x + i, tail), LoadTail<S>(shift + i, tail)));
    StoreTail<S>(y + i, e, tail);
    StoreTail<S>(sum + i, S::Add(LoadTail<S>(sum + i, tail), e), tail);
  }
}

// Two accumulators halve the add latency chain; the order depends only on n.
template <class S, typename F>
float SumMapped(const float* x, int64_t n, F&& f) {
  using V = typename S::V;
  V a0 = S::Set(0.0f), a1 = a0;
  int64_t i = 0;
  for (; i + 2 * S::kLanes <= n; i += 2 * S::kLanes) {
    a0 = S::Add(a0, f(S::Load(x + i)));
    a1 = S::Add(a1, f(S::Load(x + i + S::kLanes)));
  }
  for (; i + S::kLanes <= n; i += S::kLanes) a0 = S::Add(a0, f(S::Load(x + i)));
  float total = SumLanes<S>(S::Add(a0, a1));
  if (i < n) {  // the tail's padding maps to a value that is masked out by summing only `tail` lanes
    float lanes[S::kLanes];
    S::Store(lanes, f(LoadTail<S>(x + i, n - i)));
    for (int64_t l = 0; l < n - i; ++l) total += lanes[l];
  }
  return total;
}

// Maps for SumMapped. Function objects, not lambdas: written when these files were
// compiled under `#pragma GCC target`, which GCC does not give a lambda's body (the
// isa_library flags now cover the whole file; the function objects stay).
template <class S>
struct Unchanged {
  typename S::V operator()(typename S::V v) const { return v; }
};

template <class S>
struct SquaredDeviation {
  typename S::V mean;
  typename S::V operator()(typename S::V v) const {
    const typename S::V d = S::Sub(v, mean);
    return S::Mul(d, d);
  }
};

template <class S>
float RowSumSimd(const float* x, int64_t n) {
  return SumMapped<S>(x, n, Unchanged<S>{});
}

template <class S>
float RowSquaredDeviationSumSimd(const float* x, int64_t n, float mean) {
  return SumMapped<S>(x, n, SquaredDeviation<S>{S::Set(mean)});
}

template <class S>
void NormalizeRowSimd(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                      const float* beta) {
  using V = typename S::V;
  const V m = S::Set(mean), s = S::Set(inv);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) {
    const V v = S::Mul(S::Mul(S::Sub(S::Load(x + i), m), s), S::Load(gamma + i));
    S::Store(y + i, beta ? S::Add(v, S::Load(beta + i)) : v);
  }
  if (i < n) {
    const int64_t tail = n - i;
    const V v = S::Mul(S::Mul(S::Sub(LoadTail<S>(x + i, tail), m), s), LoadTail<S>(gamma + i, tail));
    StoreTail<S>(y + i, beta ? S::Add(v, LoadTail<S>(beta + i, tail)) : v, tail);
  }
}

}  // namespace
}  // namespace simd
}  // namespace onnx_light
