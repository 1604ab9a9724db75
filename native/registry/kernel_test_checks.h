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

// Runs the kernel serially, then with 2, 4 and 8 participants, expects every output to
// be bit-identical to the serial one and returns the serial output 0 as a vector of T
// (empty after a failure, which is already reported). Force the parallel path with
// KernelTester::Tuning before calling.
template <typename T>
std::vector<T> SerialMatchesParticipants(KernelTester& t, const Shape& expected_shape) {
  auto serial = t.Run(1);
  EXPECT_TRUE(serial.ok()) << serial.status().ToString();
  if (!serial.ok()) return {};
  for (int threads : {2, 4, 8}) {
    auto parallel = t.Run(threads);
    EXPECT_TRUE(parallel.ok()) << parallel.status().ToString();
    if (!parallel.ok()) continue;
    for (size_t i = 0; i < serial->size(); ++i) {
      ExpectIdentical(serial->at(i), parallel->at(i),
                      "output " + std::to_string(i) + ", threads=" + std::to_string(threads));
    }
  }
  EXPECT_EQ(serial->at(0).tensor().shape(), expected_shape);
  return ToVector<T>(serial->at(0).tensor());
}

}  // namespace testing
}  // namespace onnx_light
