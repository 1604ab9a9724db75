#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {"parallel.minimum_elements", int64_t{1}},
    {"parallel.grain_elements", int64_t{1}},
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
