// ThresholdedParallel: which path runs (serial below the minimum, else a region), that the
// blocks cover the units exactly once in blocks of the declared size and unit, that the
// result does not depend on the participant count, and what Init reads from a schema.
// Run with 1, 2, 4 and 8 participants.
#include "native/kernels/common/thresholded_parallel.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

std::shared_ptr<CpuExecutor> MakeExecutor(int threads) {
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto e = CpuExecutor::Create(policy);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

ThresholdedParallel Policy(int64_t minimum, int64_t block,
                           ThresholdedParallel::BlockUnit unit = ThresholdedParallel::BlockUnit::kWork) {
  ThresholdedParallel p;
  p.minimum = minimum;
  p.block = block;
  p.block_unit = unit;
  return p;
}

// The (begin, end) blocks fn received, sorted.
std::vector<std::pair<int64_t, int64_t>> Blocks(const ParallelContext& ctx, const ThresholdedParallel& policy,
                                                int64_t units, int64_t cost) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  EXPECT_TRUE(policy
                  .Run(ctx, "test.blocks", units, cost,
                       [&](int64_t b, int64_t e) {
                         std::lock_guard<std::mutex> lock(mutex);
                         blocks.emplace_back(b, e);
                       })
                  .ok());
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}

class ThresholdedParallelTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { executor_ = MakeExecutor(GetParam()); }
  ParallelContext Context() { return ParallelContext{executor_.get(), nullptr, &events_, "Test"}; }

  std::shared_ptr<CpuExecutor> executor_;
  EventCollector events_;
};

TEST_P(ThresholdedParallelTest, RunsSeriallyInOneCallBelowTheMinimum) {
  // 10 units x 9 = 90 work < 100.
  EXPECT_EQ(Blocks(Context(), Policy(100, 1), 10, 9), (std::vector<std::pair<int64_t, int64_t>>{{0, 10}}));
  EXPECT_TRUE(events_.regions().empty());
}

TEST_P(ThresholdedParallelTest, OpensARegionAtTheMinimum) {
  Blocks(Context(), Policy(100, 1), 10, 10);  // 100 work: not below the minimum
  ASSERT_EQ(events_.regions().size(), 1u);
  EXPECT_EQ(events_.regions()[0].total, 10);
}

TEST_P(ThresholdedParallelTest, BlocksCoverTheRangeExactlyOnce) {
  for (int64_t units : {1, 7, 64, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(units);
    ASSERT_TRUE(Policy(1, 16)
                    .Run(Context(), "test.cover", units, 1,
                         [&](int64_t b, int64_t e) {
                           for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                           return Status::Ok();
                         })
                    .ok());
    for (int64_t i = 0; i < units; ++i) ASSERT_EQ(hits[i].load(), 1) << "units " << units << " index " << i;
  }
}

TEST_P(ThresholdedParallelTest, WorkBlockHoldsBlockOverCostUnits) {
  // 64 work per block, 8 work per unit: blocks are multiples of 8 units.
  const auto blocks = Blocks(Context(), Policy(1, 64), 1000, 8);
  ASSERT_FALSE(blocks.empty());
  for (auto [b, e] : blocks) {
    EXPECT_EQ(b % 8, 0) << b;
    if (e != 1000) {
      EXPECT_EQ((e - b) % 8, 0) << b << ".." << e;
    }
  }
  EXPECT_EQ(events_.regions().at(0).grain, 8);
}

TEST_P(ThresholdedParallelTest, UnitBlockIgnoresTheCost) {
  Blocks(Context(), Policy(1, 5, ThresholdedParallel::BlockUnit::kUnits), 1000, 8);
  EXPECT_EQ(events_.regions().at(0).grain, 5);
}

TEST_P(ThresholdedParallelTest, CostAboveTheBlockGivesOneUnitBlocks) {
  Blocks(Context(), Policy(1, 64), 100, 1000);
  EXPECT_EQ(events_.regions().at(0).grain, 1);
}

TEST_P(ThresholdedParallelTest, UnitsOfNoCostRunSerially) {
  EXPECT_EQ(Blocks(Context(), Policy(1, 64), 1000, 0), (std::vector<std::pair<int64_t, int64_t>>{{0, 1000}}));
  EXPECT_TRUE(events_.regions().empty());
}

TEST_P(ThresholdedParallelTest, CallerCanKeepTheWorkSerial) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  ASSERT_TRUE(Policy(1, 1)
                  .Run(
                      Context(), "test.serial", 1000, 1, [&](int64_t b, int64_t e) { calls.emplace_back(b, e); },
                      /*serial=*/true)
                  .ok());
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 1000}}));
  EXPECT_TRUE(events_.regions().empty());
}

TEST_P(ThresholdedParallelTest, SingleBlockRunsSeriallyWhenAsked) {
  ThresholdedParallel policy = Policy(1, 16, ThresholdedParallel::BlockUnit::kUnits);
  policy.serial_single_block = true;
  EXPECT_EQ(Blocks(Context(), policy, 16, 1), (std::vector<std::pair<int64_t, int64_t>>{{0, 16}}));
  EXPECT_TRUE(events_.regions().empty());
  Blocks(Context(), policy, 17, 1);
  EXPECT_EQ(events_.regions().size(), 1u);
}

TEST_P(ThresholdedParallelTest, NoUnitsCallsNothing) {
  EXPECT_TRUE(Blocks(Context(), Policy(1, 1), 0, 1).empty());
  EXPECT_TRUE(Blocks(Context(), Policy(100, 1), 0, 1).empty());
}

TEST_P(ThresholdedParallelTest, ResultDoesNotDependOnParticipants) {
  const int64_t units = 10007;
  auto run = [&](const ParallelContext& ctx, const ThresholdedParallel& policy) {
    std::vector<double> out(units);
    EXPECT_TRUE(policy
                    .Run(ctx, "test.result", units, 3,
                         [&](int64_t b, int64_t e) {
                           for (int64_t i = b; i < e; ++i) out[i] = 1.0 / static_cast<double>(i + 1) + out[i];
                         })
                    .ok());
    return out;
  };
  const std::vector<double> serial = run(ParallelContext{}, Policy(int64_t{1} << 40, 64));
  EXPECT_EQ(run(Context(), Policy(1, 64)), serial);
  EXPECT_EQ(events_.regions().size(), 1u);
}

TEST_P(ThresholdedParallelTest, ReturnsTheFirstError) {
  const Status s = Policy(1, 4).Run(Context(), "test.error", 100, 1, [](int64_t b, int64_t) {
    return b >= 48 ? InvalidArgument("unit ", b) : Status::Ok();
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const Status serial =
      Policy(1000, 4).Run(Context(), "test.error", 100, 1, [](int64_t, int64_t) { return InvalidArgument("serial"); });
  EXPECT_EQ(serial.code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Participants, ThresholdedParallelTest, ::testing::Values(1, 2, 4, 8));

// Init: the minimum by name, the block and its unit from the parameter the schema declares.
KernelInfo InfoWith(std::vector<ParamSpec> params, const AttributeMap& attributes) {
  auto schema = std::make_shared<KernelTuningSchema>();
  schema->params = std::move(params);
  return KernelInfo("", "Test", "node", 1, &attributes, {}, 1, ResolvedTuning::Defaults(schema));
}

TEST(ThresholdedParallelInitTest, ReadsMinimumAndBlockElementsAsWork) {
  const AttributeMap attributes;
  const KernelInfo info =
      InfoWith({MinimumElementsParam(500), ParamSpec::Int64(param::kBlockElements, 96, 1, 1 << 20, "")}, attributes);
  ThresholdedParallel p;
  ASSERT_TRUE(p.Init(info).ok());
  EXPECT_EQ(p.minimum, 500);
  EXPECT_EQ(p.block, 96);
  EXPECT_EQ(p.block_unit, ThresholdedParallel::BlockUnit::kWork);
}

TEST(ThresholdedParallelInitTest, BlockRowsCountUnits) {
  const AttributeMap attributes;
  const KernelInfo info =
      InfoWith({MinimumElementsParam(500), ParamSpec::Int64(param::kBlockRows, 12, 1, 1 << 20, "")}, attributes);
  ThresholdedParallel p;
  ASSERT_TRUE(p.Init(info).ok());
  EXPECT_EQ(p.block, 12);
  EXPECT_EQ(p.block_unit, ThresholdedParallel::BlockUnit::kUnits);
}

TEST(ThresholdedParallelInitTest, NamedMinimumAndNoBlockParameterKeepsTheFixedBlock) {
  const AttributeMap attributes;
  const KernelInfo info = InfoWith({ParamSpec::Int64(param::kMinimumMultiplyAdds, 7, 1, 1 << 20, "")}, attributes);
  ThresholdedParallel p = Policy(1, 4096);
  ASSERT_TRUE(p.Init(info, param::kMinimumMultiplyAdds).ok());
  EXPECT_EQ(p.minimum, 7);
  EXPECT_EQ(p.block, 4096);
}

TEST(ThresholdedParallelInitTest, UndeclaredMinimumIsAnError) {
  const AttributeMap attributes;
  const KernelInfo info = InfoWith({}, attributes);
  ThresholdedParallel p;
  EXPECT_FALSE(p.Init(info).ok());
}

}  // namespace
}  // namespace onnx_light
