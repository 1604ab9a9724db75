// The kernel runner and the calibrators, on the test-only kernels of "test.tuning".
#include "native/kernels/common/calibrators/calibrators.h"

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

std::shared_ptr<const KernelTuningSchema> SchemaOf(const std::string& op, const std::string& type = "float") {
  SchemaKey key;
  key.domain = "test.tuning";
  key.op = op;
  key.element_type = type;
  key.family = "tuning_test_kernels";
  return TuningSchemaRegistry::Global().Find(key);
}

Tensor Iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 7);
  return MakeTensor<float>(Shape({n}), v);
}

TEST(KernelRunnerTest, TesterRunsSeriallyAndInParallelIdentically) {
  KernelTester t("TestScale", 1, "test.tuning");
  t.Input(Iota(10000)).Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{100});
  auto serial = t.RunWithDetails(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_EQ(ToVector<float>(serial->outputs[0].tensor())[10], 2 * 3 + 1);  // x = 10 % 7 = 3
  for (int participants : {2, 4, 8}) {
    auto parallel = t.RunWithDetails(participants);
    ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
    ExpectIdentical(serial->outputs[0], parallel->outputs[0], "participants " + std::to_string(participants));
    ASSERT_EQ(parallel->regions.size(), 1u);
    EXPECT_EQ(parallel->regions[0].requested_participants, participants);
    EXPECT_EQ(parallel->regions[0].grain, 100);
  }
  EXPECT_GT(serial->allocation.bytes_allocated, 0);
  EXPECT_GE(serial->compute_ns, 0);
}

TEST(KernelRunnerTest, ResolvesTuningThroughASource) {
  // A source whose every schema resolves to threshold 1: the kernel takes its parallel path.
  struct ForceParallel : TuningSource {
    ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const override {
      ResolvedTuning r = ResolvedTuning::Defaults(schema);
      EXPECT_TRUE(r.Set(param::kMinimumElements, int64_t{1}, ValueSource::kExactMachine).ok());
      return r;
    }
  } source;
  KernelRunner r("TestScale", 1, "test.tuning");
  r.Input(Iota(4096)).Source(&source);
  auto run = r.Run(2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->regions.size(), 1u);
  EXPECT_EQ(run->regions[0].requested_participants, 2);
  // Overrides still apply on top of the source.
  r.Tuning(param::kMinimumElements, int64_t{1} << 20);
  EXPECT_TRUE(r.Run(2)->regions.empty());
}

TEST(KernelRunnerTest, KeepsItsExecutorAcrossSerialRuns) {
  KernelRunner r("TestScale", 1, "test.tuning");
  r.Input(Iota(4096)).Tuning(param::kMinimumElements, int64_t{1});
  const int before = ExecutorRegistry::Global().LiveExecutors();
  ASSERT_TRUE(r.Run(3).ok());
  EXPECT_EQ(ExecutorRegistry::Global().LiveExecutors(), before + 1);
  auto serial = r.Run(1);
  ASSERT_TRUE(serial.ok());
  EXPECT_EQ(serial->regions.at(0).requested_participants, 1);         // serial: no executor used
  EXPECT_EQ(ExecutorRegistry::Global().LiveExecutors(), before + 1);  // but still alive
}

TEST(KernelRunnerTest, ReportsBadRequests) {
  KernelRunner r("TestScale", 1, "test.tuning");
  r.Input(Iota(16));
  EXPECT_NE(r.Run(0).status().message().find("participant count must be >= 1"), std::string::npos);
  r.Tuning(param::kMinimumElements, 2.5);
  EXPECT_NE(r.Run(1).status().message().find("is int64; got a double"), std::string::npos);
  r.ClearTuning().Tuning("no.such.param", int64_t{1});
  EXPECT_NE(r.Run(1).status().message().find("unknown tuning parameter 'no.such.param'"), std::string::npos);
  r.ClearTuning().MemoryLimit(8);
  EXPECT_EQ(r.Run(1).status().code(), StatusCode::kResourceExhausted);
  KernelRunner missing("NoSuchOp", 1, "test.tuning");
  EXPECT_EQ(missing.Run(1).status().code(), StatusCode::kNotImplemented);
  KernelRunner wrong_type("TestScale", 1, "test.tuning");
  wrong_type.Input(MakeTensor<double>(Shape({2}), {1, 2}));
  EXPECT_NE(wrong_type.Run(1).status().message().find("element type double"), std::string::npos);
}

CalibrationRequest SmallRequest(const std::string& op) {
  CalibrationRequest request;
  request.schema = SchemaOf(op);
  request.search.min_size = 1 << 10;
  request.search.max_size = 1 << 17;
  request.search.harness.repetitions = 3;
  return request;
}

CalibrationBudget SmallBudget() {
  CalibrationBudget b;
  b.time_ns = 300'000'000;
  b.memory_bytes = 64 << 20;
  b.threads = 2;
  return b;
}

TEST(CalibratorsTest, ElementwiseCalibratorMeasuresAndAccounts) {
  BudgetAccount account(SmallBudget());
  auto report = Calibrate(SmallRequest("TestAdd"), account);  // two inputs: probed
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->calibrator, "elementwise_crossover");
  EXPECT_EQ(report->schema_key, SchemaOf("TestAdd")->key.ToString());
  ASSERT_EQ(report->choices.size(), 2u);
  EXPECT_EQ(report->choices[1].name, param::kBlockElements);
  EXPECT_FALSE(report->choices[1].changed);
  EXPECT_FALSE(report->choices[1].measured);
  EXPECT_EQ(std::get<int64_t>(report->choices[1].selected), 1024);
  const ParameterChoice& c = report->choices[0];
  EXPECT_EQ(c.name, param::kMinimumElements);
  EXPECT_EQ(std::get<int64_t>(c.portable_default), 32768);
  EXPECT_EQ(c.changed, std::get<int64_t>(c.selected) != 32768) << c.reason;
  EXPECT_FALSE(c.reason.empty());
  EXPECT_TRUE(report->evidence.rejected.empty());
  ASSERT_FALSE(report->evidence.sizes.empty()) << report->evidence.stop_reason;
  for (const SizeMeasurement& m : report->evidence.sizes) {
    ASSERT_EQ(m.names.size(), 2u);
    EXPECT_EQ(m.samples_ns[0].size(), 3u);
  }
  EXPECT_EQ(report->max_threads_used, 2);
  EXPECT_GT(report->runs, 0);
  EXPECT_EQ(report->spent_ns, account.spent_ns());
  EXPECT_LE(report->peak_memory_bytes, SmallBudget().memory_bytes);
}

TEST(CalibratorsTest, ElementwiseCalibratorFillsIntegerInputs) {
  BudgetAccount account(SmallBudget());
  CalibrationRequest request = SmallRequest("TestAdd");
  request.schema = SchemaOf("TestAdd", "int32");
  request.num_inputs = 2;
  request.search.max_size = 1 << 12;
  auto report = Calibrate(request, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->evidence.rejected.empty());
  EXPECT_FALSE(report->evidence.sizes.empty()) << report->evidence.stop_reason;
}

TEST(CalibratorsTest, RequiredAttributesAreGivenByTheRequest) {
  CalibrationRequest request = SmallRequest("TestNeedsAttribute");
  request.search.max_size = 1 << 12;
  BudgetAccount without(SmallBudget());
  EXPECT_NE(Calibrate(request, without).status().message().find("required attribute 'direction' is missing"),
            std::string::npos);
  Attribute direction;
  direction.name = "direction";
  direction.type = Attribute::Type::kString;
  direction.s = "LEFT";
  request.attributes.push_back(direction);
  BudgetAccount with(SmallBudget());
  auto report = Calibrate(request, with);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->evidence.sizes.empty());
}

TEST(CalibratorsTest, ElementwiseCalibratorRejectsAWrongParallelPath) {
  BudgetAccount account(SmallBudget());
  CalibrationRequest request = SmallRequest("TestWrongInParallel");
  // From 2 grains up the parallel path has two blocks and is wrong: start there, so that
  // even a slow machine (qemu) reaches it within the budget.
  request.search.min_size = 1 << 11;
  auto report = Calibrate(request, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(report->evidence.rejected.empty());
  EXPECT_NE(report->evidence.rejected[0].find("parallel: output differs from serial"), std::string::npos)
      << report->evidence.rejected[0];
  const ParameterChoice& c = report->choices[0];
  EXPECT_FALSE(c.changed);
  EXPECT_EQ(std::get<int64_t>(c.selected), 32768);
  ASSERT_EQ(report->evidence.sizes.size(), 1u);
  EXPECT_EQ(report->evidence.sizes[0].Find("parallel"), -1);  // never timed
}

TEST(CalibratorsTest, RegistryPrefersTheMostSpecificCalibrator) {
  CalibratorRegistry registry;
  auto named = [](const char* name) -> Calibrator {
    return [name](const CalibrationRequest&, BudgetAccount&) -> StatusOr<CalibrationReport> {
      CalibrationReport r;
      r.calibrator = name;
      return r;
    };
  };
  const KernelTuningSchema& schema = *SchemaOf("TestScale");
  EXPECT_EQ(registry.Find(schema).status().code(), StatusCode::kNotImplemented);
  registry.Register({"", "", param::kMinimumElements}, "generic", named("generic"));
  registry.Register({"", "gemm", ""}, "gemm", named("gemm"));
  EXPECT_EQ(registry.Find(schema)->name, "generic");
  registry.Register({"", "tuning_test_kernels", ""}, "family", named("family"));
  EXPECT_EQ(registry.Find(schema)->name, "family");
  registry.Register({schema.key.ToString(), "", ""}, "exact", named("exact"));
  EXPECT_EQ(registry.Find(schema)->name, "exact");
  EXPECT_EQ(registry.Find(*SchemaOf("TestAdd"))->name, "family");
}

TEST(CalibratorsTest, FamilyCalibratorsRegisterAtStartUp) {
  CalibrationRequest request;
  request.schema = SchemaOf("TestScale", "int32");
  BudgetAccount account(SmallBudget());
  auto report = Calibrate(request, account);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->calibrator, "test_scale_int32");
  EXPECT_EQ(std::get<int64_t>(report->choices.at(0).selected), 4096);
  // The float schema of the same op still gets the generic one.
  EXPECT_EQ(CalibratorRegistry::Global().Find(*SchemaOf("TestScale"))->name, "elementwise_crossover");
}

TEST(CalibratorsTest, RefusesSchemasThatAreNotCalibratable) {
  KernelTuningSchema s = *SchemaOf("TestScale");
  s.calibratable = false;
  CalibrationRequest request;
  request.schema = std::make_shared<KernelTuningSchema>(s);
  BudgetAccount account(SmallBudget());
  EXPECT_NE(Calibrate(request, account).status().message().find("is not flagged calibratable"), std::string::npos);
  CalibrationBudget bad = SmallBudget();
  bad.threads = 0;
  BudgetAccount bad_account(bad);
  EXPECT_EQ(Calibrate(SmallRequest("TestScale"), bad_account).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_light
