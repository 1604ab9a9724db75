#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// The serial output 0, after the determinism check with the parallel path forced.
Value RunAllCounts(KernelTester& t) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  return serial.empty() ? Value() : serial.at(0);
}

TEST(BitCastTest, FloatBitsAsInt32) {
  KernelTester t("BitCast", 26);
  t.Input(MakeTensor<float>({3}, {1.0f, -2.0f, 0.0f})).Attr("to", static_cast<int64_t>(DataType::kInt32));
  Value v = RunAllCounts(t);
  EXPECT_EQ(ToVector<int32_t>(v.tensor()), (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000), 0}));
}

TEST(BitCastTest, UInt4ToInt4SignExtendsAndBack) {
  KernelTester t("BitCast", 26);
  t.Input(MakeTensor<UInt4>({3}, {UInt4{15}, UInt4{8}, UInt4{7}})).Attr("to", static_cast<int64_t>(DataType::kInt4));
  Value v = RunAllCounts(t);
  std::vector<int> got;
  for (const Int4& x : ToVector<Int4>(v.tensor())) got.push_back(x.value);
  EXPECT_EQ(got, (std::vector<int>{-1, -8, 7}));
}

TEST(BitCastTest, ByteToBoolIsTrueForAnySetBit) {
  std::vector<uint8_t> bytes(300);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : 1 + i % 200);
  KernelTester t("BitCast", 26);
  t.Input(MakeTensor<uint8_t>({300}, bytes)).Attr("to", static_cast<int64_t>(DataType::kBool));
  Value v = RunAllCounts(t);
  const std::vector<bool> b = ToVector<bool>(v.tensor());
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i], i % 3 != 0) << i;
}

TEST(BitCastTest, RejectsDifferentWidths) {
  KernelTester t("BitCast", 26);
  t.Input(MakeTensor<float>({1}, {1.0f})).Attr("to", static_cast<int64_t>(DataType::kInt64));
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("widths"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace onnx_light
