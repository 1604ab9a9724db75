#include <cmath>
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

void ExpectNear(const std::vector<float>& a, const std::vector<double>& e, double tol) {
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tol) << "at " << i;
}

// input [2, 3]: loss = -input[n, target[n]] * weight[target[n]].
TEST(NegativeLogLikelihoodLoss, NoReductionWithWeights) {
  KernelTester t("NegativeLogLikelihoodLoss", 13);
  t.Input(MakeTensor<float>(Shape{2, 3}, {0.5f, -1.f, 2.f, 3.f, 4.f, -5.f}))
      .Input(MakeTensor<int64_t>(Shape{2}, {2, 0}))
      .Input(MakeTensor<float>(Shape{3}, {0.1f, 0.2f, 0.3f}))
      .Attr("reduction", std::string("none"));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape{2});
  ExpectNear(ToVector<float>(out[0].tensor()), {-2.0 * 0.3, -3.0 * 0.1}, 1e-7);
}

// input [2, 2, 2] (N, C, d1), int32 targets with one ignored lane; mean divides by the
// weights of the lanes that count: (-(1)*2 - (4)*1 - (6)*1) / (2 + 1 + 1).
TEST(NegativeLogLikelihoodLoss, MeanOverPositionsSkipsIgnoredLanes) {
  KernelTester t("NegativeLogLikelihoodLoss", 22);
  // x[n][c][d]: n=0: c0={1,2} c1={3,4}; n=1: c0={5,6} c1={7,8}
  t.Input(MakeTensor<float>(Shape{2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
      .Input(MakeTensor<int32_t>(Shape{2, 2}, {0, 1, -1, 0}))
      .Input(MakeTensor<float>(Shape{2}, {2.f, 1.f}))
      .Attr("ignore_index", int64_t{-1});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape());
  // lanes: (n0,d0) t0 -> -1*2 ; (n0,d1) t1 -> -4*1 ; (n1,d0) ignored ; (n1,d1) t0 -> -6*2
  ExpectNear(ToVector<float>(out[0].tensor()), {(-2.0 - 4.0 - 12.0) / (2.0 + 1.0 + 2.0)}, 1e-6);
}

TEST(NegativeLogLikelihoodLoss, SumIsIdenticalAcrossParticipantCounts) {
  const int64_t n = 37, c = 5, d = 11;
  std::vector<double> x(n * c * d);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
  std::vector<int64_t> target(n * d);
  double expected = 0;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t p = 0; p < d; ++p) {
      target[s * d + p] = (s * 7 + p * 3) % c;
      expected -= x[(s * c + target[s * d + p]) * d + p];
    }
  }
  KernelTester t("NegativeLogLikelihoodLoss", 13);
  t.Input(MakeTensor<double>(Shape{n, c, d}, x))
      .Input(MakeTensor<int64_t>(Shape{n, d}, target))
      .Attr("reduction", std::string("sum"));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(ToVector<double>(out[0].tensor())[0], expected, 1e-12);
}

TEST(NegativeLogLikelihoodLoss, RejectsBadTargetsAndShapes) {
  KernelTester out_of_range("NegativeLogLikelihoodLoss", 13);
  out_of_range.Input(MakeTensor<float>(Shape{1, 3}, {1, 2, 3})).Input(MakeTensor<int64_t>(Shape{1}, {3}));
  auto r = out_of_range.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("outside [0, 3)"), std::string::npos) << r.status().ToString();

  KernelTester mismatch("NegativeLogLikelihoodLoss", 13);
  mismatch.Input(MakeTensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<int64_t>(Shape{3}, {0, 0, 0}));
  EXPECT_FALSE(mismatch.Run(1).ok());

  KernelTester bad_weight("NegativeLogLikelihoodLoss", 13);
  bad_weight.Input(MakeTensor<float>(Shape{1, 3}, {1, 2, 3}))
      .Input(MakeTensor<int64_t>(Shape{1}, {0}))
      .Input(MakeTensor<float>(Shape{2}, {1, 1}));
  EXPECT_FALSE(bad_weight.Run(1).ok());

  KernelTester bad_reduction("NegativeLogLikelihoodLoss", 13);
  bad_reduction.Input(MakeTensor<float>(Shape{1, 3}, {1, 2, 3}))
      .Input(MakeTensor<int64_t>(Shape{1}, {0}))
      .Attr("reduction", std::string("max"));
  EXPECT_FALSE(bad_reduction.Run(1).ok());
}

// Scores [2, 3, 2]; log_prob = log-softmax over axis 1, loss = sum of -log_prob at labels.
TEST(SoftmaxCrossEntropyLoss, SumWithLogProbOutput) {
  const int64_t n = 2, c = 3, d = 2;
  const std::vector<float> x = {0.1f, 1.f, -2.f, 0.5f, 3.f, 0.f, 1.5f, -1.f, 2.f, 2.f, 0.25f, 4.f};
  const std::vector<int64_t> labels = {2, 0, 1, 2};
  std::vector<double> log_prob(x.size());
  double expected = 0;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t p = 0; p < d; ++p) {
      double total = 0;
      for (int64_t k = 0; k < c; ++k) total += std::exp(double(x[(s * c + k) * d + p]));
      for (int64_t k = 0; k < c; ++k) log_prob[(s * c + k) * d + p] = x[(s * c + k) * d + p] - std::log(total);
      expected -= log_prob[(s * c + labels[s * d + p]) * d + p];
    }
  }
  KernelTester t("SoftmaxCrossEntropyLoss", 13);
  t.Input(MakeTensor<float>(Shape{n, c, d}, x))
      .Input(MakeTensor<int64_t>(Shape{n, d}, labels))
      .Attr("reduction", std::string("sum"))
      .Outputs(2);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(ToVector<float>(out[0].tensor()), {expected}, 1e-5);
  EXPECT_EQ(out[1].tensor().shape(), (Shape{n, c, d}));
  ExpectNear(ToVector<float>(out[1].tensor()), log_prob, 1e-6);
}

// Uniform scores: every counted lane loses log(C) times its weight.
TEST(SoftmaxCrossEntropyLoss, WeightedMeanWithIgnoredLane) {
  KernelTester t("SoftmaxCrossEntropyLoss", 12);
  t.Input(MakeTensor<float>(Shape{3, 4}, std::vector<float>(12, 0.75f)))
      .Input(MakeTensor<int64_t>(Shape{3}, {1, 7, 3}))
      .Input(MakeTensor<float>(Shape{4}, {1.f, 2.f, 3.f, 4.f}))
      .Attr("ignore_index", int64_t{7});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToVector<float>(out[0].tensor()), {std::log(4.0) * (2 + 4) / (2 + 4)}, 1e-6);
}

// The parallel decision (not timing), at the portable defaults (32768 input elements
// read): an NLL lane reads one element of its row, an SCE lane all C. NLL over [64, 1000]
// (64 lanes) opens no region; NLL over [8, 32, 4096] (32768 lanes) and SCE over [64, 1000]
// (64000 elements read) split.
struct LossDecisionCase {
  std::string op;
  std::vector<int64_t> input_shape;  // [N, C, d...]
  bool split;
};

class LossDecision : public ::testing::TestWithParam<LossDecisionCase> {};

TEST_P(LossDecision, SplitsOnlyFromTheMinimumWorkRead) {
  const LossDecisionCase c = GetParam();
  const Shape shape(c.input_shape);
  std::vector<int64_t> target_dims = {c.input_shape[0]};
  for (size_t i = 2; i < c.input_shape.size(); ++i) target_dims.push_back(c.input_shape[i]);
  const Shape target_shape(target_dims);
  std::vector<float> x(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = -0.001f * static_cast<float>(i % 997);
  std::vector<int64_t> target(static_cast<size_t>(target_shape.num_elements()));
  for (size_t i = 0; i < target.size(); ++i) target[i] = static_cast<int64_t>(i * 7) % c.input_shape[1];
  KernelTester t(c.op, 13);
  t.Input(MakeTensor<float>(shape, x)).Input(MakeTensor<int64_t>(target_shape, target)).PortableDefaults();
  for (int participants : {2, 8}) {
    auto run = t.RunWithDetails(participants);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    bool split = false;
    for (const auto& r : run->regions) split = split || r.admitted_participants > 1;
    EXPECT_EQ(split, c.split) << c.op << " " << shape.ToString() << " with " << participants;
  }
}

INSTANTIATE_TEST_SUITE_P(
    DefaultTuning, LossDecision,
    ::testing::Values(LossDecisionCase{"NegativeLogLikelihoodLoss", {64, 1000}, false},     // 64 read
                      LossDecisionCase{"NegativeLogLikelihoodLoss", {8, 32, 2048}, false},  // 16384 read
                      LossDecisionCase{"NegativeLogLikelihoodLoss", {8, 32, 4096}, true},   // 32768 read
                      LossDecisionCase{"SoftmaxCrossEntropyLoss", {16, 1000}, false},       // 16000 read
                      LossDecisionCase{"SoftmaxCrossEntropyLoss", {64, 1000}, true}));      // 64000 read

}  // namespace
}  // namespace testing
}  // namespace onnx_light
