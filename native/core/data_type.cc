#include "native/core/data_type.h"

namespace onnx_light {
namespace {

constexpr DataTypeInfo kInfos[kNumDataTypes] = {
    {DataType::kUndefined, "undefined", 0, 0, TypeKind::kUndefined},
    {DataType::kFloat, "float", 4, 32, TypeKind::kFloat},
    {DataType::kUint8, "uint8", 1, 8, TypeKind::kUnsignedInt},
    {DataType::kInt8, "int8", 1, 8, TypeKind::kSignedInt},
    {DataType::kUint16, "uint16", 2, 16, TypeKind::kUnsignedInt},
    {DataType::kInt16, "int16", 2, 16, TypeKind::kSignedInt},
    {DataType::kInt32, "int32", 4, 32, TypeKind::kSignedInt},
    {DataType::kInt64, "int64", 8, 64, TypeKind::kSignedInt},
    {DataType::kString, "string", sizeof(std::string), 0, TypeKind::kString},
    {DataType::kBool, "bool", 1, 8, TypeKind::kBool},
    {DataType::kFloat16, "float16", 2, 16, TypeKind::kFloat},
    {DataType::kDouble, "double", 8, 64, TypeKind::kFloat},
    {DataType::kUint32, "uint32", 4, 32, TypeKind::kUnsignedInt},
    {DataType::kUint64, "uint64", 8, 64, TypeKind::kUnsignedInt},
    {DataType::kComplex64, "complex64", 8, 64, TypeKind::kComplex},
    {DataType::kComplex128, "complex128", 16, 128, TypeKind::kComplex},
    {DataType::kBFloat16, "bfloat16", 2, 16, TypeKind::kFloat},
    {DataType::kFloat8E4M3FN, "float8e4m3fn", 1, 8, TypeKind::kFloat},
    {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", 1, 8, TypeKind::kFloat},
    {DataType::kFloat8E5M2, "float8e5m2", 1, 8, TypeKind::kFloat},
    {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", 1, 8, TypeKind::kFloat},
    {DataType::kUint4, "uint4", 1, 4, TypeKind::kUnsignedInt},
    {DataType::kInt4, "int4", 1, 4, TypeKind::kSignedInt},
    {DataType::kFloat4E2M1, "float4e2m1", 1, 4, TypeKind::kFloat},
    {DataType::kFloat8E8M0, "float8e8m0", 1, 8, TypeKind::kFloat},
    {DataType::kUint2, "uint2", 1, 2, TypeKind::kUnsignedInt},
    {DataType::kInt2, "int2", 1, 2, TypeKind::kSignedInt},
    {DataType::kFloat6E2M3, "float6e2m3", 1, 6, TypeKind::kFloat},
    {DataType::kFloat6E3M2, "float6e3m2", 1, 6, TypeKind::kFloat},
};

}  // namespace

bool IsValidDataType(int32_t value) { return value > 0 && value < kNumDataTypes; }

const DataTypeInfo& GetDataTypeInfo(DataType type) {
  const int32_t v = static_cast<int32_t>(type);
  return IsValidDataType(v) ? kInfos[v] : kInfos[0];
}

StatusOr<DataType> DataTypeFromName(const std::string& name) {
  for (const auto& info : kInfos) {
    if (info.type != DataType::kUndefined && name == info.name) return info.type;
  }
  return InvalidArgument("unknown element type name '", name, "'");
}

}  // namespace onnx_light
