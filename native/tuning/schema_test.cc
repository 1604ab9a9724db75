#include "native/tuning/schema.h"

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

std::shared_ptr<KernelTuningSchema> Schema() {
  auto s = std::make_shared<KernelTuningSchema>();
  s->key.op = "Add";
  s->key.element_type = "float";
  s->key.family = "math";
  s->params.push_back(MinimumElementsParam(32768));
  s->params.push_back(ParamSpec::Double("parallel.cost_ratio", 1.5, 0.0, 10.0, "ratio"));
  s->params.push_back(ParamSpec::Bool("algorithm.pack_b", true, "pack B"));
  s->params.push_back(ParamSpec::Enum("algorithm.kind", "direct", {"direct", "im2col"}, "algorithm"));
  return s;
}

TEST(ParamSpec, ChecksTypesAndBounds) {
  auto s = Schema();
  EXPECT_TRUE(s->params[0].Check(int64_t{5}).ok());
  EXPECT_EQ(s->params[0].Check(int64_t{0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->params[0].Check(2.5).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->params[1].Check(11.0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->params[2].Check(int64_t{1}).code(), StatusCode::kInvalidArgument);
  Status bad_enum = s->params[3].Check(std::string("winograd"));
  EXPECT_EQ(bad_enum.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_enum.message().find("direct, im2col"), std::string::npos);
}

TEST(ResolvedTuning, DefaultsAndOverrides) {
  ResolvedTuning r = ResolvedTuning::Defaults(Schema());
  EXPECT_EQ(*r.Int64(param::kMinimumElements), 32768);
  EXPECT_EQ(r.SourceOf(param::kMinimumElements), ValueSource::kPortableDefault);
  EXPECT_TRUE(r.Set(param::kMinimumElements, int64_t{1000}, ValueSource::kExactMachine).ok());
  EXPECT_EQ(*r.Int64(param::kMinimumElements), 1000);
  EXPECT_EQ(r.SourceOf(param::kMinimumElements), ValueSource::kExactMachine);
  EXPECT_EQ(r.Set("nope", int64_t{1}, ValueSource::kExactMachine).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Set("algorithm.pack_b", 3.0, ValueSource::kExactMachine).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Int64("algorithm.pack_b").status().code(), StatusCode::kInternal);  // wrong type read
  EXPECT_EQ(r.Int64("missing").status().code(), StatusCode::kInternal);
  EXPECT_EQ(*r.Enum("algorithm.kind"), "direct");
}

TEST(TuningSchemaRegistry, RejectsDuplicatesAndBadDefaults) {
  TuningSchemaRegistry registry;
  KernelTuningSchema s = *Schema();
  EXPECT_TRUE(registry.Register(s).ok());
  EXPECT_EQ(registry.Register(s).code(), StatusCode::kInvalidArgument);
  KernelTuningSchema bad = *Schema();
  bad.key.op = "Mul";
  bad.params[0].portable_default = int64_t{0};  // below its minimum
  EXPECT_EQ(registry.Register(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(registry.Find(s.key), nullptr);
  EXPECT_EQ(s.key.ToString(), "onnx_light/ai.onnx/Add/float/math@2");
}

}  // namespace
}  // namespace onnx_light
