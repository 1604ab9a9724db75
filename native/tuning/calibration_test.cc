#include "native/tuning/calibration.h"

#include <gtest/gtest.h>

#include <map>

namespace onnx_light {
namespace {

// A deterministic clock: candidates advance it by the time they claim to take, so the
// budget accounting can be asserted exactly (never wall time).
struct FakeTime {
  int64_t now = 0;
  BudgetAccount::Clock clock() {
    return [this] { return now; };
  }
};

std::vector<Value> Output(float last) {
  Tensor t = *Tensor::Allocate(DataType::kFloat, Shape({3}), Allocator::Default());
  t.data<float>()[0] = 1;
  t.data<float>()[1] = 2;
  t.data<float>()[2] = last;
  return {Value(std::move(t))};
}

// A candidate costing cost(size) ns that outputs [1, 2, last].
CandidateFn Synthetic(FakeTime& time, std::function<int64_t(int64_t)> cost, float last = 3) {
  return [&time, cost, last](int64_t size) -> StatusOr<CandidateRun> {
    const int64_t ns = cost(size);
    time.now += ns;
    return CandidateRun{nullptr, Output(last), ns};
  };
}

int64_t SerialCost(int64_t size) { return size; }
// A region costs 5 us to open, then halves the work: wins by 10% from 12223 elements.
int64_t ParallelCost(int64_t size) { return 5000 + size / 2; }

CalibrationBudget LargeBudget() {
  CalibrationBudget b;
  b.time_ns = int64_t{1} << 40;
  b.memory_bytes = int64_t{1} << 40;
  b.threads = 2;
  return b;
}

TEST(CalibrationTest, CandidateWithDifferentOutputIsRejectedBeforeTiming) {
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  const Candidate reference{"serial", Synthetic(time, SerialCost)};
  // Far faster, but wrong: it must never be timed, let alone win.
  const std::vector<Candidate> candidates = {{"fast_but_wrong", Synthetic(
                                                                    time, [](int64_t) { return 1; }, 4)},
                                             {"parallel", Synthetic(time, ParallelCost)}};
  bool out_of_budget = true;
  auto m = MeasureAtSize(1 << 20, reference, candidates, HarnessOptions{}, account, &out_of_budget);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(out_of_budget);
  ASSERT_EQ(m->rejected.size(), 1u);
  EXPECT_NE(m->rejected[0].find("fast_but_wrong: output differs from serial"), std::string::npos) << m->rejected[0];
  EXPECT_NE(m->rejected[0].find("at element 2"), std::string::npos) << m->rejected[0];
  EXPECT_EQ(m->Find("fast_but_wrong"), -1);
  EXPECT_FALSE(m->Wins("fast_but_wrong", 0.1));
  ASSERT_EQ(m->names, std::vector<std::string>({"serial", "parallel"}));
  // Raw samples kept, five repetitions each; the median is of them.
  EXPECT_EQ(m->samples_ns[0].size(), 5u);
  EXPECT_EQ(m->median_ns[0], 1 << 20);
  EXPECT_EQ(m->median_ns[1], 5000 + (1 << 19));
  EXPECT_TRUE(m->Wins("parallel", 0.1));
  // 1 reference + 2 validation runs + 5 rounds of 2 timed runs.
  EXPECT_EQ(account.runs(), 13);
}

TEST(CalibrationTest, MedianIgnoresOutliers) {
  EXPECT_EQ(Median({5, 1, 1000, 3, 4}), 4);
  EXPECT_EQ(Median({4, 2}), 3);
  EXPECT_EQ(Median({}), 0);
}

TEST(CalibrationTest, CrossoverIsTheFirstOfTwoConsecutiveWins) {
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  CrossoverOptions options;
  auto result = FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, ParallelCost), options, account);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->crossover.has_value()) << result->stop_reason;
  EXPECT_EQ(*result->crossover, 16384);  // 16384 and 32768 win; 8192 does not
  EXPECT_EQ(result->sizes.front().size, 1024);
  EXPECT_EQ(result->sizes.back().size, 32768);  // the search stops once it is found

  // Default far above: the crossover wins on consecutive sizes between them -> changed.
  ThresholdDecision high = DecideThreshold(*result, int64_t{1} << 20, 0.10);
  EXPECT_TRUE(high.changed) << high.reason;
  EXPECT_EQ(high.value, 16384);
  // Default below: serial beats the default's parallel choice at 1024, 2048... -> changed.
  ThresholdDecision low = DecideThreshold(*result, 1024, 0.10);
  EXPECT_TRUE(low.changed) << low.reason;
  EXPECT_EQ(low.value, 16384);
  // Default 32768: the two disagree at one measured size only -> the default stays.
  ThresholdDecision near = DecideThreshold(*result, 32768, 0.10);
  EXPECT_FALSE(near.changed) << near.reason;
  EXPECT_EQ(near.value, 32768);
}

TEST(CalibrationTest, ANoisyPairIsNotConfirmed) {
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  // The first measurement (validation + 5 timed runs) of 4096 and 8192 is a fluke in
  // parallel's favour; re-measured, parallel loses there.
  auto calls = std::make_shared<std::map<int64_t, int>>();
  auto flaky = [calls](int64_t size) {
    const bool fluke = (size == 4096 || size == 8192) && ++(*calls)[size] <= 6;
    return fluke ? size / 4 : ParallelCost(size);
  };
  auto result = FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, flaky), CrossoverOptions{}, account);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->crossover.has_value());
  EXPECT_EQ(*result->crossover, 16384);
  EXPECT_EQ(result->stop_reason, "crossover found and confirmed");
  // 4096 and 8192 re-measured (both lose), then 16384 and 32768 (both win).
  ASSERT_EQ(result->confirmations.size(), 4u);
  EXPECT_FALSE(result->confirmations[0].Wins("parallel", 0.1));
  EXPECT_TRUE(result->confirmations[3].Wins("parallel", 0.1));
  // Without confirmation the fluke would have been taken.
  FakeTime time2;
  BudgetAccount account2(LargeBudget(), time2.clock());
  calls->clear();
  CrossoverOptions unconfirmed;
  unconfirmed.confirm = false;
  auto fooled = FindParallelCrossover(Synthetic(time2, SerialCost), Synthetic(time2, flaky), unconfirmed, account2);
  ASSERT_TRUE(fooled.ok());
  EXPECT_EQ(*fooled->crossover, 4096);
}

TEST(CalibrationTest, NoWinByTheMarginKeepsTheDefault) {
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  CrossoverOptions options;
  options.max_size = 1 << 16;
  // Parallel 5% faster everywhere: under the 10% margin.
  auto result = FindParallelCrossover(Synthetic(time, SerialCost),
                                      Synthetic(time, [](int64_t s) { return s * 100 / 105; }), options, account);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->crossover.has_value());
  EXPECT_EQ(result->sizes.size(), 7u);  // 1024 .. 65536
  ThresholdDecision d = DecideThreshold(*result, 32768, 0.10);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.value, 32768);
  EXPECT_NE(d.reason.find("did not win by 10%"), std::string::npos) << d.reason;
}

TEST(CalibrationTest, WrongParallelCandidateIsNeverSelected) {
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  CrossoverOptions options;
  auto result =
      FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, ParallelCost, /*last=*/-3), options, account);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->crossover.has_value());
  ASSERT_FALSE(result->rejected.empty());
  ThresholdDecision d = DecideThreshold(*result, 1 << 20, 0.10);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.value, 1 << 20);
  EXPECT_NE(d.reason.find("rejected"), std::string::npos) << d.reason;
}

TEST(CalibrationTest, TimeBudgetIsKeptByItsOwnAccounting) {
  FakeTime time;
  CalibrationBudget budget = LargeBudget();
  budget.time_ns = 300'000;
  BudgetAccount account(budget, time.clock());
  CrossoverOptions options;
  auto result = FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, ParallelCost), options, account);
  ASSERT_TRUE(result.ok());
  EXPECT_LE(account.spent_ns(), budget.time_ns);
  EXPECT_EQ(account.spent_ns(), time.now);  // everything the candidates took was charged
  EXPECT_NE(result->stop_reason.find("time budget"), std::string::npos) << result->stop_reason;
  EXPECT_FALSE(result->crossover.has_value());
  EXPECT_FALSE(DecideThreshold(*result, 32768, 0.1).changed);
}

TEST(CalibrationTest, MemoryBudgetBoundsTheSizes) {
  FakeTime time;
  CalibrationBudget budget = LargeBudget();
  budget.memory_bytes = 1 << 20;
  BudgetAccount account(budget, time.clock());
  CrossoverOptions options;
  options.bytes_per_element = 16;
  auto result = FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, [](int64_t s) { return s; }),
                                      options, account);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->sizes.back().size, 65536);  // 65536 * 16 bytes = the whole budget
  EXPECT_NE(result->stop_reason.find("memory budget"), std::string::npos) << result->stop_reason;
  EXPECT_LE(account.peak_memory_bytes(), budget.memory_bytes);
  EXPECT_EQ(account.reserved_bytes(), 0);
}

TEST(CalibrationTest, BadBudgetsAndSearchesAreRejected) {
  CalibrationBudget b;
  b.time_ns = 0;
  EXPECT_EQ(b.Validate().code(), StatusCode::kInvalidArgument);
  b = CalibrationBudget{};
  b.threads = 0;
  EXPECT_NE(b.Validate().message().find("threads must be >= 1"), std::string::npos);
  FakeTime time;
  BudgetAccount account(LargeBudget(), time.clock());
  CrossoverOptions options;
  options.growth = 1;
  EXPECT_EQ(
      FindParallelCrossover(Synthetic(time, SerialCost), Synthetic(time, SerialCost), options, account).status().code(),
      StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_light
