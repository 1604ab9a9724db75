#include "native/tuning/table_tuning_source.h"

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

std::shared_ptr<const KernelTuningSchema> TestSchema() {
  static const auto schema = [] {
    KernelTuningSchema s;
    s.key.domain = "test.table";
    s.key.op = "Op";
    s.key.element_type = "float";
    s.key.family = "table_test";
    s.params = {MinimumElementsParam(32768), ParamSpec::Double("algorithm.ratio", 0.5, 0.0, 1.0, "a ratio"),
                ParamSpec::Bool("algorithm.packed", false, "packs the operand"),
                ParamSpec::Enum("algorithm.kind", "direct", {"direct", "tiled"}, "loop structure")};
    EXPECT_TRUE(TuningSchemaRegistry::Global().Register(s).ok());
    return TuningSchemaRegistry::Global().Find(s.key);
  }();
  return schema;
}

std::string Key() { return TestSchema()->key.ToString(); }

TEST(TableTuningSourceTest, EmptyTableGivesPortableDefaults) {
  TableTuningSource table;
  ResolvedTuning r = table.Resolve(TestSchema());
  EXPECT_EQ(*r.Int64(param::kMinimumElements), 32768);
  EXPECT_EQ(r.SourceOf(param::kMinimumElements), ValueSource::kPortableDefault);
  EXPECT_EQ(*r.Enum("algorithm.kind"), "direct");
  // A null schema (a kernel without parameters) resolves to nothing, without error.
  EXPECT_TRUE(table.Resolve(nullptr).values().empty());
}

TEST(TableTuningSourceTest, EachTierOutranksTheOnesBelow) {
  const ValueSource tiers[] = {ValueSource::kSameIsaLevel, ValueSource::kSameMicroarchitecture,
                               ValueSource::kExactMachine, ValueSource::kExplicitProfile};
  // Added from the lowest tier up: every new tier takes over.
  TableTuningSource rising;
  int64_t value = 1000;
  for (ValueSource tier : tiers) {
    ASSERT_TRUE(rising.Add(Key(), param::kMinimumElements, ++value, tier).ok());
    ResolvedTuning r = rising.Resolve(TestSchema());
    EXPECT_EQ(*r.Int64(param::kMinimumElements), value) << ValueSourceName(tier);
    EXPECT_EQ(r.SourceOf(param::kMinimumElements), tier);
  }
  // Added from the highest tier down: the first one stays.
  TableTuningSource falling;
  value = 2000;
  for (int i = 3; i >= 0; --i) ASSERT_TRUE(falling.Add(Key(), param::kMinimumElements, value + i, tiers[i]).ok());
  ResolvedTuning r = falling.Resolve(TestSchema());
  EXPECT_EQ(*r.Int64(param::kMinimumElements), 2003);
  EXPECT_EQ(r.SourceOf(param::kMinimumElements), ValueSource::kExplicitProfile);
  // Tiers apply per parameter: the others keep their defaults.
  EXPECT_EQ(r.SourceOf("algorithm.ratio"), ValueSource::kPortableDefault);
}

TEST(TableTuningSourceTest, RejectsWrongTypesUnknownNamesAndOutOfBounds) {
  TableTuningSource table;
  Status s = table.Add(Key(), param::kMinimumElements, 1.5, ValueSource::kExactMachine);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is int64; got a double"), std::string::npos) << s.message();

  s = table.Add(Key(), param::kMinimumElements, int64_t{0}, ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("outside [1, "), std::string::npos) << s.message();

  s = table.Add(Key(), "algorithm.ratio", 1.5, ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("outside [0, 1]"), std::string::npos) << s.message();

  s = table.Add(Key(), "algorithm.kind", std::string("diagonal"), ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("is not one of {direct, tiled}"), std::string::npos) << s.message();

  s = table.Add(Key(), "algorithm.packed", int64_t{1}, ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("is bool; got a int64"), std::string::npos) << s.message();

  s = table.Add(Key(), "parallel.minimum_element", int64_t{5}, ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("unknown tuning parameter 'parallel.minimum_element'"), std::string::npos);
  EXPECT_NE(s.message().find("it declares: parallel.minimum_elements"), std::string::npos) << s.message();

  const std::string no_such_op = StrCat("onnx_light/ai.onnx/NoSuchOp/float/none@", kTuningAbi);
  s = table.Add(no_such_op, param::kMinimumElements, int64_t{5}, ValueSource::kExactMachine);
  EXPECT_NE(s.message().find("no tuning schema '" + no_such_op + "'"), std::string::npos) << s.message();

  s = table.Add(Key(), "algorithm.packed", true, ValueSource::kPortableDefault);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(table.entries().empty()) << "rejected values must not be kept";
}

// A profile written under an older tuning ABI names the same kernel with another key
// suffix (and possibly parameter names that no longer exist): refused, naming both ABIs,
// and nothing of it is kept.
TEST(TableTuningSourceTest, RefusesAKeyOfAnotherTuningAbiNamingIt) {
  TestSchema();
  TableTuningSource table;
  SchemaKey old_key = TestSchema()->key;
  old_key.tuning_abi = kTuningAbi - 1;
  const Status s = table.Add(old_key.ToString(), "parallel.grain_elements", int64_t{64}, ValueSource::kExactMachine);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(StrCat("is of tuning ABI ", kTuningAbi - 1, ", this build uses ", kTuningAbi)),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(table.entries().empty());
  EXPECT_EQ(table.Resolve(TestSchema()).SourceOf(param::kMinimumElements), ValueSource::kPortableDefault);
}

TEST(TableTuningSourceTest, SchemaKeyAbiReadsTheSuffix) {
  EXPECT_EQ(SchemaKeyAbi("onnx_light/ai.onnx/Add/float/math@1"), 1);
  EXPECT_EQ(SchemaKeyAbi(Key()), kTuningAbi);
  EXPECT_EQ(SchemaKeyAbi("onnx_light/ai.onnx/Add/float/math"), -1);
  EXPECT_EQ(SchemaKeyAbi("onnx_light/ai.onnx/Add/float/math@x"), -1);
}

TEST(TableTuningSourceTest, ResolvesEveryParameterType) {
  TableTuningSource table;
  ASSERT_TRUE(table.Add(Key(), "algorithm.ratio", 0.25, ValueSource::kSameIsaLevel).ok());
  ASSERT_TRUE(table.Add(Key(), "algorithm.packed", true, ValueSource::kExactMachine).ok());
  ASSERT_TRUE(table.Add(Key(), "algorithm.kind", std::string("tiled"), ValueSource::kSameMicroarchitecture).ok());
  ResolvedTuning r = table.Resolve(TestSchema());
  EXPECT_EQ(*r.Double("algorithm.ratio"), 0.25);
  EXPECT_TRUE(*r.Bool("algorithm.packed"));
  EXPECT_EQ(*r.Enum("algorithm.kind"), "tiled");
  EXPECT_EQ(r.SourceOf("algorithm.kind"), ValueSource::kSameMicroarchitecture);
  EXPECT_TRUE(table.rejected().empty());
}

}  // namespace
}  // namespace onnx_light
