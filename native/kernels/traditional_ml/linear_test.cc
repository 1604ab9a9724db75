// LinearClassifier, LinearRegressor, Scaler, Normalizer and the SVMs: values worked out
// by hand, ONNX Runtime's binary forms, and rows split identically for 1..8 participants.
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
  t.Tuning("parallel.minimum_elements", int64_t{1}).Tuning("parallel.block_rows", int64_t{8});
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
  n.Attr("norm", std::string("L2")).Input(MakeTensor<float>({rows, features}, testing::RandomFloats(rows * features, 9)));
  n.Tuning("parallel.minimum_elements", int64_t{1}).Tuning("parallel.block_rows", int64_t{4});
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
  p.Tuning("parallel.minimum_elements", int64_t{1}).Tuning("parallel.block_rows", int64_t{2});
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

}  // namespace
}  // namespace onnx_light
