// Shared by the elementwise tests: run a kernel serially and with its parallel path forced
// on 2, 4 and 8 participants, expecting bit-identical outputs.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace elementwise {
namespace testing {

using onnx_light::testing::ExpectIdentical;
using onnx_light::testing::KernelTester;
using onnx_light::testing::MakeTensor;
using onnx_light::testing::ToVector;

// The serial output (participant count 1, default thresholds), after checking that the
// forced-parallel runs (threshold 1, 64-element blocks) on 1, 2, 4 and 8 participants, and
// runs with streaming stores forced, produce the same bytes.
inline Tensor RunAllCounts(KernelTester& tester) {
  auto serial = tester.Run(1);
  EXPECT_TRUE(serial.ok()) << serial.status().ToString();
  if (!serial.ok()) return Tensor();
  tester.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  for (int participants : {1, 2, 4, 8}) {
    auto parallel = tester.RunWithDetails(participants);
    EXPECT_TRUE(parallel.ok()) << parallel.status().ToString();
    if (!parallel.ok()) continue;
    ExpectIdentical(serial->at(0), parallel->outputs.at(0), "participants " + std::to_string(participants));
    if (participants > 1 && serial->at(0).tensor().num_elements() > 64) {
      EXPECT_FALSE(parallel->regions.empty()) << "the forced parallel path opened no region";
    }
  }
  // The same with every output streamed out through non-temporal stores.
  tester.Tuning("algorithm.streaming_store_elements", int64_t{1});
  for (int participants : {1, 3}) {
    auto streamed = tester.Run(participants);
    EXPECT_TRUE(streamed.ok()) << streamed.status().ToString();
    if (streamed.ok()) ExpectIdentical(serial->at(0), streamed->at(0), "streaming stores");
  }
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
