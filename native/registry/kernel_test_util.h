// KernelTester: runs one registered kernel on given inputs under a chosen participant
// count, the way the session would, for the googletest suites of every kernel family.
// The engine is KernelRunner (kernel_runner.h); this adds gtest helpers and keeps the
// outputs of every run alive as long as the tester.
//
//   KernelTester t("Add", 14);
//   t.Input(MakeTensor<float>({2, 3}, {...})).Input(MakeTensor<float>({3}, {...}));
//   t.Tuning(param::kMinimumElements, int64_t{1});  // force the parallel path
//   auto serial = t.Run(1);  auto four = t.Run(4);
//   ExpectIdentical(serial->at(0), four->at(0));
//
// The forced-parallel mode: with ONNX_LIGHT_TEST_FORCED_PARALLEL=N (N >= 2) in the test
// environment, every tester resolves its tuning through ForcedParallelTuning (every
// parallel.* threshold at its minimum; a test's own Tuning overrides still apply on top),
// and every serial run is repeated with N participants and must match it bit for bit
// (unless the op is not reproducible even serially: two serial runs that differ, e.g. an
// unseeded random op, skip the comparison). CI runs every kernel test that way under
// ThreadSanitizer (.ci/run). A test that checks the portable defaults' thresholds
// themselves calls PortableDefaults() to keep them.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel.h"
#include "native/registry/kernel_runner.h"
#include "native/tuning/forced_parallel.h"

namespace onnx_light {
namespace testing {

template <typename T>
Tensor MakeTensor(Shape shape, const std::vector<T>& values) {
  auto t = Tensor::Allocate(kDataTypeOf<T>, shape, Allocator::Default());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<size_t>(t->num_elements()), values.size()) << "MakeTensor: value count vs shape";
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t->num_elements()); ++i)
    t->template data<T>()[i] = values[i];
  return *t;
}

template <typename T>
std::vector<T> ToVector(const Tensor& t) {
  const T* d = t.data<T>();
  return std::vector<T>(d, d + t.num_elements());
}

// Bit-identical comparison of two values (dtype, shape and bytes; strings by content;
// sequences and maps item by item); a failure names `what` and the first difference.
void ExpectIdentical(const Value& a, const Value& b, const std::string& what = "");

using KernelRunResult = ::onnx_light::KernelRunResult;

class KernelTester {
 public:
  KernelTester(std::string op, int opset_version, std::string domain = "");

  KernelTester& Input(Tensor tensor);
  KernelTester& InputValue(Value value);
  KernelTester& ConstantInput(Tensor tensor);  // also seen at creation (KernelInfo::constant_input)
  KernelTester& MissingInput();                // an optional input left empty
  KernelTester& Outputs(int n);
  KernelTester& Attr(const std::string& name, int64_t value);
  KernelTester& Attr(const std::string& name, float value);
  KernelTester& Attr(const std::string& name, const std::string& value);
  KernelTester& Attr(const std::string& name, std::vector<int64_t> values);
  KernelTester& Attr(const std::string& name, std::vector<float> values);
  KernelTester& Attr(const std::string& name, std::vector<std::string> values);
  KernelTester& Attr(const std::string& name, Tensor value);
  KernelTester& NodeName(std::string name);
  // Overrides a tuning value of the kernel instance (e.g. to force the parallel path).
  KernelTester& Tuning(const std::string& name, ParamValue value);
  // Keeps the portable defaults in the forced-parallel mode (for tests of the thresholds).
  KernelTester& PortableDefaults();

  // The participant count of the forced-parallel mode, 0 when it is off.
  static int ForcedParallelParticipants();

  // Creates the kernel and runs it with `num_threads` participants (1 = serial, no
  // executor; more than the cores is allowed). `cancel` is polled between blocks.
  StatusOr<KernelRunResult> RunWithDetails(int num_threads, const CancellationToken* cancel = nullptr);
  StatusOr<std::vector<Value>> Run(int num_threads);

 private:
  KernelRunner runner_;
  bool forced_parallel_ = false;
  // Allocators of past runs: outputs returned by Run() stay valid while the tester lives.
  std::vector<std::shared_ptr<Allocator>> allocators_;
};

}  // namespace testing
}  // namespace onnx_light
