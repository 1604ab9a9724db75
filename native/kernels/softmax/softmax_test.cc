#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {param::kMinimumElements, int64_t{1}},
    {param::kBlockElements, int64_t{1}},
};

std::vector<float> Wave(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::cos(static_cast<float>(i) * 0.71f) * 4.0f;
  return v;
}

// Naive softmax of x viewed as [outer, length, inner] along the middle dimension.
std::vector<double> NaiveSoftmax(const std::vector<float>& x, int64_t outer, int64_t length, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double m = -1e300, s = 0;
      for (int64_t k = 0; k < length; ++k) m = std::max(m, double(x[(o * length + k) * inner + i]));
      for (int64_t k = 0; k < length; ++k) s += std::exp(x[(o * length + k) * inner + i] - m);
      for (int64_t k = 0; k < length; ++k) {
        const double v = x[(o * length + k) * inner + i] - m;
        y[(o * length + k) * inner + i] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
  }
  return y;
}

void ExpectNear(const std::vector<float>& a, const std::vector<double>& e, double tol) {
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tol) << "at " << i;
}

std::vector<float> RunFloat(const char* op, int opset, const std::vector<int64_t>& dims, const std::vector<float>& x,
                            int64_t axis) {
  KernelTester t(op, opset);
  t.Input(MakeTensor<float>(Shape(dims), x)).Attr("axis", axis);
  auto out = RunAllCounts(t, kForceParallel);
  if (out.size() != 1) return {};
  EXPECT_EQ(out[0].tensor().shape(), Shape(dims));
  return ToVector<float>(out[0].tensor());
}

TEST(Softmax, SingleAxisFromOpset13IncludingStridedAxes) {
  const std::vector<int64_t> dims = {3, 4, 5};
  const auto x = Wave(60);
  ExpectNear(RunFloat("Softmax", 13, dims, x, -1), NaiveSoftmax(x, 12, 5, 1, false), 1e-6);
  ExpectNear(RunFloat("Softmax", 13, dims, x, 1), NaiveSoftmax(x, 3, 4, 5, false), 1e-6);
  ExpectNear(RunFloat("Softmax", 13, dims, x, 0), NaiveSoftmax(x, 1, 3, 20, false), 1e-6);
  ExpectNear(RunFloat("LogSoftmax", 13, dims, x, 0), NaiveSoftmax(x, 1, 3, 20, true), 1e-5);
}

TEST(Softmax, FlattenedTailBeforeOpset13) {
  const std::vector<int64_t> dims = {3, 4, 5};
  const auto x = Wave(60);
  ExpectNear(RunFloat("Softmax", 11, dims, x, 1), NaiveSoftmax(x, 3, 20, 1, false), 1e-6);
  ExpectNear(RunFloat("LogSoftmax", 1, dims, x, 0), NaiveSoftmax(x, 1, 60, 1, true), 1e-5);
  KernelTester t("Softmax", 11);  // default axis 1
  t.Input(MakeTensor<float>(Shape(dims), x));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToVector<float>(out[0].tensor()), NaiveSoftmax(x, 3, 20, 1, false), 1e-6);
}

TEST(Softmax, LargeAxisAndLargeValuesStayFinite) {
  auto x = Wave(2 * 5000);
  x[7] = 1e30f;
  const auto y = RunFloat("Softmax", 13, {2, 5000}, x, 1);
  ExpectNear(y, NaiveSoftmax(x, 2, 5000, 1, false), 1e-6);
  EXPECT_FLOAT_EQ(y[7], 1.0f);
}

// Seeded normal values with the special ones the vector path must keep: -inf (weighs
// nothing) and magnitudes near the float range (exp underflows for everything but the
// maximum) anywhere; with `poison`, NaN in the first lane and +inf in the last (each
// lane becomes NaN, as in double).
std::vector<float> RandomWithSpecials(int64_t n, uint32_t seed, bool poison) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.f, 6.f);
  std::uniform_int_distribution<int> pick(0, 99);
  std::vector<float> v(n);
  for (float& e : v) {
    switch (pick(gen)) {
      case 0:
        e = -std::numeric_limits<float>::infinity();
        break;
      case 1:
        e = 3e37f;
        break;
      case 2:
        e = -3e37f;
        break;
      default:
        e = normal(gen);
    }
  }
  if (poison) {
    v[0] = std::numeric_limits<float>::quiet_NaN();
    v[n - 1] = std::numeric_limits<float>::infinity();
  }
  return v;
}

// Runs `op` on x as float (the vectorised path, all participant counts identical) and as
// double (the scalar std::exp path) and compares: same NaN and infinity positions, else
// within 2e-6 relative + 1e-7 absolute (LogSoftmax: 2e-6 of max(1, |y|)).
void ExpectFloatMatchesDouble(const char* op, int opset, const std::vector<int64_t>& dims, int64_t axis,
                              const std::vector<float>& x) {
  SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) + " of " + Shape(dims).ToString());
  const auto y = RunFloat(op, opset, dims, x, axis);
  KernelTester t(op, opset);
  t.Input(MakeTensor<double>(Shape(dims), std::vector<double>(x.begin(), x.end()))).Attr("axis", axis);
  auto reference = t.Run(1);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const double* e = (*reference)[0].tensor().data<double>();
  ASSERT_EQ(y.size(), x.size());
  const bool log = std::string(op) == "LogSoftmax";
  int64_t nan = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    nan += std::isnan(e[i]);
    if (std::isnan(e[i]) || std::isinf(e[i])) {
      EXPECT_TRUE(std::isnan(e[i]) ? std::isnan(y[i]) : y[i] == e[i]) << "at " << i << ": " << y[i] << " vs " << e[i];
      continue;
    }
    const double tol = log ? 2e-6 * std::max(1.0, std::fabs(e[i])) : 2e-6 * std::fabs(e[i]) + 1e-7;
    EXPECT_NEAR(y[i], e[i], tol) << "at " << i;
  }
  EXPECT_LE(nan, static_cast<int64_t>(y.size() / 2));  // most lanes are compared by value
}

TEST(Softmax, FloatVectorPathMatchesScalarDoubleOnEveryAxis) {
  // Lengths and inner sizes off the vector widths (tails), and an inner size above the
  // 128-lane tile (several tiles per outer row).
  const std::vector<std::vector<int64_t>> shapes = {{3, 37, 21}, {2, 5, 300}, {4, 1000}, {2, 3, 1, 17}};
  uint32_t seed = 1;
  for (const auto& dims : shapes) {
    const int64_t n = Shape(dims).num_elements();
    for (int64_t axis = 0; axis < static_cast<int64_t>(dims.size()); ++axis) {
      const auto x = RandomWithSpecials(n, seed++, /*poison=*/true);
      ExpectFloatMatchesDouble("Softmax", 13, dims, axis, x);
      ExpectFloatMatchesDouble("LogSoftmax", 13, dims, axis, x);
    }
    const auto x = RandomWithSpecials(n, seed++, /*poison=*/false);  // the flattened rows are long
    ExpectFloatMatchesDouble("Softmax", 11, dims, 1, x);
    ExpectFloatMatchesDouble("LogSoftmax", 11, dims, 1, x);
  }
}

TEST(Softmax, SpecialValuesFollowTheDefinition) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Rows of 19 (a vector block plus a tail on every width): -inf weighs nothing; NaN and
  // +inf make the whole row NaN; a row of -inf is NaN (0/0).
  std::vector<float> x(4 * 19, 0.f);
  x[3] = -inf, x[18] = -inf;  // row 0: 17 equal weights
  x[19 + 17] = nan;           // row 1
  x[38 + 2] = inf;            // row 2
  for (int i = 57; i < 76; ++i) x[i] = -inf;
  const auto y = RunFloat("Softmax", 13, {4, 19}, x, 1);
  ASSERT_EQ(y.size(), x.size());
  for (int i = 0; i < 19; ++i) EXPECT_FLOAT_EQ(y[i], (i == 3 || i == 18) ? 0.f : 1.f / 17) << i;
  for (int i = 19; i < 76; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  const auto log_y = RunFloat("LogSoftmax", 13, {4, 19}, x, 1);
  EXPECT_EQ(log_y[3], -inf);
  EXPECT_FLOAT_EQ(log_y[0], -std::log(17.f));
}

TEST(Hardmax, FirstMaximumWinsAlongAxis) {
  const std::vector<float> x = {1, 3, 3, 0, /**/ 2, 5, 1, 5};
  EXPECT_EQ(RunFloat("Hardmax", 13, {2, 4}, x, 1), (std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(RunFloat("Hardmax", 13, {2, 4}, x, 0), (std::vector<float>{0, 0, 1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(RunFloat("Hardmax", 11, {2, 4}, x, 0), (std::vector<float>{0, 0, 0, 0, 0, 1, 0, 0}));
}

TEST(Softmax, LowPrecisionComputesInFloat) {
  const auto x = Wave(3 * 300);
  std::vector<BFloat16> b;
  std::vector<float> rounded;
  for (float v : x) b.push_back(BFloat16::FromFloat(v)), rounded.push_back(b.back().ToFloat());
  KernelTester t("Softmax", 13);
  t.Input(MakeTensor<BFloat16>({3, 300}, b));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto expected = NaiveSoftmax(rounded, 3, 300, 1, false);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(out[0].tensor().data<BFloat16>()[i].ToFloat(), expected[i], expected[i] * 0.008 + 1e-7) << i;
  }
}

TEST(Softmax, EmptyInputAndBadAxis) {
  EXPECT_TRUE(RunFloat("Softmax", 13, {0, 3}, {}, 1).empty());
  KernelTester bad("Softmax", 13);
  bad.NodeName("sm").Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Attr("axis", int64_t{2});
  auto out = bad.Run(1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("sm"), std::string::npos);
  KernelTester wrong_type("Softmax", 13);
  wrong_type.Input(MakeTensor<int32_t>({2}, {1, 2}));
  EXPECT_FALSE(wrong_type.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
