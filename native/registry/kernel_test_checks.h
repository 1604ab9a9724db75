// Checks shared by kernel families' googletests, on top of kernel_test_util.h.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace testing {

// n floats drawn uniformly from [lo, hi) with a fixed seed.
inline std::vector<float> RandomFloats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The determinism check every family's tests use (DESIGN.md, executor: a deterministic
// kernel gives bit-identical output for every participant count). It runs the kernel
// serially, then with each of kCheckedParticipantCounts, then with kNestedParticipants
// from inside an outer ParallelFor region (where the kernel's regions must run inline
// and be recorded as nested), and expects every output bit-identical to the serial one.
// It returns the serial outputs (empty after a failure, which is already reported); they
// live as long as the tester. Force the parallel path with KernelTester::Tuning before
// calling, or the parallel runs take the serial path and the check proves little.
inline constexpr int kCheckedParticipantCounts[] = {2, 4, 8};
inline constexpr int kNestedParticipants = 4;

struct DeterminismOptions {
  // Every run with more than one participant must open at least one region (the test
  // forced the parallel path on work large enough to split).
  bool expect_regions = false;
};

std::vector<Value> DeterministicOutputs(KernelTester& t, DeterminismOptions options = {});

// DeterministicOutputs, then the serial output 0 as a vector of T after checking its shape.
template <typename T>
std::vector<T> SerialMatchesParticipants(KernelTester& t, const Shape& expected_shape) {
  const std::vector<Value> serial = DeterministicOutputs(t);
  if (serial.empty()) return {};
  EXPECT_EQ(serial.at(0).tensor().shape(), expected_shape);
  return ToVector<T>(serial.at(0).tensor());
}

}  // namespace testing
}  // namespace onnx_light
