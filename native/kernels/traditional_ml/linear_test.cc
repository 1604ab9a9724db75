// LinearClassifier, LinearRegressor, Scaler, Normalizer and the SVMs: values worked out
// by hand, ONNX Runtime's binary forms, and rows split identically for 1..8 participants;
// the SVM kernels (computed through the GEMM engine) against a naive double evaluation,
// identical for every kernel_rows block and participant count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"
#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

TEST(LinearClassifier, BinaryOneRowIsOneMinusSAndS) {
  // ONNX Runtime: one coefficient row and two labels give [1 - s, s] (NONE) and label s > 0.
  KernelTester t("LinearClassifier", 1, "ai.onnx.ml");
  t.Attr("coefficients", std::vector<float>{1.0f, 2.0f}).Attr("intercepts", std::vector<float>{0.5f});
  t.Attr("classlabels_ints", std::vector<int64_t>{0, 1}).Outputs(2);
  t.Input(MakeTensor<float>({3, 2}, {1.0f, 1.0f, -1.0f, -0.5f, 0.25f, -0.5f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out->at(0).tensor()), (std::vector<int64_t>{1, 0, 0}));
  const std::vector<float> z = ToVector<float>(out->at(1).tensor());
  EXPECT_FLOAT_EQ(z[0], -2.5f);
  EXPECT_FLOAT_EQ(z[1], 3.5f);
  EXPECT_FLOAT_EQ(z[2], 2.5f);
  EXPECT_FLOAT_EQ(z[3], -1.5f);
}

TEST(LinearClassifier, MulticlassSoftmaxRowsMatchSerial) {
  const int64_t rows = 300, features = 5, classes = 3;
  KernelTester t("LinearClassifier", 1, "ai.onnx.ml");
  t.Attr("coefficients", testing::RandomFloats(features * classes, 3));
  t.Attr("intercepts", std::vector<float>{0.1f, -0.2f, 0.3f});
  t.Attr("classlabels_strings", std::vector<std::string>{"x", "y", "z"}).Attr("post_transform", std::string("SOFTMAX"));
  t.Outputs(2).Input(MakeTensor<float>({rows, features}, testing::RandomFloats(rows * features, 4)));
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{8});
  auto labels = testing::SerialMatchesParticipants<std::string>(t, Shape{rows});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok());
  const std::vector<float> z = ToVector<float>(out->at(1).tensor());
  for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(z[r * 3] + z[r * 3 + 1] + z[r * 3 + 2], 1.0f, 1e-5);
}

TEST(LinearRegressor, TwoTargets) {
  KernelTester t("LinearRegressor", 1, "ai.onnx.ml");
  t.Attr("coefficients", std::vector<float>{1, 2, 3, 4}).Attr("intercepts", std::vector<float>{1, -1});
  t.Attr("targets", int64_t{2}).Input(MakeTensor<int64_t>({1, 2}, {1, 1}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{4, 6}));
}

TEST(ScalerAndNormalizer, ValuesAndParticipants) {
  KernelTester s("Scaler", 1, "ai.onnx.ml");
  s.Attr("offset", std::vector<float>{1, 2}).Attr("scale", std::vector<float>{2});
  s.Input(MakeTensor<double>({2, 2}, {1, 2, 3, 5}));
  auto out = s.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{0, 0, 4, 6}));

  for (const char* norm : {"MAX", "L1", "L2"}) {
    KernelTester n("Normalizer", 1, "ai.onnx.ml");
    n.Attr("norm", std::string(norm)).Input(MakeTensor<float>({1, 2}, {3, -4}));
    auto y = n.Run(1);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    const float d = std::string(norm) == "MAX" ? 3 : std::string(norm) == "L1" ? 7 : 5;  // MAX: the signed max
    EXPECT_EQ(ToVector<float>(y->at(0).tensor()), (std::vector<float>{3 / d, -4 / d})) << norm;
  }
  const int64_t rows = 257, features = 6;
  KernelTester n("Normalizer", 1, "ai.onnx.ml");
  n.Attr("norm", std::string("L2"))
      .Input(MakeTensor<float>({rows, features}, testing::RandomFloats(rows * features, 9)));
  n.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{4});
  testing::SerialMatchesParticipants<float>(n, Shape{rows, features});
}

// Three classes, two support vectors each, RBF: votes one-vs-one; with Platt scaling the
// probabilities sum to 1.
KernelTester Svc(bool proba) {
  KernelTester t("SVMClassifier", 1, "ai.onnx.ml");
  t.Attr("kernel_type", std::string("RBF")).Attr("kernel_params", std::vector<float>{0.5f, 0.0f, 3.0f});
  t.Attr("vectors_per_class", std::vector<int64_t>{2, 2, 2});
  t.Attr("support_vectors", std::vector<float>{0, 0, 0.5f, 0, 3, 3, 3.5f, 3, -3, 3, -3.5f, 3});
  t.Attr("coefficients", std::vector<float>{1, 1, -1, -1, -1, -1, 1, 1, 1, 1, -1, -1});
  t.Attr("rho", std::vector<float>{0.1f, 0.1f, 0.1f}).Attr("classlabels_ints", std::vector<int64_t>{5, 6, 7});
  if (proba) t.Attr("prob_a", std::vector<float>{-2, -2, -2}).Attr("prob_b", std::vector<float>{0, 0, 0});
  t.Outputs(2);
  return t;
}

TEST(SVMClassifier, VotesAndProbabilities) {
  auto t = Svc(false);
  t.Input(MakeTensor<float>({3, 2}, {0.2f, 0.0f, 3.2f, 3.0f, -3.2f, 3.0f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out->at(0).tensor()), (std::vector<int64_t>{5, 6, 7}));

  const int64_t rows = 64;
  auto p = Svc(true);
  p.Input(MakeTensor<float>({rows, 2}, testing::RandomFloats(rows * 2, 5, -4, 4)));
  p.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{2});
  testing::SerialMatchesParticipants<int64_t>(p, Shape{rows});
  auto probs = p.Run(1);
  ASSERT_TRUE(probs.ok());
  const std::vector<float> z = ToVector<float>(probs->at(1).tensor());
  for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(z[r * 3] + z[r * 3 + 1] + z[r * 3 + 2], 1.0f, 1e-4);
}

TEST(SVMRegressor, LinearAndPoly) {
  KernelTester t("SVMRegressor", 1, "ai.onnx.ml");
  t.Attr("kernel_type", std::string("POLY")).Attr("kernel_params", std::vector<float>{1.0f, 1.0f, 2.0f});
  t.Attr("n_supports", int64_t{2}).Attr("support_vectors", std::vector<float>{1, 0, 0, 1});
  t.Attr("coefficients", std::vector<float>{2, -1}).Attr("rho", std::vector<float>{0.5f});
  t.Input(MakeTensor<float>({1, 2}, {1, 2}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // 2 * (1 + 1)^2 - (2 + 1)^2 + 0.5 = 8 - 9 + 0.5
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{-0.5f}));
}

// Three classes with 5, 7 and 4 support vectors over 6 features, random values: the
// pairwise decision values and votes against a naive evaluation in double.
TEST(SVMClassifier, KernelsMatchNaiveEvaluation) {
  const int64_t features = 6, rows = 45;
  const std::vector<int64_t> per_class = {5, 7, 4};
  const int64_t vectors = 16;
  const std::vector<float> sv = testing::RandomFloats(vectors * features, 11, -2, 2);
  const std::vector<float> coef = testing::RandomFloats(2 * vectors, 12, -1, 1);
  const std::vector<float> rho = {0.05f, -0.1f, 0.2f};
  const std::vector<float> x = testing::RandomFloats(rows * features, 13, -2, 2);
  const double gamma = 0.3, coef0 = 0.2;
  const std::vector<int64_t> starts = {0, 5, 12};
  for (const char* kernel : {"RBF", "LINEAR", "POLY", "SIGMOID"}) {
    auto k = [&](const float* a, const float* b) {
      double dot = 0, dist = 0;
      for (int64_t f = 0; f < features; ++f) {
        dot += static_cast<double>(a[f]) * b[f];
        dist += (static_cast<double>(a[f]) - b[f]) * (static_cast<double>(a[f]) - b[f]);
      }
      const std::string name = kernel;
      if (name == "RBF") return std::exp(-gamma * dist);
      if (name == "POLY") return std::pow(gamma * dot + coef0, 3.0);
      if (name == "SIGMOID") return std::tanh(gamma * dot + coef0);
      return dot;
    };
    std::vector<double> expected;
    std::vector<int64_t> labels;
    for (int64_t r = 0; r < rows; ++r) {
      int votes[3] = {0, 0, 0};
      int e = 0;
      for (int i = 0; i < 3; ++i) {
        for (int j = i + 1; j < 3; ++j, ++e) {
          double s = rho[e];
          const float* row = &x[r * features];
          for (int64_t v = starts[i]; v < starts[i] + per_class[i]; ++v) {
            s += coef[(j - 1) * vectors + v] * k(row, &sv[v * features]);
          }
          for (int64_t v = starts[j]; v < starts[j] + per_class[j]; ++v)
            s += coef[i * vectors + v] * k(row, &sv[v * features]);
          expected.push_back(s);
          ++votes[s > 0 ? i : j];
        }
      }
      labels.push_back(7 + static_cast<int64_t>(std::max_element(votes, votes + 3) - votes));
    }
    std::vector<float> first;
    for (int64_t kernel_rows : {int64_t{1}, int64_t{4}, int64_t{32}}) {
      KernelTester t("SVMClassifier", 1, "ai.onnx.ml");
      t.Attr("kernel_type", std::string(kernel)).Attr("kernel_params", std::vector<float>{0.3f, 0.2f, 3.0f});
      t.Attr("vectors_per_class", per_class).Attr("support_vectors", sv).Attr("coefficients", coef);
      t.Attr("rho", rho).Attr("classlabels_ints", std::vector<int64_t>{7, 8, 9}).Outputs(2);
      t.Input(MakeTensor<float>({rows, features}, x));
      t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{2});
      t.Tuning("algorithm.kernel_rows", kernel_rows);
      EXPECT_EQ(testing::SerialMatchesParticipants<int64_t>(t, Shape{rows}), labels) << kernel;
      auto out = t.Run(1);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const std::vector<float> z = ToVector<float>(out->at(1).tensor());
      ASSERT_EQ(z.size(), expected.size());
      for (size_t i = 0; i < z.size(); ++i) {
        EXPECT_NEAR(z[i], expected[i], 1e-5 * std::max(1.0, std::abs(expected[i]))) << kernel << " value " << i;
      }
      if (first.empty()) first = z;
      EXPECT_EQ(z, first) << kernel << ": kernel_rows " << kernel_rows << " changed a value";
    }
  }
}

TEST(SVMRegressor, RbfMatchesNaiveEvaluationForIntegerRows) {
  const int64_t features = 3, rows = 21, supports = 9;
  const std::vector<float> sv = testing::RandomFloats(supports * features, 21, -3, 3);
  const std::vector<float> coef = testing::RandomFloats(supports, 22, -1, 1);
  std::vector<int64_t> x(rows * features);
  for (int64_t i = 0; i < rows * features; ++i) x[i] = (i * 7) % 5 - 2;
  KernelTester t("SVMRegressor", 1, "ai.onnx.ml");
  t.Attr("kernel_type", std::string("RBF")).Attr("kernel_params", std::vector<float>{0.4f, 0.0f, 3.0f});
  t.Attr("n_supports", supports).Attr("support_vectors", sv).Attr("coefficients", coef);
  t.Attr("rho", std::vector<float>{0.5f});
  t.Input(MakeTensor<int64_t>({rows, features}, x));
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{2});
  t.Tuning("algorithm.kernel_rows", int64_t{4});
  const std::vector<float> y = testing::SerialMatchesParticipants<float>(t, Shape{rows, 1});
  ASSERT_EQ(static_cast<int64_t>(y.size()), rows);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.5;
    for (int64_t v = 0; v < supports; ++v) {
      double d = 0;
      for (int64_t f = 0; f < features; ++f) {
        const double diff = static_cast<double>(x[r * features + f]) - sv[v * features + f];
        d += diff * diff;
      }
      s += coef[v] * std::exp(-0.4 * d);
    }
    EXPECT_NEAR(y[r], s, 1e-5 * std::max(1.0, std::abs(s))) << "row " << r;
  }
}

}  // namespace
}  // namespace onnx_light
