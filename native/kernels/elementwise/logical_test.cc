// Comparisons, And/Or/Xor, bitwise ops and BitShift.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "native/kernels/elementwise/test_util.h"

namespace onnx_light {
namespace elementwise {
namespace {

using namespace testing;

template <typename T>
std::vector<bool> Compare(const char* op, int opset, Shape as, std::vector<T> a, Shape bs, std::vector<T> b) {
  KernelTester t(op, opset);
  t.Input(MakeTensor<T>(as, a)).Input(MakeTensor<T>(bs, b));
  Tensor out = RunAllCounts(t);
  EXPECT_EQ(out.dtype(), DataType::kBool);
  return std::vector<bool>(out.data<bool>(), out.data<bool>() + out.num_elements());
}

TEST(Compare, FloatComparisonsWithNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1, 2, 3, nan, -0.0f};
  const std::vector<float> b = {2, 2, 2, nan, 0.0f};
  EXPECT_EQ(Compare<float>("Less", 13, {5}, a, {5}, b), (std::vector<bool>{1, 0, 0, 0, 0}));
  EXPECT_EQ(Compare<float>("Greater", 13, {5}, a, {5}, b), (std::vector<bool>{0, 0, 1, 0, 0}));
  EXPECT_EQ(Compare<float>("LessOrEqual", 16, {5}, a, {5}, b), (std::vector<bool>{1, 1, 0, 0, 1}));
  EXPECT_EQ(Compare<float>("GreaterOrEqual", 16, {5}, a, {5}, b), (std::vector<bool>{0, 1, 1, 0, 1}));
  EXPECT_EQ(Compare<float>("Equal", 13, {5}, a, {5}, b), (std::vector<bool>{0, 1, 0, 0, 1}));
}

TEST(Compare, BroadcastLargeIntegers) {
  const int64_t n = 3000;
  auto a = RandomValues<int64_t>(n, -100, 100);
  auto got = Compare<int64_t>("Greater", 13, {n / 3, 3}, a, {3}, {-50, 0, 50});
  const int64_t thresholds[3] = {-50, 0, 50};
  for (int64_t k = 0; k < n; ++k) EXPECT_EQ(got[k], a[k] > thresholds[k % 3]) << k;
}

TEST(Compare, StringAndBoolEqual) {
  EXPECT_EQ(Compare<std::string>("Equal", 19, {3}, {"a", "bc", ""}, {}, {"bc"}), (std::vector<bool>{0, 1, 0}));
  EXPECT_EQ(Compare<bool>("Equal", 13, {2}, {true, false}, {2}, {true, true}), (std::vector<bool>{1, 0}));
  KernelTester before19("Equal", 13);
  before19.Input(MakeTensor<std::string>({1}, {"a"})).Input(MakeTensor<std::string>({1}, {"a"}));
  EXPECT_FALSE(before19.Run(1).ok());
}

TEST(Logic, AndOrXorTruthTables) {
  const std::vector<bool> a = {false, false, true, true};
  const std::vector<bool> b = {false, true, false, true};
  auto run = [&](const char* op) {
    KernelTester t(op, 7);
    t.Input(MakeTensor<bool>({4}, a)).Input(MakeTensor<bool>({4}, b));
    Tensor out = RunAllCounts(t);
    return std::vector<bool>(out.data<bool>(), out.data<bool>() + 4);
  };
  EXPECT_EQ(run("And"), (std::vector<bool>{0, 0, 0, 1}));
  EXPECT_EQ(run("Or"), (std::vector<bool>{0, 1, 1, 1}));
  EXPECT_EQ(run("Xor"), (std::vector<bool>{0, 1, 1, 0}));
}

TEST(Bitwise, AndOrXorSigned) {
  auto run = [&](const char* op) {
    KernelTester t(op, 18);
    t.Input(MakeTensor<int16_t>({3}, {0x0ff0, -1, 5})).Input(MakeTensor<int16_t>({3}, {0x00ff, 0x1234, 3}));
    return ToVector<int16_t>(RunAllCounts(t));
  };
  EXPECT_EQ(run("BitwiseAnd"), (std::vector<int16_t>{0x00f0, 0x1234, 1}));
  EXPECT_EQ(run("BitwiseOr"), (std::vector<int16_t>{0x0fff, -1, 7}));
  EXPECT_EQ(run("BitwiseXor"), (std::vector<int16_t>{0x0f0f, static_cast<int16_t>(~0x1234), 6}));
}

TEST(BitShift, DirectionsAndOutOfRangeAmounts) {
  KernelTester left("BitShift", 11);
  left.Input(MakeTensor<uint8_t>({4}, {1, 2, 0x81, 1})).Input(MakeTensor<uint8_t>({4}, {1, 2, 1, 8}));
  left.Attr("direction", std::string("LEFT"));
  EXPECT_EQ(ToVector<uint8_t>(RunAllCounts(left)), (std::vector<uint8_t>{2, 8, 2, 0}));
  KernelTester right("BitShift", 28);
  right.Input(MakeTensor<int32_t>({5}, {-8, 8, -8, 8, -1})).Input(MakeTensor<int32_t>({5}, {1, 1, 40, 40, -1}));
  right.Attr("direction", std::string("RIGHT"));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(right)), (std::vector<int32_t>{-4, 4, -1, 0, -1}));
  KernelTester bad("BitShift", 11);
  bad.Input(MakeTensor<uint8_t>({1}, {1})).Input(MakeTensor<uint8_t>({1}, {1})).Attr("direction", std::string("UP"));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester signed_before_28("BitShift", 11);
  signed_before_28.Input(MakeTensor<int8_t>({1}, {1})).Input(MakeTensor<int8_t>({1}, {1}));
  signed_before_28.Attr("direction", std::string("LEFT"));
  EXPECT_FALSE(signed_before_28.Run(1).ok());
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
