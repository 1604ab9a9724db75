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

// ZipMap and DictVectorizer split only a copy (or gather) that is cheap next to their serial
// part, so their portable minimum (encoders.cc) keeps the kernel report's corpus sizes
// serial up to where the split saves about twenty regions' cost: 2^22 ZipMap elements
// (rows x classes), 2^20 DictVectorizer columns (vocabulary words).
struct EncoderDecisionCase {
  const char* op;
  int64_t rows;   // ZipMap: rows of X; DictVectorizer: 1
  int64_t width;  // ZipMap: classes; DictVectorizer: vocabulary words
  bool region;    // opens a region shared by more than one participant
};

class EncoderDecision : public ::testing::TestWithParam<EncoderDecisionCase> {};

TEST_P(EncoderDecision, OpensARegionOnlyFromTheMinimumWork) {
  const EncoderDecisionCase c = GetParam();
  KernelTester t(c.op, 1, "ai.onnx.ml");
  std::vector<int64_t> labels(static_cast<size_t>(c.width));
  for (int64_t i = 0; i < c.width; ++i) labels[i] = i;
  if (std::string(c.op) == "ZipMap") {
    t.Attr("classlabels_int64s", labels)
        .Input(MakeTensor<float>({c.rows, c.width}, std::vector<float>(c.rows * c.width, 0.5f)));
  } else {
    t.Attr("int64_vocabulary", labels);
    t.InputValue(Value::Map(MakeTensor<int64_t>({2}, {c.width - 1, 0}), MakeTensor<float>({2}, {1.5f, 2.5f})));
  }
  t.PortableDefaults();
  for (int participants : {2, 8}) {
    auto run = t.RunWithDetails(participants);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    bool split = false;
    for (const auto& r : run->regions) split = split || r.admitted_participants > 1;
    EXPECT_EQ(split, c.region) << c.op << " " << c.rows << "x" << c.width << " with " << participants;
    if (!c.region) {
      EXPECT_TRUE(run->regions.empty()) << c.op << " " << c.rows << "x" << c.width;
    }
    if (std::string(c.op) == "DictVectorizer") {  // the map's two words, wherever the columns ran
      const Tensor& y = run->outputs.at(0).tensor();
      EXPECT_EQ(y.data<float>()[0], 2.5f);
      EXPECT_EQ(y.data<float>()[c.width - 1], 1.5f);
      EXPECT_EQ(y.data<float>()[c.width / 2], 0.0f);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    DefaultTuning, EncoderDecision,
    ::testing::Values(EncoderDecisionCase{"ZipMap", 4096, 8, false},                   // 2^15: the corpus crossover
                      EncoderDecisionCase{"ZipMap", 131072, 8, false},                 // 2^20: the corpus large size
                      EncoderDecisionCase{"ZipMap", 2047, 2048, false},                // just below 2^22
                      EncoderDecisionCase{"ZipMap", 2048, 2048, true},                 // 2^22: the minimum
                      EncoderDecisionCase{"DictVectorizer", 1, 32768, false},          // 2^15: the corpus crossover
                      EncoderDecisionCase{"DictVectorizer", 1, (1 << 20) - 1, false},  // just below 2^20
                      EncoderDecisionCase{"DictVectorizer", 1, 1 << 20, true}));       // 2^20: corpus large

}  // namespace
}  // namespace onnx_light
