#include "native/registry/kernel_test_checks.h"

#include "native/executor/cpu_executor.h"
#include "native/executor/parallel_for.h"

namespace onnx_light {
namespace testing {

namespace {

void ExpectSameOutputs(const std::vector<Value>& serial, const std::vector<Value>& other, const std::string& run) {
  EXPECT_EQ(other.size(), serial.size()) << run << ": output count";
  for (size_t i = 0; i < serial.size() && i < other.size(); ++i) {
    ExpectIdentical(serial[i], other[i], "output " + std::to_string(i) + ", " + run);
  }
}

// Runs the kernel with `participants` from inside block 0 of an outer two-participant
// region, the way a kernel runs inside a parallel subgraph.
StatusOr<KernelRunResult> RunNested(KernelTester& t, int participants) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  OL_ASSIGN_OR_RETURN(std::shared_ptr<CpuExecutor> outer, ExecutorRegistry::Global().Acquire(policy));
  StatusOr<KernelRunResult> result = Internal("the outer region did not run block 0");
  const ParallelContext ctx{outer.get(), nullptr, nullptr, "outer"};
  OL_RETURN_IF_ERROR(ParallelFor(ctx, 2, ParallelPlan{"determinism.outer", 1}, [&](int64_t begin, int64_t) {
    if (begin == 0) result = t.RunWithDetails(participants);
    return Status::Ok();
  }));
  return result;
}

}  // namespace

std::vector<Value> DeterministicOutputs(KernelTester& t, DeterminismOptions options) {
  auto serial = t.Run(1);
  EXPECT_TRUE(serial.ok()) << "serial run: " << serial.status().ToString();
  if (!serial.ok()) return {};
  for (int participants : kCheckedParticipantCounts) {
    const std::string run = std::to_string(participants) + " participants";
    auto parallel = t.RunWithDetails(participants);
    EXPECT_TRUE(parallel.ok()) << run << ": " << parallel.status().ToString();
    if (!parallel.ok()) continue;
    ExpectSameOutputs(*serial, parallel->outputs, run);
    if (options.expect_regions)
      EXPECT_FALSE(parallel->regions.empty()) << run << ": the forced parallel path opened no region";
  }
  const std::string run = std::to_string(kNestedParticipants) + " participants nested in an outer region";
  auto nested = RunNested(t, kNestedParticipants);
  EXPECT_TRUE(nested.ok()) << run << ": " << nested.status().ToString();
  if (nested.ok()) {
    ExpectSameOutputs(*serial, nested->outputs, run);
    if (options.expect_regions)
      EXPECT_FALSE(nested->regions.empty()) << run << ": the forced parallel path opened no region";
    for (const RegionEvent& region : nested->regions) {
      EXPECT_TRUE(region.nested) << run << ": region '" << region.label << "' was not recorded as nested";
      EXPECT_EQ(region.admitted_participants, 1) << run << ": region '" << region.label << "' did not run inline";
    }
  }
  return *std::move(serial);
}

}  // namespace testing
}  // namespace onnx_light
