#include "native/core/status.h"

#include <gtest/gtest.h>

#include "native/core/data_type.h"

namespace onnx_light {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd value ", x);
  return x / 2;
}

Status Quarter(int x, int* out) {
  OL_ASSIGN_OR_RETURN(int h, Half(x));
  OL_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(Status, PropagatesAndFormats) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "InvalidArgument: odd value 3");
  EXPECT_EQ(s.WithContext("Add node 'n': ").message(), "Add node 'n': odd value 3");
}

TEST(DataType, NamesAndSizes) {
  EXPECT_EQ(std::string(DataTypeName(DataType::kFloat8E4M3FNUZ)), "float8e4m3fnuz");
  EXPECT_EQ(ElementSize(DataType::kComplex128), 16u);
  EXPECT_EQ(ElementSize(DataType::kInt4), 1u);
  EXPECT_EQ(GetDataTypeInfo(DataType::kInt4).bits, 4);
  EXPECT_EQ(*DataTypeFromName("bfloat16"), DataType::kBFloat16);
  EXPECT_FALSE(DataTypeFromName("float128").ok());
  EXPECT_FALSE(IsValidDataType(29));
  EXPECT_FALSE(IsValidDataType(0));
  for (int i = 1; i < kNumDataTypes; ++i) {
    EXPECT_EQ(static_cast<int>(GetDataTypeInfo(static_cast<DataType>(i)).type), i);
  }
}

}  // namespace
}  // namespace onnx_light
