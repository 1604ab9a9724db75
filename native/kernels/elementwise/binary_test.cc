// Add, Sub, Mul, Div, Mod, Pow, PRelu, Sum, Mean, Min, Max.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/elementwise/test_util.h"

namespace onnx_light {
namespace elementwise {
namespace {

using namespace testing;

template <typename T>
Tensor RunBinary(const char* op, int opset, Tensor a, Tensor b) {
  KernelTester t(op, opset);
  t.Input(std::move(a)).Input(std::move(b));
  return RunAllCounts(t);
}

TEST(Add, SameShapeFloatAcrossParticipantCounts) {
  const int64_t n = 5000;
  auto a = RandomValues<float>(n, -10, 10, 1);
  auto b = RandomValues<float>(n, -10, 10, 2);
  Tensor out = RunBinary<float>("Add", 14, MakeTensor<float>({n}, a), MakeTensor<float>({n}, b));
  ASSERT_EQ(out.shape(), Shape{n});
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out.data<float>()[i], a[i] + b[i]);
}

// Called from inside another region, the kernel's own region runs inline on the calling
// thread (no deadlock, no oversubscription) and gives the same bytes.
TEST(Add, NestedInsideAnotherRegion) {
  const int64_t n = 3000;
  auto a = RandomValues<float>(n, -10, 10, 5);
  auto b = RandomValues<float>(n, -10, 10, 6);
  auto make = [&] {
    auto t = std::make_unique<KernelTester>("Add", 14);
    t->Input(MakeTensor<float>({n}, a)).Input(MakeTensor<float>({n}, b));
    t->Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
    return t;
  };
  auto serial_tester = make();  // owns the allocator of the reference output
  auto reference = serial_tester->Run(1);
  ASSERT_TRUE(reference.ok());
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  auto outer = ExecutorRegistry::Global().Acquire(policy);
  ASSERT_TRUE(outer.ok());
  std::vector<std::unique_ptr<KernelTester>> testers;
  testers.push_back(make());
  testers.push_back(make());
  std::vector<std::vector<Value>> outputs(2);
  ParallelContext ctx{outer->get(), nullptr, nullptr, "outer"};
  Status s = ParallelFor(ctx, 2, ParallelPlan{"outer", 1}, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      auto r = testers[i]->Run(4);
      if (!r.ok()) return r.status();
      outputs[i] = std::move(*r);
    }
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const auto& out : outputs) ExpectIdentical(reference->at(0), out.at(0), "nested");
}

TEST(Add, BroadcastChannelBiasAndScalar) {
  // [2, 3, 40] + [3, 1]: element (n, c, k) adds bias[c].
  auto a = RandomValues<float>(240, -1, 1);
  std::vector<float> bias = {100, 200, 300};
  Tensor out = RunBinary<float>("Add", 14, MakeTensor<float>({2, 3, 40}, a), MakeTensor<float>({3, 1}, bias));
  ASSERT_EQ(out.shape(), (Shape{2, 3, 40}));
  for (int64_t i = 0; i < 240; ++i) EXPECT_EQ(out.data<float>()[i], a[i] + bias[(i / 40) % 3]);

  // A rank-0 scalar on the left.
  Tensor s = RunBinary<float>("Sub", 14, MakeTensor<float>({}, {1.5f}), MakeTensor<float>({240}, a));
  for (int64_t i = 0; i < 240; ++i) EXPECT_EQ(s.data<float>()[i], 1.5f - a[i]);
}

TEST(Add, OuterProductBothSidesBroadcast) {
  std::vector<int32_t> col(70), row(30);
  for (int i = 0; i < 70; ++i) col[i] = i * 1000;
  for (int j = 0; j < 30; ++j) row[j] = j;
  Tensor out = RunBinary<int32_t>("Add", 14, MakeTensor<int32_t>({70, 1}, col), MakeTensor<int32_t>({1, 30}, row));
  ASSERT_EQ(out.shape(), (Shape{70, 30}));
  for (int i = 0; i < 70; ++i)
    for (int j = 0; j < 30; ++j) EXPECT_EQ(out.data<int32_t>()[i * 30 + j], i * 1000 + j);
}

TEST(Add, EmptyTensorsAndSizeOneAxes) {
  Tensor empty = RunBinary<float>("Add", 14, MakeTensor<float>({0, 3}, {}), MakeTensor<float>({1, 3}, {1, 2, 3}));
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  Tensor ones = RunBinary<float>("Mul", 14, MakeTensor<float>({1, 1, 1}, {3}), MakeTensor<float>({1}, {4}));
  EXPECT_EQ(ones.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(ones.data<float>()[0], 12);
}

TEST(Add, IncompatibleShapesAreInvalidArgumentNamingBoth) {
  KernelTester t("Add", 14);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<float>({2}, {1, 2}));
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("[2,3]"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("[2]"), std::string::npos);
}

TEST(Add, MixedTypesAndUnsupportedTypesAreErrors) {
  KernelTester mixed("Add", 14);
  mixed.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<double>({1}, {1}));
  EXPECT_EQ(mixed.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester strings("Add", 14);
  strings.Input(MakeTensor<std::string>({1}, {"a"})).Input(MakeTensor<std::string>({1}, {"b"}));
  EXPECT_FALSE(strings.Run(1).ok());
}

TEST(Add, IntegerOverflowWraps) {
  Tensor out = RunBinary<int8_t>("Add", 14, MakeTensor<int8_t>({2}, {127, -128}), MakeTensor<int8_t>({2}, {1, -1}));
  EXPECT_EQ(ToVector<int8_t>(out), (std::vector<int8_t>{-128, 127}));
  Tensor mul = RunBinary<int32_t>("Mul", 14, MakeTensor<int32_t>({1}, {65536}), MakeTensor<int32_t>({1}, {65536}));
  EXPECT_EQ(mul.data<int32_t>()[0], 0);
  Tensor mul16 = RunBinary<uint16_t>("Mul", 14, MakeTensor<uint16_t>({1}, {65535}), MakeTensor<uint16_t>({1}, {65535}));
  EXPECT_EQ(mul16.data<uint16_t>()[0], 1);
}

TEST(Add, NaNAndInfinityPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor out =
      RunBinary<float>("Add", 14, MakeTensor<float>({3}, {inf, nan, inf}), MakeTensor<float>({3}, {1, 1, -inf}));
  EXPECT_EQ(out.data<float>()[0], inf);
  EXPECT_TRUE(std::isnan(out.data<float>()[1]));
  EXPECT_TRUE(std::isnan(out.data<float>()[2]));
}

TEST(Add, Float16AndBFloat16ComputeInFloat) {
  Tensor h =
      RunBinary<Float16>("Add", 14, MakeTensor<Float16>({2}, {Float16::FromFloat(1.5f), Float16::FromFloat(65504)}),
                         MakeTensor<Float16>({2}, {Float16::FromFloat(0.25f), Float16::FromFloat(65504)}));
  EXPECT_EQ(h.data<Float16>()[0].ToFloat(), 1.75f);
  EXPECT_TRUE(std::isinf(h.data<Float16>()[1].ToFloat()));
  Tensor b = RunBinary<BFloat16>("Mul", 14, MakeTensor<BFloat16>({1}, {BFloat16::FromFloat(3)}),
                                 MakeTensor<BFloat16>({1}, {BFloat16::FromFloat(-0.5f)}));
  EXPECT_EQ(b.data<BFloat16>()[0].ToFloat(), -1.5f);
}

TEST(Add, LegacyBroadcastAttributesBeforeOpset7) {
  KernelTester t("Add", 6);
  t.Input(MakeTensor<float>({2, 3}, {0, 1, 2, 3, 4, 5})).Input(MakeTensor<float>({2}, {10, 20}));
  t.Attr("broadcast", int64_t{1}).Attr("axis", int64_t{0});
  Tensor out = RunAllCounts(t);
  EXPECT_EQ(ToVector<float>(out), (std::vector<float>{10, 11, 12, 23, 24, 25}));
  KernelTester strict("Add", 6);
  strict.Input(MakeTensor<float>({2, 3}, {0, 1, 2, 3, 4, 5})).Input(MakeTensor<float>({3}, {1, 2, 3}));
  EXPECT_EQ(strict.Run(1).status().code(), StatusCode::kInvalidArgument);  // broadcast defaults to 0
}

TEST(Div, IntegerDivisionByZeroAndMinOverMinusOne) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  Tensor out = RunBinary<int32_t>("Div", 14, MakeTensor<int32_t>({4}, {7, -7, min, 5}),
                                  MakeTensor<int32_t>({4}, {0, 2, -1, -2}));
  EXPECT_EQ(ToVector<int32_t>(out), (std::vector<int32_t>{0, -3, min, -2}));
  Tensor u = RunBinary<uint8_t>("Div", 14, MakeTensor<uint8_t>({2}, {200, 9}), MakeTensor<uint8_t>({2}, {0, 4}));
  EXPECT_EQ(ToVector<uint8_t>(u), (std::vector<uint8_t>{0, 2}));
  Tensor f = RunBinary<float>("Div", 14, MakeTensor<float>({2}, {1, -1}), MakeTensor<float>({2}, {0, 0}));
  EXPECT_EQ(f.data<float>()[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f.data<float>()[1], -std::numeric_limits<float>::infinity());
}

TEST(Mod, IntegerSignRulesBothModes) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 5, std::numeric_limits<int32_t>::min()};
  const std::vector<int32_t> b = {3, 3, -3, -3, 0, -1};
  KernelTester floor_mod("Mod", 13);
  floor_mod.Input(MakeTensor<int32_t>({6}, a)).Input(MakeTensor<int32_t>({6}, b));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(floor_mod)), (std::vector<int32_t>{1, 2, -2, -1, 0, 0}));
  KernelTester truncating("Mod", 13);
  truncating.Input(MakeTensor<int32_t>({6}, a)).Input(MakeTensor<int32_t>({6}, b)).Attr("fmod", int64_t{1});
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(truncating)), (std::vector<int32_t>{1, -1, 1, -1, 0, 0}));
}

TEST(Mod, FloatModes) {
  const float inf = std::numeric_limits<float>::infinity();
  KernelTester t("Mod", 13);
  t.Input(MakeTensor<float>({4}, {5.5f, -5.5f, -1, 3})).Input(MakeTensor<float>({4}, {2, 2, inf, 0}));
  t.Attr("fmod", int64_t{1});
  Tensor out = RunAllCounts(t);
  EXPECT_EQ(out.data<float>()[0], 1.5f);
  EXPECT_EQ(out.data<float>()[1], -1.5f);
  EXPECT_EQ(out.data<float>()[2], -1);
  EXPECT_TRUE(std::isnan(out.data<float>()[3]));
  KernelTester floor_mod("Mod", 28);
  floor_mod.Input(MakeTensor<float>({3}, {-5.5f, -1, 1})).Input(MakeTensor<float>({3}, {2, inf, -inf}));
  Tensor f = RunAllCounts(floor_mod);
  EXPECT_EQ(f.data<float>()[0], 0.5f);
  EXPECT_EQ(f.data<float>()[1], inf);  // signs differ: y is returned
  EXPECT_EQ(f.data<float>()[2], -inf);
}

TEST(Pow, MixedBaseAndExponentTypes) {
  KernelTester f("Pow", 15);
  f.Input(MakeTensor<float>({3}, {2, 9, -2})).Input(MakeTensor<int64_t>({3}, {10, 0, 3}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(f)), (std::vector<float>{1024, 1, -8}));
  KernelTester i("Pow", 15);
  i.Input(MakeTensor<int32_t>({5}, {3, -3, 2, -1, 0})).Input(MakeTensor<int32_t>({5}, {4, 3, -1, -3, -2}));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(i)), (std::vector<int32_t>{81, -27, 0, -1, 0}));
  KernelTester if_("Pow", 15);
  if_.Input(MakeTensor<int64_t>({2}, {4, 2})).Input(MakeTensor<float>({2}, {0.5f, 100.0f}));
  EXPECT_EQ(ToVector<int64_t>(RunAllCounts(if_)), (std::vector<int64_t>{2, std::numeric_limits<int64_t>::max()}));
}

TEST(Pow, BroadcastExponentMatchesLibm) {
  auto base = RandomValues<double>(3000, 0.1, 3);
  Tensor out =
      RunBinary<double>("Pow", 15, MakeTensor<double>({1000, 3}, base), MakeTensor<double>({3}, {0.5, 2, -1.5}));
  const double e[3] = {0.5, 2, -1.5};
  for (int64_t k = 0; k < 3000; ++k) EXPECT_EQ(out.data<double>()[k], std::pow(base[k], e[k % 3]));
}

TEST(PRelu, SlopeBroadcastsToInput) {
  auto x = RandomValues<float>(2 * 3 * 50, -1, 1);
  Tensor out =
      RunBinary<float>("PRelu", 16, MakeTensor<float>({2, 3, 50}, x), MakeTensor<float>({3, 1}, {0.1f, 0.2f, 0.3f}));
  const float slope[3] = {0.1f, 0.2f, 0.3f};
  for (int64_t k = 0; k < 300; ++k) {
    EXPECT_EQ(out.data<float>()[k], x[k] < 0 ? x[k] * slope[(k / 50) % 3] : x[k]);
  }
  KernelTester bad("PRelu", 16);
  bad.Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);  // slope may not grow X
}

TEST(Variadic, SumMeanMinMaxBroadcastAcrossThreeInputs) {
  auto a = RandomValues<float>(4 * 300, -5, 5, 3);
  auto b = RandomValues<float>(300, -5, 5, 4);
  const std::vector<float> c = {1, 2, 3, 4};
  auto run = [&](const char* op) {
    KernelTester t(op, 13);
    t.Input(MakeTensor<float>({4, 300}, a)).Input(MakeTensor<float>({300}, b)).Input(MakeTensor<float>({4, 1}, c));
    return RunAllCounts(t);
  };
  Tensor sum = run("Sum"), mean = run("Mean"), min = run("Min"), max = run("Max");
  for (int64_t k = 0; k < 1200; ++k) {
    const float x = a[k], y = b[k % 300], z = c[k / 300];
    EXPECT_EQ(sum.data<float>()[k], (x + y) + z);
    EXPECT_EQ(mean.data<float>()[k], ((x + y) + z) / 3);
    EXPECT_EQ(min.data<float>()[k], std::min(std::min(x, y), z));
    EXPECT_EQ(max.data<float>()[k], std::max(std::max(x, y), z));
  }
}

TEST(Variadic, SingleInputCopiesAndNaNPropagates) {
  KernelTester one("Sum", 13);
  one.Input(MakeTensor<double>({3}, {1, 2, 3}));
  EXPECT_EQ(ToVector<double>(RunAllCounts(one)), (std::vector<double>{1, 2, 3}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Min", "Max"}) {
    KernelTester t(op, 13);
    t.Input(MakeTensor<float>({2}, {nan, 1})).Input(MakeTensor<float>({2}, {1, nan}));
    Tensor out = RunAllCounts(t);
    EXPECT_TRUE(std::isnan(out.data<float>()[0])) << op;
    EXPECT_TRUE(std::isnan(out.data<float>()[1])) << op;
  }
  KernelTester ints("Max", 13);
  ints.Input(MakeTensor<uint64_t>({2}, {1, ~uint64_t{0}})).Input(MakeTensor<uint64_t>({1}, {5}));
  EXPECT_EQ(ToVector<uint64_t>(RunAllCounts(ints)), (std::vector<uint64_t>{5, ~uint64_t{0}}));
}

TEST(Variadic, BeforeOpset8ShapesMustMatch) {
  KernelTester t("Sum", 6);
  t.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({1}, {1}));
  EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
