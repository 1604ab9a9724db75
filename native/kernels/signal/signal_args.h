// Inputs and element types shared by the signal families: scalar int inputs, the float
// types signals come in, and double conversions.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/core/tensor.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace signal {

// The float types signals come in; dispatch with DispatchType (native/kernels/common/type_dispatch.h).
using SignalTypes = TypeList<float, double, Float16, BFloat16>;

template <typename T>
inline double LoadDouble(const T& v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(v);
  else
    return v.ToDouble();
}

template <typename T>
inline T StoreDouble(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(v);
  else
    return T::FromDouble(v);
}

// Reads an optional scalar (or one-element) int32/int64 input; false when absent.
inline StatusOr<bool> ReadOptionalScalar(const KernelContext& ctx, int index, const std::string& where,
                                         const char* what, int64_t* value) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) return false;
  if (t->num_elements() != 1 || t->shape().rank() > 1) {
    return InvalidArgument(where, ": ", what, " must be a scalar, got ", t->TypeAndShape());
  }
  if (t->dtype() == DataType::kInt64) {
    *value = *t->data<int64_t>();
  } else if (t->dtype() == DataType::kInt32) {
    *value = *t->data<int32_t>();
  } else {
    return InvalidArgument(where, ": ", what, " must be int32 or int64, got ", t->TypeAndShape());
  }
  return true;
}

}  // namespace signal
}  // namespace onnx_light
