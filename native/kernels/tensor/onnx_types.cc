#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {

std::vector<DataType> TensorTypesAt(int opset, TensorTypeSet set) {
  using D = DataType;
  std::vector<DataType> types = {D::kFloat, D::kUint8,   D::kInt8,   D::kUint16, D::kInt16, D::kInt32,
                                 D::kInt64, D::kFloat16, D::kDouble, D::kUint32, D::kUint64};
  if (set.bool_type) types.push_back(D::kBool);
  if (set.string) types.push_back(D::kString);
  if (set.complex) types.insert(types.end(), {D::kComplex64, D::kComplex128});
  if (opset >= 13) types.push_back(D::kBFloat16);
  if (set.float8 && opset >= 19) {
    types.insert(types.end(), {D::kFloat8E4M3FN, D::kFloat8E4M3FNUZ, D::kFloat8E5M2, D::kFloat8E5M2FNUZ});
  }
  if (set.float8 && opset >= 24) types.push_back(D::kFloat8E8M0);
  if (set.sub_byte && opset >= 21) types.insert(types.end(), {D::kUint4, D::kInt4});
  if (set.sub_byte && opset >= 23) types.push_back(D::kFloat4E2M1);
  if (set.sub_byte && opset >= 25) types.insert(types.end(), {D::kUint2, D::kInt2});
  if (set.sub_byte && opset >= 28) types.insert(types.end(), {D::kFloat6E2M3, D::kFloat6E3M2});
  return types;
}

int CoveringVersion(std::initializer_list<int> versions, int opset) {
  int covering = *versions.begin();
  for (int v : versions) {
    if (v <= opset) covering = v;
  }
  return covering;
}

}  // namespace onnx_light
