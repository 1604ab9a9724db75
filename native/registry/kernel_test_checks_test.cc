// DeterministicOutputs, the determinism check every family's tests use: it passes a
// kernel whose bytes do not depend on the participant count (its nested run included),
// and fails one whose bytes do, or whose forced parallel path opens no region when the
// test says it must.
#include "native/registry/kernel_test_checks.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "native/executor/parallel_for.h"

namespace onnx_light {
namespace {

constexpr char kDomain[] = "test.kernel_test_checks";

// y[i] = x[i] in blocks of one element (parallel: a region per run); with kOfferedCount,
// y[i] is instead the participant count the region is offered (1 when serial or nested):
// a kernel whose bytes depend on the participant count.
template <bool kOfferedCount>
class TestCopy : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, x->shape()));
    const float* in = x->data<float>();
    float* out = y->data<float>();
    const ParallelPlan plan{"test_copy.blocks", 1};
    const float offered = static_cast<float>(AvailableParticipants(ctx.parallel(), plan));
    return ParallelFor(ctx.parallel(), x->num_elements(), plan, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = kOfferedCount ? offered : in[i];
      return Status::Ok();
    });
  }
};

// y = x, serially: never opens a region.
class TestSerialCopy : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, x->shape()));
    std::copy(x->data<float>(), x->data<float>() + x->num_elements(), y->data<float>());
    return Status::Ok();
  }
};

KernelDef Def(const char* op, KernelFactory factory) {
  KernelDef def;
  def.domain = kDomain;
  def.op = op;
  def.family = "kernel_test_checks_test";
  def.factory = std::move(factory);
  return def;
}

OL_REGISTER_KERNELS(kernel_test_checks_test) {
  registry.Add(Def("Copy", MakeKernel<TestCopy<false>>()));
  registry.Add(Def("OfferedCount", MakeKernel<TestCopy<true>>()));
  registry.Add(Def("SerialCopy", MakeKernel<TestSerialCopy>()));
}

testing::KernelTester Tester(const char* op) {
  testing::KernelTester t(op, 1, kDomain);
  // Off the forced-parallel mode: its own serial-vs-N comparison would add a failure of
  // its own for OfferedCount, and these tests count the check's failures exactly.
  t.PortableDefaults();
  t.Input(testing::MakeTensor<float>({64}, testing::RandomFloats(64, 3)));
  return t;
}

TEST(DeterministicOutputs, PassesAndReturnsTheSerialOutputWhenEveryRunGivesTheSameBytes) {
  testing::KernelTester t = Tester("Copy");
  testing::DeterminismOptions options;
  options.expect_regions = true;
  const std::vector<Value> serial = testing::DeterministicOutputs(t, options);
  ASSERT_EQ(serial.size(), 1u);
  EXPECT_EQ(testing::ToVector<float>(serial[0].tensor()), testing::RandomFloats(64, 3));
}

// The messages of the test failures `check` reports.
template <typename Check>
std::vector<std::string> FailuresOf(Check check) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &results);
    check();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i) messages.push_back(results.GetTestPartResult(i).message());
  return messages;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DeterministicOutputs, FailsForEveryParticipantCountWhoseBytesDiffer) {
  testing::KernelTester t = Tester("OfferedCount");
  // Serial and nested runs write 1 everywhere; 2, 4 and 8 participants write their count.
  const std::vector<std::string> failures = FailuresOf([&] { testing::DeterministicOutputs(t); });
  ASSERT_EQ(failures.size(), 3u);
  for (size_t i = 0; i < failures.size(); ++i) {
    const std::string run = std::to_string(testing::kCheckedParticipantCounts[i]) + " participants";
    EXPECT_TRUE(Contains(failures[i], "output 0, " + run)) << failures[i];
    EXPECT_TRUE(Contains(failures[i], "outputs differ bitwise")) << failures[i];
  }
}

TEST(DeterministicOutputs, FailsWhenTheForcedParallelPathOpensNoRegion) {
  testing::KernelTester t = Tester("SerialCopy");
  testing::DeterminismOptions options;
  options.expect_regions = true;
  const std::vector<std::string> failures = FailuresOf([&] { testing::DeterministicOutputs(t, options); });
  ASSERT_EQ(failures.size(), 4u);  // 2, 4 and 8 participants, and the nested run
  for (const std::string& failure : failures) EXPECT_TRUE(Contains(failure, "opened no region")) << failure;
  EXPECT_TRUE(Contains(failures.back(), "nested in an outer region")) << failures.back();
}

}  // namespace
}  // namespace onnx_light
