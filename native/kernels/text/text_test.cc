// Text kernels: values against expectations written out by hand (Python's str.split,
// regex full matches, ONNX's n-gram counting), and rejection of bad inputs.
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
using Strings = std::vector<std::string>;

TEST(StringConcat, Broadcasts) {
  KernelTester t("StringConcat", 20);
  t.Input(MakeTensor<std::string>({2, 1}, {"a", "bc"})).Input(MakeTensor<std::string>({3}, {"x", "", "\xc3\xa9"}));
  const std::vector<Value> out = testing::DeterministicOutputs(t);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.at(0).tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(ToVector<std::string>(out.at(0).tensor()), (Strings{"ax", "a", "a\xc3\xa9", "bcx", "bc", "bc\xc3\xa9"}));
}

TEST(StringConcat, RejectsIncompatibleShapes) {
  KernelTester t("StringConcat", 20);
  t.Input(MakeTensor<std::string>({2}, {"a", "b"})).Input(MakeTensor<std::string>({3}, {"x", "y", "z"}));
  EXPECT_FALSE(t.Run(1).ok());
}

TEST(StringSplit, DelimiterPadsAndCounts) {
  KernelTester t("StringSplit", 20);
  t.Attr("delimiter", std::string("--")).Input(MakeTensor<std::string>({2}, {"a--b----c", "x"})).Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // "a--b----c".split("--") == ["a", "b", "", "c"]
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 4}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"a", "b", "", "c", "x", "", "", ""}));
  EXPECT_EQ(ToVector<int64_t>(out->at(1).tensor()), (std::vector<int64_t>{4, 1}));
}

TEST(StringSplit, WhitespaceWithMaxsplit) {
  KernelTester t("StringSplit", 20);
  t.Attr("maxsplit", int64_t{1}).Input(MakeTensor<std::string>({3}, {"  one two  three ", "", "solo"})).Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // "  one two  three ".split(maxsplit=1) == ["one", "two  three"]; "".split() == []
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"one", "two  three", "", "", "solo", ""}));
  EXPECT_EQ(ToVector<int64_t>(out->at(1).tensor()), (std::vector<int64_t>{2, 0, 1}));
}

TEST(RegexFullMatch, MatchesWholeString) {
  KernelTester t("RegexFullMatch", 20);
  t.Attr("pattern", std::string(R"([a-z]+@\w+\.com)"));
  t.Input(MakeTensor<std::string>({4}, {"me@mail.com", "me@mail.company", "xme@mail.com!", ""}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<bool>(out->at(0).tensor()), (std::vector<bool>{true, false, false, false}));
}

TEST(RegexFullMatch, RejectsInvalidPattern) {
  KernelTester t("RegexFullMatch", 20);
  t.Attr("pattern", std::string("(unclosed")).Input(MakeTensor<std::string>({1}, {"a"}));
  EXPECT_FALSE(t.Run(1).ok());
}

TEST(StringNormalizer, StopwordsAndCase) {
  KernelTester t("StringNormalizer", 10);
  t.Attr("stopwords", Strings{"the", "A"}).Attr("case_change_action", std::string("UPPER"));
  t.Input(MakeTensor<std::string>({1, 4}, {"The", "cat", "a", "sat"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{1, 2}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"CAT", "SAT"}));
}

TEST(StringNormalizer, CaseSensitiveAllRemovedGivesOneEmptyString) {
  KernelTester t("StringNormalizer", 10);
  t.Attr("stopwords", Strings{"x", "Y"}).Attr("is_case_sensitive", int64_t{1});
  t.Input(MakeTensor<std::string>({2}, {"x", "Y"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{""}));

  KernelTester kept("StringNormalizer", 10);
  kept.Attr("stopwords", Strings{"x"}).Attr("is_case_sensitive", int64_t{1});
  kept.Input(MakeTensor<std::string>({2}, {"X", "x"}));
  auto out2 = kept.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out2->at(0).tensor()), (Strings{"X"}));
}

TEST(StringNormalizer, RejectsWideBatch) {
  KernelTester t("StringNormalizer", 10);
  t.Input(MakeTensor<std::string>({2, 1}, {"a", "b"}));
  EXPECT_FALSE(t.Run(1).ok());
}

KernelTester TfIdf(const std::string& mode, int64_t max_skip) {
  KernelTester t("TfIdfVectorizer", 9);
  // Pool: unigrams {7, 8} -> outputs 0, 1; bigram (7, 8) -> output 2.
  t.Attr("mode", mode).Attr("min_gram_length", int64_t{1}).Attr("max_gram_length", int64_t{2});
  t.Attr("max_skip_count", max_skip).Attr("ngram_counts", std::vector<int64_t>{0, 2});
  t.Attr("ngram_indexes", std::vector<int64_t>{0, 1, 2}).Attr("pool_int64s", std::vector<int64_t>{7, 8, 7, 8});
  return t;
}

TEST(TfIdfVectorizer, CountsWithAndWithoutSkips) {
  // Row 7 9 8 7 8: unigrams 7 x2, 8 x2; bigram (7, 8) adjacent once, and once more with
  // one skip (7 _ 8 at positions 0, 2).
  auto adjacent = TfIdf("TF", 0);
  adjacent.Input(MakeTensor<int64_t>({5}, {7, 9, 8, 7, 8}));
  auto out = adjacent.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{2, 2, 1}));

  auto skipping = TfIdf("TF", 1);
  skipping.Input(MakeTensor<int32_t>({2, 5}, {7, 9, 8, 7, 8, 1, 1, 1, 1, 8}));
  auto out2 = skipping.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(out2->at(0).tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(ToVector<float>(out2->at(0).tensor()), (std::vector<float>{2, 2, 2, 0, 1, 0}));
}

TEST(TfIdfVectorizer, WeightsAndStrings) {
  KernelTester t("TfIdfVectorizer", 9);
  t.Attr("mode", std::string("TFIDF")).Attr("min_gram_length", int64_t{1}).Attr("max_gram_length", int64_t{1});
  t.Attr("max_skip_count", int64_t{0}).Attr("ngram_counts", std::vector<int64_t>{0});
  t.Attr("ngram_indexes", std::vector<int64_t>{1, 0}).Attr("pool_strings", Strings{"a", "b"});
  t.Attr("weights", std::vector<float>{0.5f, 3.0f});
  t.Input(MakeTensor<std::string>({4}, {"a", "b", "a", "zzz"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // "a" (weight 0.5) counts 2 into output 1; "b" (weight 3) counts 1 into output 0.
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{3.0f, 1.0f}));

  auto idf = TfIdf("IDF", 0);
  idf.Input(MakeTensor<int64_t>({3}, {8, 8, 8}));
  auto out2 = idf.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<float>(out2->at(0).tensor()), (std::vector<float>{0, 1, 0}));
}

TEST(TfIdfVectorizer, RejectsMismatchedPoolType) {
  auto t = TfIdf("TF", 0);
  t.Input(MakeTensor<std::string>({1}, {"7"}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
