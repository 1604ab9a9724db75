// Floating element types of LRN and Det (dispatched with onnx_light::DispatchType over
// FloatTypes, reduce_util/numeric.h), loaded to and stored from double.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/kernels/reduce_util/numeric.h"

namespace onnx_light {
namespace lrn_det {

template <typename T>
inline double Load(const T& v) {
  if constexpr (std::is_floating_point_v<T>)
    return v;
  else
    return v.ToDouble();
}

template <typename T>
inline T Store(double v) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return T::FromDouble(v);
}

inline std::vector<DataType> FloatTypesAt(int opset, int bfloat16_since) {
  std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  if (opset >= bfloat16_since) types.push_back(DataType::kBFloat16);
  return types;
}

}  // namespace lrn_det
}  // namespace onnx_light
