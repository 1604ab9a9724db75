// KernelTester: runs one registered kernel on given inputs under a chosen participant
// count, the way the session would, for the googletest suites of every kernel family.
// The engine is KernelRunner (kernel_runner.h); this adds gtest helpers and keeps the
// outputs of every run alive as long as the tester.
//
//   KernelTester t("Add", 14);
//   t.Input(MakeTensor<float>({2, 3}, {...})).Input(MakeTensor<float>({3}, {...}));
//   t.Tuning("parallel.minimum_elements", int64_t{1});  // force the parallel path
//   auto serial = t.Run(1);  auto four = t.Run(4);
//   ExpectIdentical(serial->at(0), four->at(0));
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel.h"
#include "native/registry/kernel_runner.h"

namespace onnx_light {
namespace testing {

template <typename T>
Tensor MakeTensor(Shape shape, const std::vector<T>& values) {
  auto t = Tensor::Allocate(kDataTypeOf<T>, shape, Allocator::Default());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<size_t>(t->num_elements()), values.size()) << "MakeTensor: value count vs shape";
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t->num_elements()); ++i) t->template data<T>()[i] = values[i];
  return *t;
}

template <typename T>
std::vector<T> ToVector(const Tensor& t) {
  const T* d = t.data<T>();
  return std::vector<T>(d, d + t.num_elements());
}

// Bit-identical comparison of two values (dtype, shape and bytes; strings by content).
void ExpectIdentical(const Value& a, const Value& b, const std::string& what = "");

using KernelRunResult = ::onnx_light::KernelRunResult;

class KernelTester {
 public:
  KernelTester(std::string op, int opset_version, std::string domain = "");

  KernelTester& Input(Tensor tensor);
  KernelTester& InputValue(Value value);
  KernelTester& ConstantInput(Tensor tensor);  // also seen at creation (KernelInfo::constant_input)
  KernelTester& MissingInput();  // an optional input left empty
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

  // Creates the kernel and runs it with `num_threads` participants (1 = serial, no
  // executor; more than the cores is allowed). `cancel` is polled between blocks.
  StatusOr<KernelRunResult> RunWithDetails(int num_threads, const CancellationToken* cancel = nullptr);
  StatusOr<std::vector<Value>> Run(int num_threads);

 private:
  KernelRunner runner_;
  // Allocators of past runs: outputs returned by Run() stay valid while the tester lives.
  std::vector<std::shared_ptr<Allocator>> allocators_;
};

}  // namespace testing
}  // namespace onnx_light
