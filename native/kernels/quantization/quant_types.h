// Element types of the quantization family and their exact conversions to and from
// double (sub-byte integers are stored one per byte; narrow floats use the exact codecs
// of native/core/narrow_float.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/kernels/common/type_dispatch.h"

namespace onnx_light {
namespace quantization {

template <typename T>
inline constexpr bool kIsSubByteInt =
    std::is_same_v<T, Int4> || std::is_same_v<T, UInt4> || std::is_same_v<T, Int2> || std::is_same_v<T, UInt2>;

// Types with a format() (narrow floats, float16, bfloat16).
template <typename T, typename = void>
struct HasFormat : std::false_type {};
template <typename T>
struct HasFormat<T, std::void_t<decltype(T::format())>> : std::true_type {};

// Bits of a sub-byte integer's value: only the low `kBits` are read, so a byte holding
// the sign-extended value and one holding the packed nibble (as ml_dtypes stores int4)
// read alike.
template <typename T>
inline constexpr int kBits = std::is_same_v<T, Int4> || std::is_same_v<T, UInt4> ? 4 : 2;

template <typename T>
inline double ToDouble(const T& v) {
  if constexpr (kIsSubByteInt<T>) {
    const int low = static_cast<uint8_t>(v.value) & ((1 << kBits<T>)-1);
    constexpr int sign = std::is_same_v<T, Int4> || std::is_same_v<T, Int2> ? 1 << (kBits<T> - 1) : 0;
    return static_cast<double>((low ^ sign) - sign);
  } else if constexpr (HasFormat<T>::value) {
    return v.ToDouble();
  } else {
    return static_cast<double>(v);
  }
}

// The integer range of a quantized integer type.
struct IntRange {
  double lo, hi;
};
template <typename T>
constexpr IntRange RangeOf() {
  if constexpr (std::is_same_v<T, Int4>)
    return {-8, 7};
  else if constexpr (std::is_same_v<T, UInt4>)
    return {0, 15};
  else if constexpr (std::is_same_v<T, Int2>)
    return {-2, 1};
  else if constexpr (std::is_same_v<T, UInt2>)
    return {0, 3};
  else
    return {static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())};
}

// An integral double already clamped to T's range, stored as T.
template <typename T>
inline T FromClampedInt(double v) {
  if constexpr (kIsSubByteInt<T>) {
    T t;
    t.value = static_cast<decltype(t.value)>(v);
    return t;
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace quantization
}  // namespace onnx_light
