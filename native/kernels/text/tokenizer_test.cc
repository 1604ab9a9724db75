// com.microsoft Tokenizer: tokens, padding and markers against expectations written out
// by hand from ONNX Runtime's documentation of the op, and rejection of bad attributes
// and inputs with messages that name the node and the offending value.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;
using Strings = std::vector<std::string>;

const std::string kStart = "\x02";
const std::string kEnd = "\x03";

KernelTester Tokenizer(int64_t mark = 0, int64_t mincharnum = 1, const std::string& pad = "#") {
  KernelTester t("Tokenizer", 1, "com.microsoft");
  t.NodeName("tok").Attr("mark", mark).Attr("mincharnum", mincharnum).Attr("pad_value", pad);
  return t;
}

// The node's error message (the run must fail).
std::string ErrorOf(KernelTester& t) {
  auto out = t.Run(1);
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : out.status().message();
}

void ExpectContains(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << message << " lacks " << part;
}

TEST(Tokenizer, SeparatorExampleFromTheDocumentation) {
  auto t = Tokenizer();
  t.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({2}, {"Hello World", "I love computer science !"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 5}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()),
            (Strings{"Hello", "World", "#", "#", "#", "I", "love", "computer", "science", "!"}));
}

TEST(Tokenizer, SeparatorsAreRegexesAppliedInTurnAndShortTokensDropped) {
  // " " splits "a cat, the dog.x" into a / cat, / the / dog.x; "a" is shorter than 2
  // characters. Then "[.,]" splits cat, -> cat + "" and dog.x -> dog + x (both dropped).
  auto t = Tokenizer(0, 2);
  t.Attr("separators", Strings{" ", "[.,]"}).Input(MakeTensor<std::string>({1}, {"a cat, the dog.x"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"cat", "the", "dog"}));
}

TEST(Tokenizer, SeparatorRunsAndEmptyMatches) {
  // " +" removes whole runs; "x*" matches empty text everywhere, which splits nothing,
  // and removes the x.
  auto t = Tokenizer();
  t.Attr("separators", Strings{" +", "x*"}).Input(MakeTensor<std::string>({1}, {"  ab   cxd "}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"ab", "c", "d"}));
}

TEST(Tokenizer, TokenExpressionOnTwoDimensionalInput) {
  // What skl2onnx writes for TfidfVectorizer's default token pattern.
  auto t = Tokenizer();
  t.Attr("tokenexp", std::string("[a-zA-Z0-9_]+"));
  t.Input(MakeTensor<std::string>({2, 2}, {"the cat sat", "dogs!", "", "a_b-c 42"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()),
            (Strings{"the", "cat", "sat", "dogs", "#", "#", "#", "#", "#", "a_b", "c", "42"}));
}

TEST(Tokenizer, TokenExpressionResumesOneCharacterAfterAShortMatch) {
  // mincharnum 3: "ab" is too short, and so is "b" found one character later; "xyz"
  // inside "wxyz" is never tried because "wxyz" is matched whole first.
  auto t = Tokenizer(0, 3);
  t.Attr("tokenexp", std::string("[a-z]+")).Input(MakeTensor<std::string>({1}, {"ab abc wxyz"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"abc", "wxyz"}));
}

TEST(Tokenizer, TokenExpressionSeesTheTextBeforeTheSearchPosition) {
  // After "cat" the search resumes at the 'c' of "cow": \b must still see the 't'
  // before it, so "cow" is no token; "cup" starts at a word boundary.
  auto t = Tokenizer();
  t.Attr("tokenexp", std::string(R"(\bc[a-z]{2})")).Input(MakeTensor<std::string>({1}, {"catcow cup"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"cat", "cup"}));
}

TEST(Tokenizer, AlternativesPreferTheFirstNotTheLongest) {
  // The documented difference from ONNX Runtime (RE2, leftmost-longest: "ab", "ab"):
  // std::regex's ECMAScript takes the first alternative that matches.
  auto t = Tokenizer();
  t.Attr("tokenexp", std::string("a|ab")).Input(MakeTensor<std::string>({1}, {"ab ab"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (Strings{"a", "a"}));
}

TEST(Tokenizer, MarkersGoAroundTheTokensAndPaddingOutside) {
  auto t = Tokenizer(1, 1, "<pad>");
  t.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({2}, {"a b c", "d"}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 5}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()),
            (Strings{kStart, "a", "b", "c", kEnd, kStart, "d", kEnd, "<pad>", "<pad>"}));
}

TEST(Tokenizer, CharacterTokenizationIsPerUtf8Character) {
  const Strings input{
      "a\xc3\xb1"
      "b",
      ""};  // "añb": ñ is two bytes
  const Strings expected{kStart, "a", "\xc3\xb1", "b", kEnd, kStart, kEnd, "#", "#", "#"};
  auto separators = Tokenizer(1);
  separators.Attr("separators", Strings{""}).Input(MakeTensor<std::string>({2}, input));
  auto out = separators.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 5}));
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), expected);

  auto dot = Tokenizer(1);
  dot.Attr("tokenexp", std::string(".")).Input(MakeTensor<std::string>({2}, input));
  auto out2 = dot.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out2->at(0).tensor()), expected);
}

TEST(Tokenizer, NoTokensAnywhereGivesAnEmptyLastAxisWithoutMarkers) {
  auto t = Tokenizer(1);
  t.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({1, 2}, {"   ", ""}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{1, 2, 0}));
}

TEST(Tokenizer, EmptyInputs) {
  auto flat = Tokenizer();
  flat.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({0}, {}));
  auto out = flat.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{0}));

  auto batch = Tokenizer();
  batch.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({3, 0}, {}));
  auto out2 = batch.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_EQ(out2->at(0).tensor().shape(), (Shape{3, 0}));
}

TEST(Tokenizer, RejectsBadAttributesNamingTheNode) {
  KernelTester no_mark("Tokenizer", 1, "com.microsoft");
  no_mark.NodeName("tok").Attr("mincharnum", int64_t{1}).Attr("pad_value", std::string("#"));
  no_mark.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(no_mark), {"Tokenizer node 'tok'", "required attribute 'mark' is missing"});

  auto zero = Tokenizer(0, 0);
  zero.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(zero), {"Tokenizer node 'tok'", "mincharnum must be at least 1, got 0"});

  auto both = Tokenizer();
  both.Attr("separators", Strings{" "}).Attr("tokenexp", std::string("a")).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(both), {"Tokenizer node 'tok'", "separators and tokenexp", "both"});

  auto neither = Tokenizer();
  neither.Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(neither), {"Tokenizer node 'tok'", "neither"});

  auto no_separators = Tokenizer();
  no_separators.Attr("separators", Strings{}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(no_separators), {"Tokenizer node 'tok'", "separators is an empty list"});

  auto empty_among_others = Tokenizer();
  empty_among_others.Attr("separators", Strings{" ", ""}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(empty_among_others), {"Tokenizer node 'tok'", "separators[1] is empty"});

  auto chars_too_short = Tokenizer(0, 2);
  chars_too_short.Attr("separators", Strings{""}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(chars_too_short), {"Tokenizer node 'tok'", "mincharnum 2"});
}

TEST(Tokenizer, RejectsRegexesItCannotReadLikeRe2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(unclosed", "not a regular expression"},
      {"(?i)abc", "not a regular expression"},
      {R"(\Aabc)", R"(escape \A)"},
      {R"(\p{L}+)", R"(escape \p)"},
      {R"((a)\1)", R"(escape \1)"},
      {"a(?=b)", "lookahead"},
      {"a(?!b)", "lookahead"},
  };
  for (const auto& [pattern, message] : cases) {
    auto t = Tokenizer();
    t.Attr("tokenexp", pattern).Input(MakeTensor<std::string>({1}, {"a"}));
    ExpectContains(ErrorOf(t), {"Tokenizer node 'tok'", "tokenexp \"" + pattern + "\"", message});
  }
  auto separator = Tokenizer();
  separator.Attr("separators", Strings{" ", R"(\z)"}).Input(MakeTensor<std::string>({1}, {"a"}));
  ExpectContains(ErrorOf(separator), {"Tokenizer node 'tok'", R"(separators[1] "\z")", R"(escape \z)"});
}

TEST(Tokenizer, RejectsBadInputs) {
  auto rank3 = Tokenizer();
  rank3.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({1, 1, 1}, {"a"}));
  ExpectContains(ErrorOf(rank3), {"Tokenizer node 'tok'", "[C] or [N, C]", "string[1,1,1]"});

  auto not_utf8 = Tokenizer();
  not_utf8.Attr("separators", Strings{" "}).Input(MakeTensor<std::string>({2}, {"ok", "a\xff"}));
  ExpectContains(ErrorOf(not_utf8), {"Tokenizer node 'tok'", "input element 1 is not valid UTF-8 (byte 1)"});

  // [^a] matches the first byte of "é" alone: std::regex matches bytes, RE2 characters.
  auto split_character = Tokenizer();
  split_character.Attr("tokenexp", std::string("[^a]")).Input(MakeTensor<std::string>({1}, {"\xc3\xa9"}));
  ExpectContains(ErrorOf(split_character),
                 {"Tokenizer node 'tok'", "splits a multi-byte UTF-8 character", "element 0"});

  KernelTester numbers("Tokenizer", 1, "com.microsoft");
  numbers.NodeName("tok").Attr("mark", int64_t{0}).Attr("mincharnum", int64_t{1}).Attr("pad_value", std::string("#"));
  numbers.Attr("separators", Strings{" "}).Input(MakeTensor<float>({1}, {1.0f}));
  EXPECT_FALSE(numbers.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
