#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// A seeded node gives the same values on every run (a second serial run included),
// whatever the participant count.
Tensor RunSeeded(KernelTester& t) {
  auto first = t.Run(1);
  EXPECT_TRUE(first.ok()) << first.status().ToString();
  if (!first.ok()) return Tensor();
  const std::vector<Value> again = testing::DeterministicOutputs(t);
  if (!again.empty()) ExpectIdentical(first->at(0), again.at(0), "a second serial run");
  return first->at(0).tensor();
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

TEST(RandomTest, UniformStaysInRangeWithTheRightMean) {
  KernelTester t("RandomUniform", 22);
  t.Attr("shape", std::vector<int64_t>{100, 200}).Attr("low", -2.0f).Attr("high", 6.0f).Attr("seed", 7.0f);
  Tensor out = RunSeeded(t);
  ASSERT_EQ(out.dtype(), DataType::kFloat);
  ASSERT_EQ(out.shape(), (Shape{100, 200}));
  std::vector<double> v;
  for (float x : ToVector<float>(out)) {
    ASSERT_GE(x, -2.0f);
    ASSERT_LE(x, 6.0f);
    v.push_back(x);
  }
  EXPECT_NEAR(Mean(v), 2.0, 0.05);  // sd of the mean: 8 / sqrt(12 * 20000) = 0.016
}

TEST(RandomTest, NormalHasTheRequestedMeanAndScale) {
  KernelTester t("RandomNormal", 1);
  t.Attr("shape", std::vector<int64_t>{20001})
      .Attr("mean", 3.0f)
      .Attr("scale", 2.0f)
      .Attr("seed", 1.0f)
      .Attr("dtype", static_cast<int64_t>(DataType::kDouble));
  Tensor out = RunSeeded(t);
  ASSERT_EQ(out.dtype(), DataType::kDouble);
  std::vector<double> v = ToVector<double>(out);
  const double mean = Mean(v);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 3.0, 0.05);
  EXPECT_NEAR(std::sqrt(var / v.size()), 2.0, 0.05);
}

TEST(RandomTest, DifferentSeedsGiveDifferentValues) {
  KernelTester a("RandomUniform", 22), b("RandomUniform", 22);
  a.Attr("shape", std::vector<int64_t>{8}).Attr("seed", 1.0f);
  b.Attr("shape", std::vector<int64_t>{8}).Attr("seed", 2.0f);
  EXPECT_NE(ToVector<float>(RunSeeded(a)), ToVector<float>(RunSeeded(b)));
}

TEST(RandomTest, LikeOpsTakeShapeAndTypeFromTheInput) {
  KernelTester t("RandomNormalLike", 22);
  t.Input(MakeTensor<double>({2, 3}, {0, 0, 0, 0, 0, 0})).Attr("seed", 3.0f);
  Tensor out = RunSeeded(t);
  EXPECT_EQ(out.dtype(), DataType::kDouble);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));

  KernelTester u("RandomUniformLike", 22);
  u.Input(MakeTensor<int32_t>({4}, {0, 0, 0, 0})).Attr("dtype", static_cast<int64_t>(DataType::kFloat16));
  auto half = u.Run(1);
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  EXPECT_EQ(half->at(0).tensor().dtype(), DataType::kFloat16);

  KernelTester bad("RandomUniformLike", 22);
  bad.Input(MakeTensor<int32_t>({4}, {0, 0, 0, 0}));  // int32 output is not allowed
  auto r = bad.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("int32"), std::string::npos) << r.status().ToString();
}

TEST(RandomTest, BernoulliFollowsTheProbabilities) {
  std::vector<float> p(3000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i < 1000 ? 0.0f : (i < 2000 ? 1.0f : 0.25f);
  KernelTester t("Bernoulli", 15);
  t.Input(MakeTensor<float>({3000}, p)).Attr("seed", 5.0f).Attr("dtype", static_cast<int64_t>(DataType::kBool));
  Tensor out = RunSeeded(t);
  ASSERT_EQ(out.dtype(), DataType::kBool);
  const bool* b = out.data<bool>();
  int ones = 0;
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(b[i]) << i;
  for (int i = 1000; i < 2000; ++i) ASSERT_TRUE(b[i]) << i;
  for (int i = 2000; i < 3000; ++i) ones += b[i];
  EXPECT_NEAR(ones / 1000.0, 0.25, 0.05);  // sd 0.014
}

TEST(RandomTest, MultinomialSamplesByWeight) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: only class 2 has weight; row 1: weights 1 : 3.
  KernelTester t("Multinomial", 7);
  t.Input(MakeTensor<float>({2, 3}, {-inf, -inf, 0.0f, 0.0f, std::log(3.0f), -inf}))
      .Attr("sample_size", int64_t{4000})
      .Attr("seed", 11.0f)
      .Attr("dtype", static_cast<int64_t>(DataType::kInt64));
  Tensor out = RunSeeded(t);
  ASSERT_EQ(out.shape(), (Shape{2, 4000}));
  std::vector<int64_t> v = ToVector<int64_t>(out);
  int class1 = 0;
  for (int s = 0; s < 4000; ++s) {
    ASSERT_EQ(v[s], 2);
    ASSERT_TRUE(v[4000 + s] == 0 || v[4000 + s] == 1);
    class1 += v[4000 + s] == 1;
  }
  EXPECT_NEAR(class1 / 4000.0, 0.75, 0.03);  // sd 0.007
}

TEST(RandomTest, MultinomialRejectsBadInput) {
  KernelTester t("Multinomial", 7);
  t.Input(MakeTensor<float>({3}, {0, 0, 0}));
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("float[3]"), std::string::npos) << r.status().ToString();
  KernelTester d("Multinomial", 7);
  d.Input(MakeTensor<float>({1, 2}, {0, 0})).Attr("dtype", static_cast<int64_t>(DataType::kFloat));
  EXPECT_FALSE(d.Run(1).ok());
}

TEST(DropoutTest, InferencePassesDataThroughWithAllKeptMask) {
  KernelTester t("Dropout", 13);
  t.Input(MakeTensor<float>({3}, {1, -2, 3})).Input(MakeTensor<float>({}, {0.5f})).Outputs(2);
  auto r = t.Run(1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ToVector<float>(r->at(0).tensor()), (std::vector<float>{1, -2, 3}));
  ASSERT_EQ(r->at(1).tensor().dtype(), DataType::kBool);
  EXPECT_EQ(ToVector<bool>(r->at(1).tensor()), (std::vector<bool>{true, true, true}));

  KernelTester old("Dropout", 7);  // before opset 10 the mask has the data's type
  old.Input(MakeTensor<double>({2}, {4, 5})).Outputs(2);
  auto o = old.Run(1);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(ToVector<double>(o->at(1).tensor()), (std::vector<double>{1, 1}));
}

TEST(DropoutTest, TrainingKeepsAndScalesByTheMask) {
  std::vector<float> x(4000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i % 13);
  KernelTester t("Dropout", 13);
  t.Input(MakeTensor<float>({4000}, x))
      .Input(MakeTensor<float>({}, {0.25f}))
      .Input(MakeTensor<bool>({}, {true}))
      .Attr("seed", 2.0f)
      .Outputs(2);
  Tensor y = RunSeeded(t);
  auto r = t.Run(1);
  ASSERT_TRUE(r.ok());
  const std::vector<bool> mask = ToVector<bool>(r->at(1).tensor());
  const std::vector<float> out = ToVector<float>(y);
  int kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(out[i], mask[i] ? x[i] / 0.75f : 0.0f) << i;
    kept += mask[i];
  }
  EXPECT_NEAR(kept / 4000.0, 0.75, 0.03);  // sd 0.007
}

TEST(DropoutTest, RejectsRatioOfOneInTraining) {
  KernelTester t("Dropout", 13);
  t.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({}, {1.0f})).Input(MakeTensor<bool>({}, {true}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
