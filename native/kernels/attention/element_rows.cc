#include "native/kernels/attention/element_rows.h"

namespace onnx_light {
namespace attention {

bool IsLoadableNumeric(DataType type) {
  switch (type) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

}  // namespace attention
}  // namespace onnx_light
