// Run-time element type dispatch for the ai.onnx.ml kernels.
#pragma once

#include <string>

#include "native/core/data_type.h"
#include "native/core/status.h"

namespace onnx_light {
namespace ml {

// Calls fn(static_cast<T*>(nullptr)) for the T among Ts whose DataType is `type`;
// NotImplemented naming the type otherwise.
template <typename... Ts, typename Fn>
Status DispatchOn(DataType type, const std::string& where, Fn&& fn) {
  Status result;
  const bool found = ((type == kDataTypeOf<Ts> ? (result = fn(static_cast<Ts*>(nullptr)), true) : false) || ...);
  if (!found) return NotImplemented(where, ": element type ", DataTypeName(type), " is not supported");
  return result;
}

}  // namespace ml
}  // namespace onnx_light
