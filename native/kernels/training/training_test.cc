// Adagrad, Adam, Momentum: values worked out by hand from the ONNX formulas, multiple
// parameter tensors, bad inputs, and identical results for 1/2/4/8 participants.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

constexpr char kDomain[] = "ai.onnx.preview.training";

KernelTester Optimizer(const char* op, float rate, int64_t step) {
  KernelTester t(op, 1, kDomain);
  t.Input(MakeTensor<float>({}, {rate})).Input(MakeTensor<int64_t>({}, {step}));
  return t;
}

TEST(Adagrad, OneParameter) {
  // H' = H + G^2 = {9, 25}; X' = X - 0.1 * G / sqrt(H') = {1 - 0.1, 2 - 0.08}.
  auto t = Optimizer("Adagrad", 0.1f, 0);
  t.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({2}, {3, 4})).Input(MakeTensor<float>({2}, {0, 9}));
  t.Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(0).tensor())[0], 0.9f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(0).tensor())[1], 1.92f);
  EXPECT_EQ(ToVector<float>(out->at(1).tensor()), (std::vector<float>{9, 25}));
}

TEST(Adagrad, DecayAndRegularisation) {
  // rate = 1 / (1 + 3 * 1) = 0.25; G_reg = 0.5 * 2 + 2 = 3; H' = 9; X' = 2 - 0.25 * 3 / (3 + 1).
  auto t = Optimizer("Adagrad", 1.0f, 3);
  t.Attr("decay_factor", 1.0f).Attr("norm_coefficient", 0.5f).Attr("epsilon", 1.0f);
  t.Input(MakeTensor<float>({1}, {2})).Input(MakeTensor<float>({1}, {2})).Input(MakeTensor<float>({1}, {0}));
  t.Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(0).tensor())[0], 2.0f - 0.1875f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(1).tensor())[0], 9.0f);
}

KernelTester MomentumCase(const char* mode, int64_t step) {
  auto t = Optimizer("Momentum", 0.1f, step);
  t.Attr("alpha", 0.5f).Attr("beta", 2.0f).Attr("norm_coefficient", 0.0f).Attr("mode", std::string(mode));
  t.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {2})).Input(MakeTensor<float>({1}, {4}));
  t.Outputs(2);
  return t;
}

TEST(Momentum, StandardNesterovAndFirstStep) {
  struct Case {
    const char* mode;
    int64_t step;
    float x, v;
  };
  // V' = 0.5 * 4 + beta' * 2 with beta' = 2 (or 1 on step 0); standard X' = 1 - 0.1 V';
  // nesterov X' = 1 - 0.1 (2 + 0.5 V').
  for (const Case& c : {Case{"standard", 1, 0.4f, 6}, Case{"standard", 0, 0.6f, 4}, Case{"nesterov", 1, 0.5f, 6}}) {
    auto t = MomentumCase(c.mode, c.step);
    auto out = t.Run(1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_FLOAT_EQ(ToVector<float>(out->at(0).tensor())[0], c.x) << c.mode << " step " << c.step;
    EXPECT_FLOAT_EQ(ToVector<float>(out->at(1).tensor())[0], c.v) << c.mode << " step " << c.step;
  }
}

TEST(Momentum, RejectsUnknownMode) {
  auto t = MomentumCase("heavy-ball", 1);
  EXPECT_FALSE(t.Run(1).ok());
}

TEST(Adam, BiasCorrectionAndTwoParameters) {
  // Parameter 0: V' = 0.5 * 2 = 1, H' = 0.25 * 4 = 1, R' = 0.1 * sqrt(1 - 0.75) / (1 - 0.5)
  // = 0.1, X' = 1 - 0.1. Parameter 1 (double G = 0): V' = 0.5 * 2 = 1, H' = 0.75 * 4 = 3.
  auto t = Optimizer("Adam", 0.1f, 1);
  t.Attr("alpha", 0.5f).Attr("beta", 0.75f).Attr("epsilon", 0.0f);
  t.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {5}));  // X0, X1
  t.Input(MakeTensor<float>({1}, {2})).Input(MakeTensor<float>({1}, {0}));  // G0, G1
  t.Input(MakeTensor<float>({1}, {0})).Input(MakeTensor<float>({1}, {2}));  // V0, V1
  t.Input(MakeTensor<float>({1}, {0})).Input(MakeTensor<float>({1}, {4}));  // H0, H1
  t.Outputs(6);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(0).tensor())[0], 0.9f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(1).tensor())[0], 5.0f - 0.1f * 1.0f / std::sqrt(3.0f));
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(2).tensor())[0], 1.0f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(3).tensor())[0], 1.0f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(4).tensor())[0], 1.0f);
  EXPECT_FLOAT_EQ(ToVector<float>(out->at(5).tensor())[0], 3.0f);
}

TEST(Optimizers, RejectBadInputs) {
  auto mismatched = Optimizer("Adagrad", 0.1f, 0);
  mismatched.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({3}, {1, 2, 3}));
  mismatched.Input(MakeTensor<float>({2}, {0, 0})).Outputs(2);
  EXPECT_FALSE(mismatched.Run(1).ok());

  auto incomplete = Optimizer("Adam", 0.1f, 0);
  incomplete.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {1})).Outputs(1);
  EXPECT_FALSE(incomplete.Run(1).ok());

  KernelTester vector_rate("Momentum", 1, kDomain);
  vector_rate.Attr("alpha", 0.5f)
      .Attr("beta", 1.0f)
      .Attr("norm_coefficient", 0.0f)
      .Attr("mode", std::string("standard"));
  vector_rate.Input(MakeTensor<float>({2}, {0.1f, 0.2f})).Input(MakeTensor<int64_t>({}, {1}));
  vector_rate.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {1}));
  vector_rate.Outputs(2);
  EXPECT_FALSE(vector_rate.Run(1).ok());
}

TEST(Optimizers, ParticipantCountsGiveIdenticalResults) {
  const int64_t n = 5000;
  std::vector<double> x(n), g(n), v(n), h(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.001 * static_cast<double>(i % 977) - 0.4;
    g[i] = 0.01 * static_cast<double>((i * 7) % 131) - 0.6;
    v[i] = 0.002 * static_cast<double>(i % 53);
    h[i] = 0.003 * static_cast<double>(i % 71);
  }
  KernelTester t("Adam", 1, kDomain);
  t.Input(MakeTensor<double>({}, {0.05})).Input(MakeTensor<int64_t>({}, {7}));
  t.Input(MakeTensor<double>({n}, x)).Input(MakeTensor<double>({n}, g));
  t.Input(MakeTensor<double>({n}, v)).Input(MakeTensor<double>({n}, h));
  t.Attr("norm_coefficient", 0.01f).Outputs(3);
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);  // all three outputs
  ASSERT_EQ(serial.size(), 3u);
  // Spot check element 10 against the formula evaluated here (attributes are floats).
  const double alpha = static_cast<double>(0.9f), beta = static_cast<double>(0.999f);
  const double gr = g[10] + static_cast<double>(0.01f) * x[10];
  const double vn = alpha * v[10] + (1 - alpha) * gr, hn = beta * h[10] + (1 - beta) * gr * gr;
  const double rate = 0.05 * std::sqrt(1 - std::pow(beta, 7)) / (1 - std::pow(alpha, 7));
  EXPECT_NEAR(ToVector<double>(serial.at(0).tensor())[10], x[10] - rate * vn / (std::sqrt(hn) + 1e-6), 1e-6);
}

}  // namespace
}  // namespace onnx_light
