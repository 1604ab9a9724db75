// Zero points, scales and requantization shared by the integer matmuls and convolutions.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {
namespace quantized {

// A per-tensor (one value) or per-axis (`count` values) quantization parameter.
template <typename T>
struct PerAxis {
  std::vector<T> values;  // size 1 or count
  T at(int64_t i) const { return values.size() == 1 ? values[0] : values[i]; }
};

// Reads a zero point (int8/uint8/int32 tensor; absent = 0) as int32, scalar or 1-D of
// `count` elements. `what` names the input in errors.
StatusOr<PerAxis<int32_t>> ReadZeroPoint(const Tensor* t, int64_t count, const std::string& where, const char* what);
// Reads a scale (float, float16 or bfloat16), scalar or 1-D of `count` elements.
StatusOr<PerAxis<float>> ReadScale(const Tensor* t, int64_t count, const std::string& where, const char* what);

// round-half-to-even(acc * multiplier + zero_point) saturated to Q, as the ONNX reference
// computes it (the product in double).
template <typename Q>
Q Requantize(int32_t acc, float multiplier, int32_t zero_point) {
  const double v = std::nearbyint(static_cast<double>(acc) * multiplier + zero_point);
  const double lo = std::is_signed<Q>::value ? -128.0 : 0.0, hi = std::is_signed<Q>::value ? 127.0 : 255.0;
  return static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));
}

// Element value of an int8/uint8 tensor as int32.
inline int32_t Int8At(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? static_cast<int32_t>(t.data<int8_t>()[i])
                                      : static_cast<int32_t>(t.data<uint8_t>()[i]);
}

}  // namespace quantized
}  // namespace onnx_light
