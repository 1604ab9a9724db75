#include "native/tuning/forced_parallel.h"

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

std::shared_ptr<const KernelTuningSchema> TestSchema() {
  static const auto schema = [] {
    KernelTuningSchema s;
    s.key.domain = "test.forced";
    s.key.op = "Op";
    s.key.element_type = "float";
    s.key.family = "forced_parallel_test";
    s.params = {MinimumElementsParam(32768),
                ParamSpec::Int64(param::kBlockRows, 64, 4, 1 << 20, "rows per block"),
                ParamSpec::Double("parallel.work_ratio", 0.75, 0.125, 4.0, "work per participant"),
                ParamSpec::Bool("parallel.enabled", true, "not a threshold: left alone"),
                ParamSpec::Int64("algorithm.tile", 16, 1, 256, "not parallel: left alone"),
                ParamSpec::Enum("algorithm.kind", "direct", {"direct", "tiled"}, "loop structure")};
    EXPECT_TRUE(TuningSchemaRegistry::Global().Register(s).ok());
    return TuningSchemaRegistry::Global().Find(s.key);
  }();
  return schema;
}

TEST(ForcedParallelTuningTest, EveryParallelThresholdResolvesToItsMinimumAsAnExplicitValue) {
  ForcedParallelTuning forced;
  ResolvedTuning r = forced.Resolve(TestSchema());
  EXPECT_EQ(*r.Int64(param::kMinimumElements), 1);
  EXPECT_EQ(*r.Int64(param::kBlockRows), 4);
  EXPECT_EQ(*r.Double("parallel.work_ratio"), 0.125);
  EXPECT_EQ(r.SourceOf(param::kBlockRows), ValueSource::kExplicitProfile);
  EXPECT_EQ(r.SourceOf("parallel.work_ratio"), ValueSource::kExplicitProfile);
}

TEST(ForcedParallelTuningTest, OtherParametersKeepTheirPortableDefaults) {
  ForcedParallelTuning forced;
  ResolvedTuning r = forced.Resolve(TestSchema());
  EXPECT_EQ(*r.Bool("parallel.enabled"), true);
  EXPECT_EQ(r.SourceOf("parallel.enabled"), ValueSource::kPortableDefault);
  EXPECT_EQ(*r.Int64("algorithm.tile"), 16);
  EXPECT_EQ(*r.Enum("algorithm.kind"), "direct");
}

TEST(ForcedParallelTuningTest, ANullSchemaResolvesToNothing) {
  ForcedParallelTuning forced;
  EXPECT_TRUE(forced.Resolve(nullptr).values().empty());
}

}  // namespace
}  // namespace onnx_light
