// Shared helpers of the attention family's tests: seeded random tensors in any float
// type, conversions to double, and a close-to comparison.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace attention_testing {

inline std::vector<double> RandomValues(int64_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(gen);
  return v;
}

// A tensor of `type` holding `values` rounded to it; `values` is updated to the rounded
// numbers so that references see exactly what the kernel sees.
inline Tensor MakeFloatTensor(DataType type, const Shape& shape, std::vector<double>* values) {
  using testing::MakeTensor;
  const size_t n = values->size();
  switch (type) {
    case DataType::kFloat: {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) (*values)[i] = v[i] = static_cast<float>((*values)[i]);
      return MakeTensor<float>(shape, v);
    }
    case DataType::kFloat16: {
      std::vector<Float16> v(n);
      for (size_t i = 0; i < n; ++i) (*values)[i] = (v[i] = Float16::FromDouble((*values)[i])).ToFloat();
      return MakeTensor<Float16>(shape, v);
    }
    case DataType::kBFloat16: {
      std::vector<BFloat16> v(n);
      for (size_t i = 0; i < n; ++i) (*values)[i] = (v[i] = BFloat16::FromDouble((*values)[i])).ToFloat();
      return MakeTensor<BFloat16>(shape, v);
    }
    default:
      return MakeTensor<double>(shape, *values);
  }
}

inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t.dtype()) {
      case DataType::kFloat:
        out[i] = t.data<float>()[i];
        break;
      case DataType::kFloat16:
        out[i] = t.data<Float16>()[i].ToFloat();
        break;
      case DataType::kBFloat16:
        out[i] = t.data<BFloat16>()[i].ToFloat();
        break;
      case DataType::kDouble:
        out[i] = t.data<double>()[i];
        break;
      default:
        ADD_FAILURE() << "unexpected output type";
        return out;
    }
  }
  return out;
}

// Absolute tolerance (values are O(1)) that covers rounding the result to `type`.
inline double ToleranceFor(DataType type) {
  switch (type) {
    case DataType::kDouble:
      return 1e-10;
    case DataType::kFloat:
      return 2e-5;
    case DataType::kFloat16:
      return 4e-3;
    default:
      return 3e-2;
  }
}

inline void ExpectNear(const std::vector<double>& expected, const Tensor& actual, double tolerance,
                       const std::string& what) {
  std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(expected.size(), got.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool both_inf = std::isinf(expected[i]) && expected[i] == got[i];
    if (!both_inf && !(std::fabs(expected[i] - got[i]) <= tolerance * (1 + std::fabs(expected[i])))) {
      ADD_FAILURE() << what << ": element " << i << " expected " << expected[i] << " got " << got[i];
      if (++reported == 5) return;
    }
  }
}

}  // namespace attention_testing
}  // namespace onnx_light
