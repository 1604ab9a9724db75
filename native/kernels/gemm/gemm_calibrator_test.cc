// The GEMM calibrator: its decisions on synthetic cost models (deterministic: a fake
// clock, candidates that only report a modelled time) and bounded real runs of MatMul
// and Gemm through the calibrator registry.
#include "native/kernels/gemm/gemm_calibrator.h"

#include <gtest/gtest.h>

#include "native/kernels/gemm/gemm.h"

namespace onnx_light {
namespace gemm {
namespace {

std::shared_ptr<const KernelTuningSchema> Schema(const std::string& op, const std::string& type) {
  SchemaKey key;
  key.op = op;
  key.element_type = type;
  key.family = "gemm";
  return TuningSchemaRegistry::Global().Find(key);
}

// Candidates whose time follows a model (ns as a function of work units); the fake clock
// advances by that time, so the budget accounting is deterministic too.
struct CostModel {
  int64_t clock_ns = 0;
  BudgetAccount Account(int64_t budget_ns) {
    return BudgetAccount(CalibrationBudget{budget_ns, int64_t{256} << 20, 2}, [this] { return clock_ns; });
  }
  CandidateFn Candidate(std::function<int64_t(int64_t)> ns, float output_value = 1.0f) {
    return [this, ns, output_value](int64_t units) -> StatusOr<CandidateRun> {
      auto allocator = std::make_shared<Allocator>();
      OL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DataType::kFloat, Shape({1}), allocator.get()));
      t.data<float>()[0] = output_value;
      clock_ns += ns(units);
      CandidateRun run{allocator, {}, ns(units)};
      run.outputs.emplace_back(std::move(t));
      return run;
    };
  }
};

const auto kSerial = [](int64_t units) { return 1000 * units; };

TEST(GemmCalibrator, MovesTheThresholdToAConfirmedCrossover) {
  // Parallel: 20 us of region overhead, half the serial time per unit. It wins by >= 10%
  // from 49 units on: the first two winning sizes are 64 and 128.
  CostModel model;
  BudgetAccount account = model.Account(int64_t{1} << 40);
  auto report =
      DecideMinimumTasks(*Schema("MatMul", "float"), model.Candidate(kSerial),
                         model.Candidate([](int64_t u) { return 20000 + 500 * u; }), CrossoverOptions{}, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->choices.size(), 1u);
  const ParameterChoice& c = report->choices[0];
  EXPECT_EQ(c.name, param::kMinimumTasks);
  EXPECT_EQ(std::get<int64_t>(c.portable_default), GemmTuning{}.parallel_minimum_tasks);
  EXPECT_TRUE(c.changed) << c.reason;
  EXPECT_EQ(std::get<int64_t>(c.selected), 64);
  EXPECT_EQ(report->evidence.crossover, 64);
  EXPECT_EQ(report->evidence.sizes.front().size, 1);  // sizes are work units from 1
  EXPECT_NE(c.reason.find("work units"), std::string::npos) << c.reason;
}

TEST(GemmCalibrator, KeepsTheDefaultWhenTheCrossoverIsTheDefault) {
  // Parallel wins by >= 10% from 15 units on: crossover at 16, the portable default.
  CostModel model;
  BudgetAccount account = model.Account(int64_t{1} << 40);
  auto report =
      DecideMinimumTasks(*Schema("Gemm", "float"), model.Candidate(kSerial),
                         model.Candidate([](int64_t u) { return 6000 + 500 * u; }), CrossoverOptions{}, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->choices[0].changed) << report->choices[0].reason;
  EXPECT_EQ(std::get<int64_t>(report->choices[0].selected), 16);
  EXPECT_EQ(report->evidence.crossover, 16);
}

TEST(GemmCalibrator, KeepsTheDefaultWhenParallelNeverWinsAndStopsAtTheLargestProduct) {
  CostModel model;
  BudgetAccount account = model.Account(int64_t{1} << 40);
  auto report = DecideMinimumTasks(*Schema("MatMul", "float"), model.Candidate(kSerial),
                                   model.Candidate([](int64_t u) { return 950 * u; }), CrossoverOptions{}, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->choices[0].changed);
  EXPECT_EQ(std::get<int64_t>(report->choices[0].selected), 16);
  EXPECT_FALSE(report->evidence.crossover.has_value());
  EXPECT_EQ(report->evidence.sizes.back().size, kCalibrationMaxUnits);
}

TEST(GemmCalibrator, RejectsAParallelCandidateWhoseOutputDiffers) {
  CostModel model;
  BudgetAccount account = model.Account(int64_t{1} << 40);
  auto report =
      DecideMinimumTasks(*Schema("MatMul", "float"), model.Candidate(kSerial),
                         model.Candidate([](int64_t u) { return 10 * u; }, 2.0f), CrossoverOptions{}, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->choices[0].changed);
  ASSERT_FALSE(report->evidence.rejected.empty());
  EXPECT_EQ(report->evidence.sizes.size(), 1u);  // the search ends at the first rejection
}

TEST(GemmCalibrator, StaysWithinItsTimeBudget) {
  CostModel model;
  const int64_t budget_ns = 2'000'000;
  BudgetAccount account = model.Account(budget_ns);
  auto report =
      DecideMinimumTasks(*Schema("MatMul", "float"), model.Candidate(kSerial),
                         model.Candidate([](int64_t u) { return 20000 + 500 * u; }), CrossoverOptions{}, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_LE(account.spent_ns(), budget_ns);
  EXPECT_NE(report->evidence.stop_reason.find("time budget"), std::string::npos) << report->evidence.stop_reason;
  EXPECT_FALSE(report->choices[0].changed);  // no confirmed crossover within the budget
}

TEST(GemmCalibrator, ProductShapesHaveAboutTheRequestedWork) {
  for (int64_t units : {1, 2, 3, 8, 100, 1024}) {
    const ProductShape s = CalibrationShape(units);
    EXPECT_EQ(s.m % 64, 0);
    EXPECT_EQ(s.m, s.n);
    EXPECT_GE(GemmWorkUnits(s.m, s.n, s.k), units);
    EXPECT_LT(GemmWorkUnits(s.m, s.n, s.k), 2 * units);
  }
}

// Real kernels through the registry (Calibrate picks the GEMM calibrator for the gemm
// family), bounded by a small product range; every parallel output must equal the serial.
TEST(GemmCalibrator, CalibratesMatMulAndGemmWithinBounds) {
  for (const auto& [op, type] :
       {std::pair<std::string, std::string>{"MatMul", "float"}, {"Gemm", "float16"}, {"MatMul", "int64"}}) {
    CalibrationRequest request;
    request.schema = Schema(op, type);
    ASSERT_NE(request.schema, nullptr) << op << " " << type;
    ASSERT_TRUE(request.schema->calibratable) << op << " " << type;
    request.search.max_size = 32;
    request.search.harness.repetitions = 3;
    BudgetAccount account(CalibrationBudget{int64_t{5'000'000'000}, int64_t{256} << 20, 2});
    auto report = Calibrate(request, account);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->calibrator, "gemm_minimum_tasks");
    EXPECT_TRUE(report->evidence.rejected.empty()) << report->evidence.rejected.front();
    ASSERT_FALSE(report->evidence.sizes.empty());
    EXPECT_LE(report->evidence.sizes.back().size, 32);
    const int64_t selected = std::get<int64_t>(report->choices.at(0).selected);
    EXPECT_GE(selected, 1);
    EXPECT_LE(selected, 32);  // the default (16) or a measured size
    EXPECT_GT(report->runs, 0);
    EXPECT_EQ(report->max_threads_used, 2);
  }
}

}  // namespace
}  // namespace gemm
}  // namespace onnx_light
