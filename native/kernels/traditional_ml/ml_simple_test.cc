// Binarizer and ArrayFeatureExtractor: values written out by hand, bad indices rejected.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

TEST(Binarizer, StrictlyAboveThreshold) {
  KernelTester t("Binarizer", 1, "ai.onnx.ml");
  t.Attr("threshold", 1.5f).Input(MakeTensor<float>({2, 2}, {1.0f, 1.5f, 1.6f, -3.0f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{0, 0, 1, 0}));

  KernelTester ints("Binarizer", 1, "ai.onnx.ml");
  ints.Input(MakeTensor<int64_t>({3}, {-1, 0, 7}));
  auto out2 = ints.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out2->at(0).tensor()), (std::vector<int64_t>{0, 0, 1}));
}

TEST(ArrayFeatureExtractor, PicksLastAxis) {
  KernelTester t("ArrayFeatureExtractor", 1, "ai.onnx.ml");
  t.Input(MakeTensor<int32_t>({2, 3}, {10, 11, 12, 20, 21, 22})).Input(MakeTensor<int64_t>({3}, {2, 0, 2}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(ToVector<int32_t>(out->at(0).tensor()), (std::vector<int32_t>{12, 10, 12, 22, 20, 22}));
}

TEST(ArrayFeatureExtractor, VectorBecomesOneRowOfStrings) {
  KernelTester t("ArrayFeatureExtractor", 1, "ai.onnx.ml");
  t.Input(MakeTensor<std::string>({3}, {"a", "b", "c"})).Input(MakeTensor<int64_t>({1}, {1}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{1, 1}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (std::vector<std::string>{"b"}));
}

TEST(ArrayFeatureExtractor, RejectsOutOfRangeIndex) {
  KernelTester t("ArrayFeatureExtractor", 1, "ai.onnx.ml");
  t.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>({1}, {2}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light

namespace onnx_light {
namespace {

TEST(LabelEncoder, StringsToIntsWithDefault) {
  testing::KernelTester t("LabelEncoder", 4, "ai.onnx.ml");
  t.Attr("keys_strings", std::vector<std::string>{"a", "b"}).Attr("values_int64s", std::vector<int64_t>{7, 9});
  t.Input(testing::MakeTensor<std::string>({2, 2}, {"b", "z", "a", "b"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(testing::ToVector<int64_t>(out->at(0).tensor()), (std::vector<int64_t>{9, -1, 7, 9}));
}

TEST(LabelEncoder, TensorTablesAndNan) {
  testing::KernelTester t("LabelEncoder", 4, "ai.onnx.ml");
  t.Attr("keys_tensor", testing::MakeTensor<double>({3}, {1.5, NAN, -0.0}));
  t.Attr("values_tensor", testing::MakeTensor<int32_t>({3}, {10, 20, 30}));
  t.Attr("default_tensor", testing::MakeTensor<int32_t>({1}, {-5}));
  t.Input(testing::MakeTensor<double>({4}, {NAN, 0.0, 1.5, 2.0}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(testing::ToVector<int32_t>(out->at(0).tensor()), (std::vector<int32_t>{20, 30, 10, -5}));
}

TEST(LabelEncoder, RejectsUnevenTable) {
  testing::KernelTester t("LabelEncoder", 2, "ai.onnx.ml");
  t.Attr("keys_int64s", std::vector<int64_t>{1, 2}).Attr("values_floats", std::vector<float>{1.0f});
  t.Input(testing::MakeTensor<int64_t>({1}, {1}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
