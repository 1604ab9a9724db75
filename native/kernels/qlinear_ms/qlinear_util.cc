#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {

Status CheckEightBit(const Tensor& t, const std::string& where, const char* what) {
  if (t.dtype() == DataType::kUint8 || t.dtype() == DataType::kInt8) return Status::Ok();
  return InvalidArgument(where, ": ", what, " must be uint8 or int8, got ", t.TypeAndShape());
}

StatusOr<QParams> ReadQParams(const Tensor* scale, const Tensor* zero_point, DataType type, const std::string& where,
                              const char* scale_name, const char* zp_name) {
  QParams p;
  if (scale == nullptr) return InvalidArgument(where, ": ", scale_name, " is required");
  if (scale->dtype() != DataType::kFloat || scale->num_elements() != 1) {
    return InvalidArgument(where, ": ", scale_name, " must be one float (per-tensor), got ", scale->TypeAndShape());
  }
  p.scale = scale->data<float>()[0];
  if (!(std::isfinite(p.scale) && p.scale > 0.0f)) {
    return InvalidArgument(where, ": ", scale_name, " must be finite and > 0, got ", p.scale);
  }
  if (zero_point == nullptr) return p;
  if (zero_point->dtype() != type || zero_point->num_elements() != 1) {
    return InvalidArgument(where, ": ", zp_name, " must be one ", DataTypeName(type), " (per-tensor), got ",
                           zero_point->TypeAndShape());
  }
  p.zero_point = type == DataType::kInt8 ? static_cast<int32_t>(zero_point->data<int8_t>()[0])
                                         : static_cast<int32_t>(zero_point->data<uint8_t>()[0]);
  return p;
}

StatusOr<MaybeQParams> ConstantQParams(const KernelInfo& info, int scale_index, int zp_index, DataType type,
                                       const char* scale_name, const char* zp_name) {
  MaybeQParams result;
  const Tensor* scale = info.constant_input(scale_index);
  const Tensor* zp = info.constant_input(zp_index);
  const bool zp_absent = zp_index >= info.num_inputs();
  if (scale == nullptr || (zp == nullptr && !zp_absent)) return result;
  OL_ASSIGN_OR_RETURN(result.params, ReadQParams(scale, zp, type, info.Where(), scale_name, zp_name));
  result.known = true;
  return result;
}

}  // namespace qlinear_ms
}  // namespace onnx_light
