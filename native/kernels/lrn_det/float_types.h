// Floating element types of LRN and Det, loaded to and stored from double.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"

namespace onnx_light {
namespace lrn_det {

template <typename... Ts>
struct TypeList {};
using FloatTypes = TypeList<float, double, Float16, BFloat16>;

template <typename... Ts, typename Fn>
Status DispatchType(TypeList<Ts...>, DataType type, const std::string& where, Fn&& fn) {
  Status result;
  const bool found = ((type == kDataTypeOf<Ts> ? (result = fn(static_cast<Ts*>(nullptr)), true) : false) || ...);
  if (!found) return NotImplemented(where, ": element type ", DataTypeName(type), " is not supported");
  return result;
}

template <typename T>
inline double Load(const T& v) {
  if constexpr (std::is_floating_point_v<T>) return v;
  else return v.ToDouble();
}

template <typename T>
inline T Store(double v) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else return T::FromDouble(v);
}

inline std::vector<DataType> FloatTypesAt(int opset, int bfloat16_since) {
  std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  if (opset >= bfloat16_since) types.push_back(DataType::kBFloat16);
  return types;
}

}  // namespace lrn_det
}  // namespace onnx_light
