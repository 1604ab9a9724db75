// Numeric<T>: how the axis-wise kernels (reductions, softmax, normalization, pooling)
// compute on an element type. float16 and bfloat16 compute in float (loads widen, the
// final store rounds once); integers sum in 64 bits; float and double compute natively.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "native/core/data_type.h"
#include "native/core/narrow_float.h"
#include "native/core/status.h"
#include "native/kernels/common/type_dispatch.h"

namespace onnx_light {

template <typename T, typename Enable = void>
struct Numeric {  // float, double, bool
  using Acc = T;
  static Acc Load(T v) { return v; }
  static T Store(Acc a) { return a; }
};

template <>
struct Numeric<Float16> {
  using Acc = float;
  static float Load(Float16 v) { return HalfBitsToFloat(v.bits); }
  static Float16 Store(float a) { return Float16::FromBits(FloatToHalfBits(a)); }
};

template <>
struct Numeric<BFloat16> {
  using Acc = float;
  static float Load(BFloat16 v) { return BFloat16BitsToFloat(v.bits); }
  static BFloat16 Store(float a) { return BFloat16::FromBits(FloatToBFloat16Bits(a)); }
};

template <typename T>
struct Numeric<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using Acc = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  static Acc Load(T v) { return v; }
  static T Store(Acc a) { return static_cast<T>(a); }  // wraps modulo 2^bits, as numpy does
};

// Integer arithmetic that wraps instead of overflowing (signed overflow is undefined).
template <typename A>
A WrappingAdd(A a, A b) {
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename A>
A WrappingMul(A a, A b) {
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// double -> integer without undefined behaviour: NaN gives 0, out-of-range saturates.
template <typename I>
I SaturatingFromDouble(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// The element types ONNX's reduction schemas list, by the opset that added them.
using ReduceNumericTypes = TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double, BFloat16>;
using FloatTypes = TypeList<Float16, float, double, BFloat16>;

}  // namespace onnx_light
