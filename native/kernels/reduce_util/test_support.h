// Test support for the axis-wise families: run a kernel serially and with 2, 4 and 8
// participants (thresholds forced low), require bit-identical outputs, return the serial
// outputs; and a naive double-precision reference for reductions over arbitrary axes.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace testing {

// Applies `low_tuning` (name, value) overrides and returns the serial outputs after the
// determinism check (kernel_test_checks.h).
inline std::vector<Value> RunAllCounts(KernelTester& tester,
                                       const std::vector<std::pair<std::string, ParamValue>>& low_tuning) {
  for (const auto& [name, value] : low_tuning) tester.Tuning(name, value);
  return DeterministicOutputs(tester);
}

// Reference reduction: out[o] = finalize(fold(map(x)) ) over `axes` (sorted, unique), with
// keepdims-independent output order (kept dims in order). Double precision throughout.
inline std::vector<double> NaiveReduce(const std::vector<double>& x, const std::vector<int64_t>& dims,
                                       const std::vector<int>& axes, double init,
                                       const std::function<double(double, double)>& fold) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a] = true;
  int64_t outputs = 1;
  for (int d = 0; d < rank; ++d)
    if (!reduced[d]) outputs *= dims[d];
  std::vector<double> out(outputs, init);
  std::vector<int64_t> index(rank, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d]) o = o * dims[d] + index[d];
    out[o] = fold(out[o], x[i]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace testing
}  // namespace onnx_light
