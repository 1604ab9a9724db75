// DataType: every ONNX tensor element type, numbered as TensorProto.DataType numbers them.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>

#include "native/core/narrow_float.h"
#include "native/core/status.h"

namespace onnx_light {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,
  kFloat6E3M2 = 28,
};

inline constexpr int kNumDataTypes = 29;

enum class TypeKind : uint8_t { kUndefined, kFloat, kSignedInt, kUnsignedInt, kBool, kString, kComplex };

struct DataTypeInfo {
  DataType type;
  const char* name;     // ONNX's name: "float", "float16", "int4", "float8e4m3fn", ...
  size_t element_size;  // bytes per element in memory (sub-byte types use one byte)
  int bits;             // logical width: 4 for int4, 6 for float6e2m3, 8 for float8...
  TypeKind kind;
};

// Info for a valid DataType; kUndefined for anything else.
const DataTypeInfo& GetDataTypeInfo(DataType type);
inline const char* DataTypeName(DataType type) { return GetDataTypeInfo(type).name; }
inline size_t ElementSize(DataType type) { return GetDataTypeInfo(type).element_size; }
bool IsValidDataType(int32_t value);
StatusOr<DataType> DataTypeFromName(const std::string& name);

inline bool IsFloatingPoint(DataType t) { return GetDataTypeInfo(t).kind == TypeKind::kFloat; }
inline bool IsInteger(DataType t) {
  auto k = GetDataTypeInfo(t).kind;
  return k == TypeKind::kSignedInt || k == TypeKind::kUnsignedInt;
}

// C++ type <-> DataType.
template <typename T>
struct DataTypeOf;
#define OL_DATA_TYPE_OF(T, D)                      \
  template <>                                      \
  struct DataTypeOf<T> {                           \
    static constexpr DataType value = DataType::D; \
  };
OL_DATA_TYPE_OF(float, kFloat)
OL_DATA_TYPE_OF(uint8_t, kUint8)
OL_DATA_TYPE_OF(int8_t, kInt8)
OL_DATA_TYPE_OF(uint16_t, kUint16)
OL_DATA_TYPE_OF(int16_t, kInt16)
OL_DATA_TYPE_OF(int32_t, kInt32)
OL_DATA_TYPE_OF(int64_t, kInt64)
OL_DATA_TYPE_OF(std::string, kString)
OL_DATA_TYPE_OF(bool, kBool)
OL_DATA_TYPE_OF(Float16, kFloat16)
OL_DATA_TYPE_OF(double, kDouble)
OL_DATA_TYPE_OF(uint32_t, kUint32)
OL_DATA_TYPE_OF(uint64_t, kUint64)
OL_DATA_TYPE_OF(std::complex<float>, kComplex64)
OL_DATA_TYPE_OF(std::complex<double>, kComplex128)
OL_DATA_TYPE_OF(BFloat16, kBFloat16)
OL_DATA_TYPE_OF(Float8E4M3FN, kFloat8E4M3FN)
OL_DATA_TYPE_OF(Float8E4M3FNUZ, kFloat8E4M3FNUZ)
OL_DATA_TYPE_OF(Float8E5M2, kFloat8E5M2)
OL_DATA_TYPE_OF(Float8E5M2FNUZ, kFloat8E5M2FNUZ)
OL_DATA_TYPE_OF(UInt4, kUint4)
OL_DATA_TYPE_OF(Int4, kInt4)
OL_DATA_TYPE_OF(Float4E2M1, kFloat4E2M1)
OL_DATA_TYPE_OF(Float8E8M0, kFloat8E8M0)
OL_DATA_TYPE_OF(UInt2, kUint2)
OL_DATA_TYPE_OF(Int2, kInt2)
OL_DATA_TYPE_OF(Float6E2M3, kFloat6E2M3)
OL_DATA_TYPE_OF(Float6E3M2, kFloat6E3M2)
#undef OL_DATA_TYPE_OF

template <typename T>
inline constexpr DataType kDataTypeOf = DataTypeOf<T>::value;

}  // namespace onnx_light
