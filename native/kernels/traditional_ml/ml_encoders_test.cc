// ZipMap, CastMap, DictVectorizer, FeatureVectorizer, CategoryMapper, LabelEncoder-1,
// Imputer and OneHotEncoder: values worked out by hand, bad input rejected, and the
// parallel splits identical to the serial result for 1, 2, 4 and 8 participants.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

TEST(ZipMap, RowsBecomeMaps) {
  KernelTester t("ZipMap", 1, "ai.onnx.ml");
  t.Attr("classlabels_strings", std::vector<std::string>{"a", "b"});
  t.Input(MakeTensor<float>({2, 2}, {0.25f, 0.75f, 1.0f, 0.0f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Value& seq = out->at(0);
  ASSERT_TRUE(seq.is_sequence());
  ASSERT_EQ(seq.items().size(), 2u);
  EXPECT_EQ(ToVector<std::string>(seq.items()[1].map_keys()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ToVector<float>(seq.items()[1].map_values()), (std::vector<float>{1.0f, 0.0f}));

  KernelTester wrong("ZipMap", 1, "ai.onnx.ml");
  wrong.Attr("classlabels_int64s", std::vector<int64_t>{1, 2, 3}).Input(MakeTensor<float>({1, 2}, {0, 1}));
  EXPECT_FALSE(wrong.Run(1).ok());
}

TEST(CastMap, DenseInKeyOrderAndSparse) {
  const Value map = Value::Map(MakeTensor<int64_t>({3}, {5, 1, 3}), MakeTensor<float>({3}, {0.5f, 1.5f, 2.5f}));
  KernelTester dense("CastMap", 1, "ai.onnx.ml");
  dense.InputValue(map);
  auto out = dense.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{1.5f, 2.5f, 0.5f}));

  KernelTester sparse("CastMap", 1, "ai.onnx.ml");
  sparse.Attr("map_form", std::string("SPARSE")).Attr("max_map", int64_t{4}).Attr("cast_to", std::string("TO_INT64"));
  sparse.InputValue(map);
  auto out2 = sparse.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out2->at(0).tensor()), (std::vector<int64_t>{0, 1, 0, 2}));
}

TEST(DictVectorizer, VocabularyColumns) {
  KernelTester t("DictVectorizer", 1, "ai.onnx.ml");
  t.Attr("string_vocabulary", std::vector<std::string>{"x", "y", "z"});
  t.InputValue(Value::Map(MakeTensor<std::string>({2}, {"z", "w"}), MakeTensor<double>({2}, {4.0, 9.0})));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{1, 3}));
  EXPECT_EQ(ToVector<double>(out->at(0).tensor()), (std::vector<double>{0, 0, 4}));

  KernelTester tensor_in("DictVectorizer", 1, "ai.onnx.ml");
  tensor_in.Attr("int64_vocabulary", std::vector<int64_t>{1}).Input(MakeTensor<float>({1}, {1}));
  EXPECT_FALSE(tensor_in.Run(1).ok());
}

TEST(FeatureVectorizer, CutsAndPads) {
  KernelTester t("FeatureVectorizer", 1, "ai.onnx.ml");
  t.Attr("inputdimensions", std::vector<int64_t>{1, 3});
  t.Input(MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<double>({2, 2}, {5, 6, 7, 8}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{1, 5, 6, 0, 3, 7, 8, 0}));
}

TEST(CategoryMapperAndLabelEncoder1, BothDirections) {
  KernelTester c("CategoryMapper", 1, "ai.onnx.ml");
  c.Attr("cats_strings", std::vector<std::string>{"a", "b"}).Attr("cats_int64s", std::vector<int64_t>{7, 9});
  c.Input(MakeTensor<std::string>({3}, {"b", "q", "a"}));
  auto out = c.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out->at(0).tensor()), (std::vector<int64_t>{9, -1, 7}));

  KernelTester l("LabelEncoder", 1, "ai.onnx.ml");
  l.Attr("classes_strings", std::vector<std::string>{"a", "b"}).Attr("default_string", std::string("?"));
  l.Input(MakeTensor<int64_t>({3}, {1, 0, 5}));
  auto out2 = l.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out2->at(0).tensor()), (std::vector<std::string>{"b", "a", "?"}));
}

TEST(Imputer, NanAndIntegerReplacement) {
  KernelTester f("Imputer", 1, "ai.onnx.ml");
  f.Attr("imputed_value_floats", std::vector<float>{1, 2}).Attr("replaced_value_float", static_cast<float>(NAN));
  f.Input(MakeTensor<float>({2, 2}, {NAN, 3, 4, NAN}));
  auto out = f.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{1, 3, 4, 2}));

  KernelTester i("Imputer", 1, "ai.onnx.ml");
  i.Attr("imputed_value_int64s", std::vector<int64_t>{7}).Attr("replaced_value_int64", int64_t{-1});
  i.Input(MakeTensor<int64_t>({3}, {-1, 2, -1}));
  auto out2 = i.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out2->at(0).tensor()), (std::vector<int64_t>{7, 2, 7}));
}

TEST(OneHotEncoder, KnownUnknownAndStrict) {
  KernelTester t("OneHotEncoder", 1, "ai.onnx.ml");
  t.Attr("cats_int64s", std::vector<int64_t>{3, 5});
  t.Input(MakeTensor<double>({1, 3}, {5, 3, 4}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{0, 1, 1, 0, 0, 0}));

  KernelTester strict("OneHotEncoder", 1, "ai.onnx.ml");
  strict.Attr("cats_strings", std::vector<std::string>{"a"}).Attr("zeros", int64_t{0});
  strict.Input(MakeTensor<std::string>({1}, {"b"}));
  EXPECT_FALSE(strict.Run(1).ok());
}

TEST(Encoders, ParticipantCountsGiveIdenticalResults) {
  const int64_t rows = 300, cols = 5;
  std::vector<float> x = testing::RandomFloats(rows * cols, 11, 0, 4);
  for (size_t i = 0; i < x.size(); i += 7) x[i] = NAN;
  KernelTester imputer("Imputer", 1, "ai.onnx.ml");
  imputer.Attr("imputed_value_floats", std::vector<float>{1, 2, 3, 4, 5})
      .Attr("replaced_value_float", static_cast<float>(NAN));
  imputer.Input(MakeTensor<float>({rows, cols}, x));
  imputer.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{16});
  testing::SerialMatchesParticipants<float>(imputer, Shape{rows, cols});

  std::vector<int64_t> codes(rows * cols);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<int64_t>(i % 6);
  KernelTester one_hot("OneHotEncoder", 1, "ai.onnx.ml");
  one_hot.Attr("cats_int64s", std::vector<int64_t>{0, 1, 2, 3, 4}).Input(MakeTensor<int64_t>({rows, cols}, codes));
  one_hot.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{16});
  testing::SerialMatchesParticipants<float>(one_hot, Shape{rows, cols, 5});

  std::vector<float> probabilities(rows * 3);
  for (size_t i = 0; i < probabilities.size(); ++i) probabilities[i] = static_cast<float>(i % 10) / 10.0f;
  KernelTester zip("ZipMap", 1, "ai.onnx.ml");
  zip.Attr("classlabels_int64s", std::vector<int64_t>{3, 5, 7}).Input(MakeTensor<float>({rows, 3}, probabilities));
  zip.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{8});
  const std::vector<Value> serial = testing::DeterministicOutputs(zip);  // every map, keys and values
  ASSERT_FALSE(serial.empty());
  ASSERT_EQ(serial.at(0).items().size(), static_cast<size_t>(rows));
  EXPECT_EQ(ToVector<float>(serial.at(0).items()[4].map_values()), (std::vector<float>{0.2f, 0.3f, 0.4f}));
}

}  // namespace
}  // namespace onnx_light
