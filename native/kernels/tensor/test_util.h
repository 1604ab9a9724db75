// Helpers shared by the tensor families' tests.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace testing {

// A copy of `v` whose tensors live in Allocator::Default(): outputs of a KernelTester are
// freed through the tester's allocator, so values kept past the tester must be detached.
inline Value Detach(const Value& v) {
  if (v.is_sequence()) {
    std::vector<Value> items;
    for (const Value& item : v.items()) items.push_back(Detach(item));
    return Value::Sequence(std::move(items), v.element_type());
  }
  if (!v.is_tensor()) return v;
  auto copy = v.tensor().Clone(Allocator::Default());
  EXPECT_TRUE(copy.ok()) << copy.status().ToString();
  return copy.ok() ? Value(*copy) : Value();
}

// The serial outputs, detached (empty on failure), after the determinism check
// (kernel_test_checks.h) with the parallel path forced (parallel.minimum_elements = 1,
// parallel.block_elements = `grain`).
inline std::vector<Value> RunAllCounts(KernelTester& t, int64_t grain = 1) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, grain);
  std::vector<Value> detached;
  for (const Value& v : DeterministicOutputs(t)) detached.push_back(Detach(v));
  return detached;
}

// The message of the error the kernel must report.
inline std::string ErrorOf(KernelTester& t) {
  auto r = t.Run(1);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

template <typename T>
std::vector<T> Iota(int64_t n, T start = T(0)) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i));
  return v;
}

}  // namespace testing
}  // namespace onnx_light
