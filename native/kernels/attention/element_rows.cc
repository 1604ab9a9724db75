#include "native/kernels/attention/element_rows.h"

namespace onnx_light {
namespace attention {

bool IsLoadableNumeric(DataType type) { return HasType(LoadableTypes{}, type); }

}  // namespace attention
}  // namespace onnx_light
