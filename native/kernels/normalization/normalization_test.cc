#include <cmath>
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

std::vector<float> Wave(int64_t n, float phase = 0.f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 1.3f + phase) * 2.0f + 0.5f;
  return v;
}

void ExpectNear(const std::vector<float>& a, const std::vector<double>& e, double tol) {
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tol) << "at " << i;
}

// (x - mean) / sqrt(var + eps) over consecutive blocks of `block` elements, then
// y = normalized * scale[param(i)] + bias[param(i)].
std::vector<double> NaiveBlockNorm(const std::vector<float>& x, int64_t block, double eps,
                                   const std::function<int64_t(int64_t)>& param, const std::vector<float>& scale,
                                   const std::vector<float>& bias) {
  std::vector<double> y(x.size());
  for (size_t b = 0; b < x.size(); b += block) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < block; ++i) m += x[b + i];
    m /= block;
    for (int64_t i = 0; i < block; ++i) v += (x[b + i] - m) * (x[b + i] - m);
    v /= block;
    for (int64_t i = 0; i < block; ++i) {
      const int64_t p = param(b + i);
      y[b + i] = (x[b + i] - m) / std::sqrt(v + eps) * scale[p] + bias[p];
    }
  }
  return y;
}

TEST(LayerNormalization, RowsWithScaleBiasAndStatistics) {
  const auto x = Wave(4 * 6 * 8);
  const auto scale = Wave(6 * 8, 1.f), bias = Wave(6 * 8, 2.f);
  KernelTester t("LayerNormalization", 17);
  t.Input(MakeTensor<float>({4, 6, 8}, x))
      .Input(MakeTensor<float>({6, 8}, scale))
      .Input(MakeTensor<float>({6, 8}, bias));
  t.Attr("axis", int64_t{1}).Outputs(3);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(ToVector<float>(out[0].tensor()),
             NaiveBlockNorm(
                 x, 48, 1e-5, [](int64_t i) { return i % 48; }, scale, bias),
             2e-5);
  EXPECT_EQ(out[1].tensor().shape(), Shape({4, 1, 1}));
  double m0 = 0;
  for (int i = 0; i < 48; ++i) m0 += x[i];
  EXPECT_NEAR(out[1].tensor().data<float>()[0], m0 / 48, 1e-5);
  EXPECT_EQ(out[2].tensor().shape(), Shape({4, 1, 1}));
}

TEST(LayerNormalization, Float16ComputesInFloatAndScaleBroadcasts) {
  std::vector<Float16> h;
  std::vector<float> rounded;
  for (float v : Wave(3 * 64)) h.push_back(Float16::FromFloat(v)), rounded.push_back(h.back().ToFloat());
  KernelTester t("LayerNormalization", 17);
  t.Input(MakeTensor<Float16>({3, 64}, h)).Input(MakeTensor<Float16>({1}, {Float16::FromFloat(2.0f)}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto expected = NaiveBlockNorm(rounded, 64, 1e-5, [](int64_t) { return 0; }, {2.0f}, {0.0f});
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(out[0].tensor().data<Float16>()[i].ToFloat(), expected[i], 4e-3) << i;
  }
  KernelTester bad("LayerNormalization", 17);
  bad.NodeName("ln").Input(MakeTensor<float>({2, 3}, Wave(6))).Input(MakeTensor<float>({2}, {1, 1}));
  auto status = bad.Run(1).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("[2]"), std::string::npos) << status.message();
}

// Float rows (the vectorised path; every participant count identical) against double
// (the scalar path): rows of 1, 7, 45 and 1000 elements, off every vector width, with an
// offset of 100 that a one-pass variance would lose, and with NaN / inf rows that must
// stay NaN (or inf). Mean and InvStdDev outputs checked alike.
void ExpectFloatRowsMatchDouble(const char* op, int opset, int64_t row_size, uint32_t seed) {
  SCOPED_TRACE(std::string(op) + " rows of " + std::to_string(row_size));
  const int64_t rows = 6;
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(rows * row_size), scale(row_size), bias(row_size);
  for (float& v : x) v = 100.f + 3.f * normal(gen);
  for (float& v : scale) v = normal(gen);
  for (float& v : bias) v = normal(gen);
  x[2 * row_size] = std::numeric_limits<float>::quiet_NaN();
  x[4 * row_size + row_size - 1] = std::numeric_limits<float>::infinity();
  const bool layer = std::string(op) == "LayerNormalization";
  const int outputs = layer ? 3 : 1;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    KernelTester t(op, opset);
    t.Input(MakeTensor<T>({rows, row_size}, std::vector<T>(x.begin(), x.end())))
        .Input(MakeTensor<T>({row_size}, std::vector<T>(scale.begin(), scale.end())));
    if (layer) t.Input(MakeTensor<T>({row_size}, std::vector<T>(bias.begin(), bias.end())));
    t.Outputs(outputs);
    return RunAllCounts(t, kForceParallel);
  };
  const auto got = run(0.f), want = run(0.0);
  ASSERT_EQ(got.size(), static_cast<size_t>(outputs));
  ASSERT_EQ(want.size(), static_cast<size_t>(outputs));
  for (int o = 0; o < outputs; ++o) {
    const auto y = ToVector<float>(got[o].tensor());
    const auto e = o == 0 ? ToVector<double>(want[o].tensor()) : std::vector<double>();
    const auto e_stat = o == 0 ? std::vector<float>() : ToVector<float>(want[o].tensor());
    for (size_t i = 0; i < y.size(); ++i) {
      const double expected = o == 0 ? e[i] : e_stat[i];
      if (std::isnan(expected) || std::isinf(expected)) {
        EXPECT_TRUE(std::isnan(expected) ? std::isnan(y[i]) : y[i] == expected) << "output " << o << " at " << i;
      } else {
        EXPECT_NEAR(y[i], expected, 2e-5 * std::max(1.0, std::fabs(expected))) << "output " << o << " at " << i;
      }
    }
  }
}

TEST(LayerNormalization, FloatVectorRowsMatchScalarDouble) {
  uint32_t seed = 1;
  for (int64_t row_size : {1, 7, 45, 1000}) {
    ExpectFloatRowsMatchDouble("LayerNormalization", 17, row_size, seed++);
    ExpectFloatRowsMatchDouble("RMSNormalization", 23, row_size, seed++);
  }
}

TEST(RMSNormalization, RootMeanSquare) {
  const auto x = Wave(3 * 10);
  const auto scale = Wave(10, 0.5f);
  KernelTester t("RMSNormalization", 23);
  t.Input(MakeTensor<float>({3, 10}, x)).Input(MakeTensor<float>({10}, scale)).Attr("epsilon", 1e-6f);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(x.size());
  for (int r = 0; r < 3; ++r) {
    double ms = 0;
    for (int i = 0; i < 10; ++i) ms += x[r * 10 + i] * x[r * 10 + i];
    for (int i = 0; i < 10; ++i) expected[r * 10 + i] = x[r * 10 + i] / std::sqrt(ms / 10 + 1e-6) * scale[i];
  }
  ExpectNear(ToVector<float>(out[0].tensor()), expected, 1e-5);
}

TEST(BatchNormalization, InferenceAndTrainingMode) {
  const auto x = Wave(2 * 3 * 4);
  const std::vector<float> scale = {1, 2, 0.5f}, bias = {0, 1, -1}, mean = {0.5f, 0, 1}, var = {1, 2, 0.25f};
  KernelTester t("BatchNormalization", 15);
  t.Input(MakeTensor<float>({2, 3, 4}, x)).Input(MakeTensor<float>({3}, scale)).Input(MakeTensor<float>({3}, bias));
  t.Input(MakeTensor<float>({3}, mean)).Input(MakeTensor<float>({3}, var));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int c = (i / 4) % 3;
    expected[i] = scale[c] * (x[i] - mean[c]) / std::sqrt(var[c] + 1e-5) + bias[c];
  }
  ExpectNear(ToVector<float>(out[0].tensor()), expected, 1e-5);

  KernelTester train("BatchNormalization", 15);
  train.Input(MakeTensor<float>({2, 3, 4}, x)).Input(MakeTensor<float>({3}, scale)).Input(MakeTensor<float>({3}, bias));
  train.Input(MakeTensor<float>({3}, mean)).Input(MakeTensor<float>({3}, var));
  train.Attr("training_mode", int64_t{1}).Attr("momentum", 0.8f).Outputs(3);
  auto trained = RunAllCounts(train, kForceParallel);
  ASSERT_EQ(trained.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    double m = 0, v = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) m += x[(n * 3 + c) * 4 + i];
    m /= 8;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) v += std::pow(x[(n * 3 + c) * 4 + i] - m, 2);
    v /= 8;
    EXPECT_NEAR(trained[1].tensor().data<float>()[c], mean[c] * 0.8 + m * 0.2, 1e-5);
    EXPECT_NEAR(trained[2].tensor().data<float>()[c], var[c] * 0.8 + v * 0.2, 1e-5);
    EXPECT_NEAR(trained[0].tensor().data<float>()[c * 4], scale[c] * (x[c * 4] - m) / std::sqrt(v + 1e-5) + bias[c],
                1e-5);
  }
}

TEST(InstanceAndGroupNormalization, PlanesAndGroups) {
  const auto x = Wave(2 * 4 * 3);
  const std::vector<float> scale = {1, 2, 3, 4}, bias = {0, -1, 1, 2};
  KernelTester inst("InstanceNormalization", 6);
  inst.Input(MakeTensor<float>({2, 4, 3}, x)).Input(MakeTensor<float>({4}, scale)).Input(MakeTensor<float>({4}, bias));
  auto i_out = RunAllCounts(inst, kForceParallel);
  ASSERT_EQ(i_out.size(), 1u);
  ExpectNear(ToVector<float>(i_out[0].tensor()),
             NaiveBlockNorm(
                 x, 3, 1e-5, [](int64_t i) { return (i / 3) % 4; }, scale, bias),
             1e-4);

  KernelTester group("GroupNormalization", 21);
  group.Input(MakeTensor<float>({2, 4, 3}, x)).Input(MakeTensor<float>({4}, scale)).Input(MakeTensor<float>({4}, bias));
  group.Attr("num_groups", int64_t{2});
  auto g_out = RunAllCounts(group, kForceParallel);
  ASSERT_EQ(g_out.size(), 1u);
  ExpectNear(ToVector<float>(g_out[0].tensor()),
             NaiveBlockNorm(
                 x, 6, 1e-5, [](int64_t i) { return (i / 3) % 4; }, scale, bias),
             1e-4);

  KernelTester group18("GroupNormalization", 18);  // scale and bias per group
  group18.Input(MakeTensor<float>({2, 4, 3}, x))
      .Input(MakeTensor<float>({2}, {2, 3}))
      .Input(MakeTensor<float>({2}, {1, 0}));
  group18.Attr("num_groups", int64_t{2});
  auto g18 = RunAllCounts(group18, kForceParallel);
  ASSERT_EQ(g18.size(), 1u);
  ExpectNear(ToVector<float>(g18[0].tensor()),
             NaiveBlockNorm(x, 6, 1e-5, [](int64_t i) { return (i / 6) % 2; }, {2, 3}, {1, 0}), 1e-4);

  KernelTester bad("GroupNormalization", 21);
  bad.Input(MakeTensor<float>({2, 4, 3}, x)).Input(MakeTensor<float>({4}, scale)).Input(MakeTensor<float>({4}, bias));
  bad.Attr("num_groups", int64_t{3});
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(LpNormalization, StridedAxisAndZeroNorm) {
  const std::vector<float> x = {3, 0, 1, 4, 0, -1};  // [2, 3], axis 0
  KernelTester t("LpNormalization", 22);
  t.Input(MakeTensor<float>({2, 3}, x)).Attr("axis", int64_t{0});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToVector<float>(out[0].tensor()), {0.6, 0, 1 / std::sqrt(2.0), 0.8, 0, -1 / std::sqrt(2.0)}, 1e-6);
  KernelTester l1("LpNormalization", 1);
  l1.Input(MakeTensor<float>({2, 3}, x)).Attr("p", int64_t{1});
  auto o1 = RunAllCounts(l1, kForceParallel);
  ASSERT_EQ(o1.size(), 1u);
  ExpectNear(ToVector<float>(o1[0].tensor()), {0.75, 0, 0.25, 0.8, 0, -0.2}, 1e-6);
}

TEST(MeanVarianceNormalization, DefaultAxesPerChannel) {
  const auto x = Wave(2 * 3 * 2 * 2);
  KernelTester t("MeanVarianceNormalization", 13);
  t.Input(MakeTensor<float>({2, 3, 2, 2}, x));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(x.size());
  for (int c = 0; c < 3; ++c) {
    double m = 0, v = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) m += x[(n * 3 + c) * 4 + i];
    m /= 8;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) v += std::pow(x[(n * 3 + c) * 4 + i] - m, 2);
    v /= 8;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) {
        expected[(n * 3 + c) * 4 + i] = (x[(n * 3 + c) * 4 + i] - m) / (std::sqrt(v) + 1e-9);
      }
  }
  ExpectNear(ToVector<float>(out[0].tensor()), expected, 1e-5);
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
