#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

std::vector<Value> RunAllCounts(KernelTester& t) {
  t.Tuning("parallel.minimum_elements", int64_t{1}).Tuning("parallel.block_multiply_adds", int64_t{1});
  auto serial = t.Run(1);
  EXPECT_TRUE(serial.ok()) << serial.status().ToString();
  if (!serial.ok()) return {};
  for (int threads : {2, 4, 8}) {
    auto parallel = t.Run(threads);
    EXPECT_TRUE(parallel.ok()) << parallel.status().ToString();
    if (!parallel.ok()) continue;
    for (size_t i = 0; i < serial->size(); ++i) ExpectIdentical(serial->at(i), parallel->at(i), "threads=" + std::to_string(threads));
  }
  return *serial;
}

const std::vector<float> kLogp = {-1, -2, -3, -4, -5, -6};  // [2, 3]

TEST(NllLossTest, NoneSumAndWeightedMean) {
  KernelTester none("NegativeLogLikelihoodLoss", 13);
  none.Input(MakeTensor<float>({2, 3}, kLogp)).Input(MakeTensor<int64_t>({2}, {2, 0})).Attr("reduction", std::string("none"));
  auto out = RunAllCounts(none);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{3, 4}));

  KernelTester sum("NegativeLogLikelihoodLoss", 13);
  sum.Input(MakeTensor<float>({2, 3}, kLogp)).Input(MakeTensor<int32_t>({2}, {2, 0})).Attr("reduction", std::string("sum"));
  out = RunAllCounts(sum);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{7}));

  KernelTester mean("NegativeLogLikelihoodLoss", 13);
  mean.Input(MakeTensor<float>({2, 3}, kLogp)).Input(MakeTensor<int64_t>({2}, {2, 0}))
      .Input(MakeTensor<float>({3}, {1, 10, 3}));
  out = RunAllCounts(mean);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(ToVector<float>(out[0].tensor())[0], (3 * 3 + 1 * 4) / 4.0f);  // (w2 * 3 + w0 * 4) / (w2 + w0)
}

TEST(NllLossTest, IgnoredPositionsLeaveTheMean) {
  KernelTester t("NegativeLogLikelihoodLoss", 22);
  t.Input(MakeTensor<float>({1, 3, 2}, {-1, -2, -3, -4, -5, -6})).Input(MakeTensor<int64_t>({1, 2}, {1, -100}))
      .Attr("ignore_index", int64_t{-100});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  // Position 0 has class 1 at d = 0: -(-3); position 1 is ignored.
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{3}));
}

TEST(SoftmaxCrossEntropyLossTest, UniformScoresGiveLogC) {
  KernelTester t("SoftmaxCrossEntropyLoss", 13);
  t.Input(MakeTensor<double>({2, 2}, {0, 0, 5, 5})).Input(MakeTensor<int64_t>({2}, {0, 1})).Outputs(2);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(ToVector<double>(out[0].tensor())[0], std::log(2.0));
  for (double lp : ToVector<double>(out[1].tensor())) EXPECT_DOUBLE_EQ(lp, -std::log(2.0));
}

TEST(SoftmaxCrossEntropyLossTest, LargeInputIsIdenticalForEveryParticipantCount) {
  std::vector<float> x(4 * 5 * 300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 4.0);
  std::vector<int64_t> labels(4 * 300);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 5);
  KernelTester t("SoftmaxCrossEntropyLoss", 13);
  t.Input(MakeTensor<float>({4, 5, 300}, x)).Input(MakeTensor<int64_t>({4, 300}, labels))
      .Attr("reduction", std::string("none")).Outputs(2);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 2u);
  // Position (n = 1, d = 7), label 2 (= (300 + 7) % 5): -log softmax over the 5 classes.
  double total = 0;
  for (int c = 0; c < 5; ++c) total += std::exp(static_cast<double>(x[(1 * 5 + c) * 300 + 7]));
  const double expected = std::log(total) - x[(1 * 5 + 2) * 300 + 7];
  EXPECT_NEAR(ToVector<float>(out[0].tensor())[300 + 7], expected, 1e-5);
}

TEST(NllLossTest, RejectsBadTargets) {
  KernelTester range("NegativeLogLikelihoodLoss", 13);
  range.Input(MakeTensor<float>({2, 3}, kLogp)).Input(MakeTensor<int64_t>({2}, {3, 0}));
  auto r = range.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("outside"), std::string::npos) << r.status().ToString();
  KernelTester shape("NegativeLogLikelihoodLoss", 13);
  shape.Input(MakeTensor<float>({2, 3}, kLogp)).Input(MakeTensor<int64_t>({3}, {0, 0, 0}));
  EXPECT_FALSE(shape.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
