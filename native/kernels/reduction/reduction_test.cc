#include <cmath>
#include <limits>
#include <memory>
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

std::vector<float> Ramp(int64_t n, float scale = 0.37f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) * 3.0f + 0.25f;
  return v;
}

std::vector<double> AsDouble(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

double Add(double a, double b) { return a + b; }

void ExpectNear(const std::vector<float>& actual, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << "at " << i;
}

// ReduceSum over every axis pattern of a rank-4 tensor (inner, outer, middle, split
// groups, all), axes as the opset-13 input, checked against a naive double sum.
TEST(ReduceSum, EveryAxisPatternMatchesNaiveSum) {
  const std::vector<int64_t> dims = {3, 5, 4, 7};
  const auto x = Ramp(3 * 5 * 4 * 7);
  const std::vector<std::vector<int64_t>> patterns = {{3},    {0},    {1},          {1, 2},  {0, 2},
                                                      {1, 3}, {0, 3}, {0, 1, 2, 3}, {-1, -3}};
  for (const auto& axes : patterns) {
    KernelTester t("ReduceSum", 13);
    t.Input(MakeTensor<float>(Shape(dims), x)).Input(MakeTensor<int64_t>({static_cast<int64_t>(axes.size())}, axes));
    t.Attr("keepdims", int64_t{0});
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u);
    std::vector<int> normalized;
    for (int64_t a : axes) normalized.push_back(static_cast<int>(a < 0 ? a + 4 : a));
    std::sort(normalized.begin(), normalized.end());
    ExpectNear(ToVector<float>(out[0].tensor()), NaiveReduce(AsDouble(x), dims, normalized, 0.0, Add), 1e-4);
  }
}

TEST(ReduceSum, KeepdimsShapeAndNoopWithEmptyAxes) {
  KernelTester t("ReduceSum", 13);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<int64_t>({1}, {1}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({2, 1}));
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{6, 15}));

  KernelTester noop("ReduceSum", 13);
  noop.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Attr("noop_with_empty_axes", int64_t{1});
  auto same = RunAllCounts(noop, kForceParallel);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(ToVector<float>(same[0].tensor()), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  KernelTester all("ReduceSum", 13);  // empty axes without noop: reduce everything
  all.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<int64_t>({0}, {}));
  auto total = RunAllCounts(all, kForceParallel);
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0].tensor().shape(), Shape({1, 1}));
  EXPECT_EQ(ToVector<float>(total[0].tensor()), (std::vector<float>{21}));
}

TEST(ReduceSum, ScalarInputReducesToItself) {
  KernelTester t("ReduceSum", 11);
  t.Input(MakeTensor<float>(Shape(), {2.5f}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape());
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{2.5f}));
}

// Reductions over an empty axis give each operator's identity (ONNX spec / numpy).
TEST(Reduce, EmptyAxisGivesIdentity) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* op;
    float expected;
  };
  for (const Case& c : {Case{"ReduceSum", 0.f}, Case{"ReduceProd", 1.f}, Case{"ReduceMax", -inf},
                        Case{"ReduceMin", inf}, Case{"ReduceL1", 0.f}, Case{"ReduceL2", 0.f},
                        Case{"ReduceSumSquare", 0.f}, Case{"ReduceLogSum", -inf}, Case{"ReduceLogSumExp", -inf}}) {
    KernelTester t(c.op, 18);
    t.Input(MakeTensor<float>({3, 0}, {})).Input(MakeTensor<int64_t>({1}, {1})).Attr("keepdims", int64_t{0});
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u) << c.op;
    EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>(3, c.expected))) << c.op;
  }
  KernelTester mean("ReduceMean", 18);
  mean.Input(MakeTensor<float>({2, 0}, {})).Input(MakeTensor<int64_t>({1}, {1}));
  auto out = RunAllCounts(mean, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  for (float v : ToVector<float>(out[0].tensor())) EXPECT_TRUE(std::isnan(v));
}

TEST(Reduce, EveryOperatorAgainstNaiveFormula) {
  const std::vector<int64_t> dims = {4, 6, 5};
  const auto x = Ramp(4 * 6 * 5, 0.9f);
  const std::vector<int> axes = {0, 2};
  const auto sum = NaiveReduce(AsDouble(x), dims, axes, 0.0, Add);
  const auto sumsq = NaiveReduce(AsDouble(x), dims, axes, 0.0, [](double a, double v) { return a + v * v; });
  const auto l1 = NaiveReduce(AsDouble(x), dims, axes, 0.0, [](double a, double v) { return a + std::fabs(v); });
  const auto mx = NaiveReduce(AsDouble(x), dims, axes, -1e300, [](double a, double v) { return std::max(a, v); });
  const auto mn = NaiveReduce(AsDouble(x), dims, axes, 1e300, [](double a, double v) { return std::min(a, v); });
  const auto prod = NaiveReduce(AsDouble(x), dims, axes, 1.0, [](double a, double v) { return a * v; });
  const auto sumexp = NaiveReduce(AsDouble(x), dims, axes, 0.0, [](double a, double v) { return a + std::exp(v); });
  auto map = [](std::vector<double> v, double (*f)(double)) {
    for (double& e : v) e = f(e);
    return v;
  };
  std::vector<double> mean = sum;
  for (double& m : mean) m /= 20.0;
  struct Case {
    const char* op;
    std::vector<double> expected;
    double tol;
  };
  const std::vector<Case> cases = {{"ReduceSum", sum, 1e-4},
                                   {"ReduceSumSquare", sumsq, 1e-3},
                                   {"ReduceL1", l1, 1e-4},
                                   {"ReduceL2", map(sumsq, std::sqrt), 1e-4},
                                   {"ReduceMean", mean, 1e-5},
                                   {"ReduceMax", mx, 0},
                                   {"ReduceMin", mn, 0},
                                   {"ReduceProd", prod, 1e-3 * std::fabs(prod[0]) + 1e-3},
                                   {"ReduceLogSumExp", map(sumexp, std::log), 1e-5}};
  for (const Case& c : cases) {
    KernelTester t(c.op, 18);
    t.Input(MakeTensor<float>(Shape(dims), x)).Input(MakeTensor<int64_t>({2}, {0, -1})).Attr("keepdims", int64_t{0});
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u) << c.op;
    SCOPED_TRACE(c.op);
    ExpectNear(ToVector<float>(out[0].tensor()), c.expected, c.tol);
  }
}

TEST(Reduce, AxesAttributeInOldOpsets) {
  KernelTester t("ReduceMean", 13);  // ReduceMean keeps axes as an attribute until opset 18
  t.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 5})).Attr("axes", std::vector<int64_t>{-2}).Attr("keepdims", int64_t{0});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{2, 3.5f}));
}

TEST(ReduceLogSumExp, LargeValuesDoNotOverflow) {
  KernelTester t("ReduceLogSumExp", 18);
  t.Input(MakeTensor<float>({2, 2}, {1000, 1000, -1000, -1000})).Input(MakeTensor<int64_t>({1}, {1}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto v = ToVector<float>(out[0].tensor());
  EXPECT_FLOAT_EQ(v[0], 1000.0f + std::log(2.0f));
  EXPECT_FLOAT_EQ(v[1], -1000.0f + std::log(2.0f));
}

// Low precision accumulates in float: 4096 * 0.1 in float16 arithmetic would stall at 256.
TEST(Reduce, Float16AndBFloat16AccumulateInFloat) {
  std::vector<Float16> h(4096, Float16::FromFloat(0.1f));
  KernelTester t("ReduceSum", 13);
  t.Input(MakeTensor<Float16>({4096}, h)).Attr("keepdims", int64_t{0});
  t.Tuning("algorithm.partial_chunk_elements", int64_t{64});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].tensor().data<Float16>()[0].ToFloat(), 4096 * Float16::FromFloat(0.1f).ToFloat(), 0.5);

  std::vector<BFloat16> b(1000, BFloat16::FromFloat(1.0f));
  KernelTester m("ReduceMean", 18);
  m.Input(MakeTensor<BFloat16>({10, 100}, b)).Input(MakeTensor<int64_t>({1}, {0}));
  auto mean = RunAllCounts(m, kForceParallel);
  ASSERT_EQ(mean.size(), 1u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(mean[0].tensor().data<BFloat16>()[i].ToFloat(), 1.0f);
}

// A large single run split into chunk partials: identical for every participant count and
// close to the exact sum.
TEST(ReduceSum, LargeAxisChunkPartialsAreDeterministic) {
  const int64_t n = 300001;
  const auto x = Ramp(n, 0.011f);
  for (int64_t rows : {1, 3}) {
    KernelTester t("ReduceSum", 13);
    std::vector<float> data;
    for (int64_t r = 0; r < rows; ++r) data.insert(data.end(), x.begin(), x.end());
    t.Input(MakeTensor<float>({rows, n}, data)).Input(MakeTensor<int64_t>({1}, {1}));
    t.Tuning("algorithm.partial_chunk_elements", int64_t{1000});
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u);
    double exact = 0;
    for (float v : x) exact += v;
    for (float v : ToVector<float>(out[0].tensor())) EXPECT_NEAR(v, exact, 1e-6 * n);
  }
}

TEST(Reduce, IntegerAndBoolTypes) {
  KernelTester sum("ReduceSum", 13);
  sum.Input(MakeTensor<int32_t>({2, 3}, {1, -2, 3, 4, 5, -6})).Input(MakeTensor<int64_t>({1}, {0}));
  auto s = RunAllCounts(sum, kForceParallel);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(ToVector<int32_t>(s[0].tensor()), (std::vector<int32_t>{5, 3, -3}));

  KernelTester any("ReduceMax", 20);
  any.Input(MakeTensor<bool>({2, 2}, {false, true, false, false})).Input(MakeTensor<int64_t>({1}, {1}));
  auto a = RunAllCounts(any, kForceParallel);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].tensor().data<bool>()[0], true);
  EXPECT_EQ(a[0].tensor().data<bool>()[1], false);

  KernelTester lowest("ReduceMin", 18);  // empty integer min: the type's maximum
  lowest.Input(MakeTensor<int8_t>({0, 2}, {})).Input(MakeTensor<int64_t>({1}, {0}));
  auto l = RunAllCounts(lowest, kForceParallel);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(ToVector<int8_t>(l[0].tensor()), (std::vector<int8_t>{127, 127}));
}

TEST(Reduce, BadAxesAreInvalidArgument) {
  for (const std::vector<int64_t>& axes :
       {std::vector<int64_t>{2}, std::vector<int64_t>{-3}, std::vector<int64_t>{1, -1}}) {
    KernelTester t("ReduceSum", 13);
    t.NodeName("sum7").Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
    t.Input(MakeTensor<int64_t>({static_cast<int64_t>(axes.size())}, axes));
    auto out = t.Run(1);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("sum7"), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find("[2,3]"), std::string::npos) << out.status().message();
  }
  KernelTester bad_axes_type("ReduceSum", 13);
  bad_axes_type.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({1}, {0}));
  EXPECT_EQ(bad_axes_type.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(ArgMax, TiesNanSelectLastAndStridedAxis) {
  KernelTester first("ArgMax", 13);
  first.Input(MakeTensor<float>({2, 4}, {1, 3, 3, 0, 2, 2, 1, 2})).Attr("axis", int64_t{1});
  auto f = RunAllCounts(first, kForceParallel);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].tensor().shape(), Shape({2, 1}));
  EXPECT_EQ(ToVector<int64_t>(f[0].tensor()), (std::vector<int64_t>{1, 0}));

  KernelTester last("ArgMax", 13);
  last.Input(MakeTensor<float>({2, 4}, {1, 3, 3, 0, 2, 2, 1, 2})).Attr("axis", int64_t{1});
  last.Attr("select_last_index", int64_t{1}).Attr("keepdims", int64_t{0});
  auto l = RunAllCounts(last, kForceParallel);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(ToVector<int64_t>(l[0].tensor()), (std::vector<int64_t>{2, 3}));

  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelTester strided("ArgMin", 13);  // axis 0 of [3, 2]: column-wise, NaN wins
  strided.Input(MakeTensor<float>({3, 2}, {5, 1, nan, 0, -1, 0})).Attr("axis", int64_t{0}).Attr("keepdims", int64_t{0});
  auto s = RunAllCounts(strided, kForceParallel);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(ToVector<int64_t>(s[0].tensor()), (std::vector<int64_t>{1, 1}));

  KernelTester bad("ArgMax", 13);
  bad.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Attr("axis", int64_t{2});
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// The serial/parallel choice follows parallel.minimum_elements; the chunk-partial path is
// taken for few long runs; a cancelled run stops with Cancelled.
TEST(ReduceSum, RegionsFollowTheThresholdAndCancellationStops) {
  const auto x = Ramp(8 * 4096);
  auto make = [&](int64_t rows) {
    auto t = std::make_unique<KernelTester>("ReduceSum", 13);
    t->Input(MakeTensor<float>({rows, 32768 / rows}, x)).Input(MakeTensor<int64_t>({1}, {1}));
    return t;
  };
  auto small = make(8);
  small->Tuning(param::kMinimumElements, int64_t{1} << 20);
  auto serial = small->RunWithDetails(4);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_TRUE(serial->regions.empty());

  auto many = make(256);
  many->Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{1});
  auto rows = many->RunWithDetails(4);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->regions.size(), 1u);
  EXPECT_STREQ(rows->regions[0].label, "reduce.outputs");
  EXPECT_GT(rows->regions[0].admitted_participants, 1);

  auto few = make(1);
  few->Tuning(param::kMinimumElements, int64_t{1}).Tuning("algorithm.partial_chunk_elements", int64_t{1024});
  auto partials = few->RunWithDetails(4);
  ASSERT_TRUE(partials.ok()) << partials.status().ToString();
  ASSERT_EQ(partials->regions.size(), 1u);
  EXPECT_STREQ(partials->regions[0].label, "reduce.partials");
  EXPECT_EQ(partials->regions[0].total, 32);
  EXPECT_GT(partials->peak_scratch, 0);

  CancellationToken cancel;
  cancel.Cancel();
  auto cancelled = many->RunWithDetails(4, &cancel);
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
