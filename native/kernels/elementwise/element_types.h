// The compute type in which each elementwise storage type is computed (float16, bfloat16
// and the float8 formats compute in float; everything else in itself). Type lists and
// dispatch: native/kernels/common/type_dispatch.h.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/kernels/common/type_dispatch.h"

namespace onnx_light {
namespace elementwise {

// Storage types that have no arithmetic of their own and compute in float.
template <typename T>
inline constexpr bool kComputesInFloat =
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Float8E4M3FN> ||
    std::is_same_v<T, Float8E4M3FNUZ> || std::is_same_v<T, Float8E5M2> || std::is_same_v<T, Float8E5M2FNUZ>;

template <typename T>
using ComputeType = std::conditional_t<kComputesInFloat<T>, float, T>;

// Narrow floats decode to float; other types are used as stored (strings by reference).
template <typename T>
inline decltype(auto) Load(const T& v) {
  if constexpr (kComputesInFloat<T>) {
    return v.ToFloat();
  } else {
    return (v);
  }
}

// Converts a computed value back to storage type T (narrow floats round to nearest even).
template <typename T, typename C>
inline T Store(C v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::FromFloat(static_cast<float>(v));
  } else if constexpr (kComputesInFloat<T>) {
    return T::FromDouble(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

// double -> integer with a defined result where C++ leaves it undefined: NaN gives 0,
// values beyond the range saturate (as numpy on x86 does not guarantee; documented).
template <typename I>
inline I SaturatingCast(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Two's-complement wrapping arithmetic for integers (signed overflow is not UB here).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
inline T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
inline T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <typename T>
inline T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}
template <typename T>
inline T WrapNeg(T a) {
  return static_cast<T>(WrapType<T>{0} - static_cast<WrapType<T>>(a));
}

}  // namespace elementwise
}  // namespace onnx_light
