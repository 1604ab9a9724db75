#include "native/kernels/quantized/quantized_util.h"

namespace onnx_light {
namespace quantized {
namespace {

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
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    switch (t->dtype()) {
      case DataType::kInt8:
        zp.values.push_back(t->data<int8_t>()[i]);
        break;
      case DataType::kUint8:
        zp.values.push_back(t->data<uint8_t>()[i]);
        break;
      case DataType::kInt32:
        zp.values.push_back(t->data<int32_t>()[i]);
        break;
      default:
        return InvalidArgument(where, ": ", what, " has unsupported type ", t->TypeAndShape());
    }
  }
  if (zp.values.empty()) zp.values = {0};
  return zp;
}

StatusOr<PerAxis<float>> ReadScale(const Tensor* t, int64_t count, const std::string& where, const char* what) {
  if (t == nullptr) return InvalidArgument(where, ": ", what, " is required");
  OL_RETURN_IF_ERROR(CheckCount(*t, count, where, what));
  PerAxis<float> s;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    switch (t->dtype()) {
      case DataType::kFloat:
        s.values.push_back(t->data<float>()[i]);
        break;
      case DataType::kFloat16:
        s.values.push_back(t->data<Float16>()[i].ToFloat());
        break;
      case DataType::kBFloat16:
        s.values.push_back(t->data<BFloat16>()[i].ToFloat());
        break;
      default:
        return InvalidArgument(where, ": ", what, " has unsupported type ", t->TypeAndShape());
    }
  }
  if (s.values.empty()) return InvalidArgument(where, ": ", what, " is empty");
  return s;
}

}  // namespace quantized
}  // namespace onnx_light
