// Reducer<Op, T>: one ONNX Reduce* operator as map -> combine -> finalize over an
// accumulator type (Numeric<T>::Acc; double for integer LogSumExp).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "native/kernels/reduce_util/numeric.h"

namespace onnx_light {

enum class ReduceOp { kSum, kSumSquare, kMean, kL1, kL2, kLogSum, kLogSumExp, kProd, kMax, kMin };

template <ReduceOp Op, typename T>
struct Reducer {
  using In = T;
  using Out = T;
  using Acc = std::conditional_t<Op == ReduceOp::kLogSumExp && std::is_integral_v<typename Numeric<T>::Acc>, double,
                                 typename Numeric<T>::Acc>;
  // LogSumExp reads a per-output shift (the maximum, computed by a first pass).
  static constexpr bool kNeedsShift = Op == ReduceOp::kLogSumExp;

  static Acc Identity() {
    if constexpr (Op == ReduceOp::kProd) return Acc(1);
    if constexpr (Op == ReduceOp::kMax) return Lowest();
    if constexpr (Op == ReduceOp::kMin) return Highest();
    return Acc(0);
  }
  static Acc Map(In v, Acc shift) {
    const Acc x = static_cast<Acc>(Numeric<T>::Load(v));
    if constexpr (Op == ReduceOp::kSumSquare || Op == ReduceOp::kL2) return WrappingMul(x, x);
    if constexpr (Op == ReduceOp::kL1) {
      if constexpr (std::is_unsigned_v<Acc>)
        return x;
      else
        return x < 0 ? Acc(0) - x : x;
    }
    if constexpr (Op == ReduceOp::kLogSumExp) return std::exp(x - shift);
    return x;
  }
  static Acc Combine(Acc a, Acc b) {
    if constexpr (Op == ReduceOp::kProd) return WrappingMul(a, b);
    if constexpr (Op == ReduceOp::kMax || Op == ReduceOp::kMin) {
      if constexpr (std::is_floating_point_v<Acc>) {
        if (std::isnan(a) || std::isnan(b)) return a + b;  // NaN propagates
      }
      if constexpr (Op == ReduceOp::kMax)
        return a < b ? b : a;
      else
        return b < a ? b : a;
    }
    return WrappingAdd(a, b);
  }
  static Out Finalize(Acc a, int64_t count, Acc shift) {
    if constexpr (Op == ReduceOp::kMean) {
      if constexpr (std::is_floating_point_v<Acc>)
        return Numeric<T>::Store(a / static_cast<Acc>(count));
      else
        return Numeric<T>::Store(count == 0 ? Acc(0) : a / static_cast<Acc>(count));  // empty: 0, not a trap
    }
    if constexpr (Op == ReduceOp::kL2) return FromReal(std::sqrt(static_cast<double>(a)), std::sqrt(a));
    if constexpr (Op == ReduceOp::kLogSum) return FromReal(std::log(static_cast<double>(a)), std::log(a));
    if constexpr (Op == ReduceOp::kLogSumExp) return FromReal(shift + std::log(a), shift + std::log(a));
    return Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(a));
  }

 private:
  static Acc Lowest() {
    if constexpr (std::numeric_limits<Acc>::has_infinity) {
      return -std::numeric_limits<Acc>::infinity();
    } else {  // integers: the element type's own minimum (false for bool)
      return static_cast<Acc>(std::numeric_limits<T>::lowest());
    }
  }
  static Acc Highest() {
    if constexpr (std::numeric_limits<Acc>::has_infinity) {
      return std::numeric_limits<Acc>::infinity();
    } else {
      return static_cast<Acc>(std::numeric_limits<T>::max());
    }
  }
  // Float results store directly; integer results saturate from the double value.
  template <typename R>
  static Out FromReal(double as_double, R as_acc) {
    if constexpr (std::is_integral_v<T>)
      return SaturatingFromDouble<T>(as_double);
    else
      return Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(as_acc));
  }
};

// First pass of LogSumExp: the maximum as an accumulator-typed shift. A non-finite
// maximum (empty, all -inf, +inf, NaN) gives shift 0 so exp() sees the raw values.
template <typename T>
struct ShiftReducer {
  using Max = Reducer<ReduceOp::kMax, T>;
  using In = T;
  using Acc = typename Reducer<ReduceOp::kLogSumExp, T>::Acc;
  using Out = Acc;
  static constexpr bool kNeedsShift = false;
  static Acc Identity() { return -std::numeric_limits<Acc>::infinity(); }
  static Acc Map(In v, Acc) { return static_cast<Acc>(Numeric<T>::Load(v)); }
  static Acc Combine(Acc a, Acc b) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
    return a < b ? b : a;
  }
  static Out Finalize(Acc a, int64_t, Acc) { return std::isfinite(a) ? a : Acc(0); }
};

}  // namespace onnx_light
