// Shared by the elementwise tests: run a kernel serially and with its parallel path forced
// through the one determinism check (kernel_test_checks.h), expecting bit-identical outputs.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace elementwise {
namespace testing {

using onnx_light::testing::DeterminismOptions;
using onnx_light::testing::DeterministicOutputs;
using onnx_light::testing::ExpectIdentical;
using onnx_light::testing::KernelTester;
using onnx_light::testing::MakeTensor;
using onnx_light::testing::ToVector;

// The serial output (participant count 1, default thresholds), after the determinism
// check (kernel_test_checks.h) with the parallel path forced (threshold 1, 64-element
// blocks; every parallel run must open a region when there is more than one block), and
// again with every output streamed out through non-temporal stores (also on an odd
// participant count, 3), all giving the same bytes.
inline Tensor RunAllCounts(KernelTester& tester) {
  auto serial = tester.Run(1);
  EXPECT_TRUE(serial.ok()) << serial.status().ToString();
  if (!serial.ok()) return Tensor();
  tester.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  DeterminismOptions forced;
  forced.expect_regions = serial->at(0).tensor().num_elements() > 64;
  const std::vector<Value> parallel = DeterministicOutputs(tester, forced);
  if (!parallel.empty()) ExpectIdentical(serial->at(0), parallel.at(0), "forced parallel path vs default thresholds");
  tester.Tuning("algorithm.streaming_store_elements", int64_t{1});
  const std::vector<Value> streamed = DeterministicOutputs(tester);
  if (!streamed.empty()) ExpectIdentical(serial->at(0), streamed.at(0), "streaming stores");
  auto odd = tester.Run(3);
  EXPECT_TRUE(odd.ok()) << odd.status().ToString();
  if (odd.ok()) ExpectIdentical(serial->at(0), odd->at(0), "streaming stores, 3 participants");
  // A copy owned by the default allocator: the tester's allocator dies with the tester.
  auto copy = serial->at(0).tensor().Clone(Allocator::Default());
  EXPECT_TRUE(copy.ok()) << copy.status().ToString();
  return copy.ok() ? *copy : Tensor();
}

template <typename T>
std::vector<T> RandomValues(int64_t n, double low, double high, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

}  // namespace testing
}  // namespace elementwise
}  // namespace onnx_light
