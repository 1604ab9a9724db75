#include "native/kernels/quantized/quantized_util.h"

#include <type_traits>

#include "native/kernels/common/type_dispatch.h"

namespace onnx_light {
namespace quantized {
namespace {

// The element types a zero point and a scale may have (a type mismatch is InvalidArgument).
using ZeroPointTypes = TypeList<int8_t, uint8_t, int32_t>;
using ScaleTypes = TypeList<float, Float16, BFloat16>;

Status CheckCount(const Tensor& t, int64_t count, const std::string& where, const char* what) {
  const int64_t n = t.num_elements();
  if (t.shape().rank() > 1 || (n != 1 && n != count)) {
    return InvalidArgument(where, ": ", what, " ", t.TypeAndShape(), " must be a scalar or have ", count, " elements");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PerAxis<int32_t>> ReadZeroPoint(const Tensor* t, int64_t count, const std::string& where, const char* what) {
  PerAxis<int32_t> zp;
  if (t == nullptr) {
    zp.values = {0};
    return zp;
  }
  OL_RETURN_IF_ERROR(CheckCount(*t, count, where, what));
  const Status read = DispatchType(ZeroPointTypes{}, t->dtype(), where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* v = t->data<T>();
    for (int64_t i = 0; i < t->num_elements(); ++i) zp.values.push_back(v[i]);
    return Status::Ok();
  });
  if (!read.ok() && t->num_elements() > 0) {  // an empty tensor of any type reads as nothing
    return InvalidArgument(where, ": ", what, " has unsupported type ", t->TypeAndShape());
  }
  if (zp.values.empty()) zp.values = {0};
  return zp;
}

StatusOr<PerAxis<float>> ReadScale(const Tensor* t, int64_t count, const std::string& where, const char* what) {
  if (t == nullptr) return InvalidArgument(where, ": ", what, " is required");
  OL_RETURN_IF_ERROR(CheckCount(*t, count, where, what));
  PerAxis<float> s;
  const Status read = DispatchType(ScaleTypes{}, t->dtype(), where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* v = t->data<T>();
    for (int64_t i = 0; i < t->num_elements(); ++i) {
      if constexpr (std::is_same_v<T, float>) {
        s.values.push_back(v[i]);
      } else {
        s.values.push_back(v[i].ToFloat());
      }
    }
    return Status::Ok();
  });
  if (!read.ok() && t->num_elements() > 0) {  // an empty tensor of any type reads as nothing
    return InvalidArgument(where, ": ", what, " has unsupported type ", t->TypeAndShape());
  }
  if (s.values.empty()) return InvalidArgument(where, ": ", what, " is empty");
  return s;
}

}  // namespace quantized
}  // namespace onnx_light
