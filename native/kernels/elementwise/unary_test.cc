// Unary math, activations, predicates and Clip: values against libm formulas written out
// here, across participant counts.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "native/kernels/elementwise/test_util.h"

namespace onnx_light {
namespace elementwise {
namespace {

using namespace testing;

template <typename T>
Tensor RunUnary(const char* op, int opset, Tensor x, std::function<void(KernelTester&)> attrs = nullptr) {
  KernelTester t(op, opset);
  t.Input(std::move(x));
  if (attrs) attrs(t);
  return RunAllCounts(t);
}

// Relative error bound for float results computed by the vectorised paths.
constexpr double kFloatTolerance = 2e-6;

void ExpectClose(double got, double want, double tolerance, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, tolerance * std::max(1.0, std::fabs(want)) + 1e-30) << what;
}

struct FloatCase {
  const char* op;
  int opset;
  double low, high;
  std::function<double(double)> reference;
};

TEST(Unary, FloatFunctionsMatchReferences) {
  const std::vector<FloatCase> cases = {
      {"Abs", 13, -5, 5, [](double x) { return std::fabs(x); }},
      {"Neg", 13, -5, 5, [](double x) { return -x; }},
      {"Exp", 13, -87, 88, [](double x) { return std::exp(x); }},
      {"Log", 13, 1e-3, 1e3, [](double x) { return std::log(x); }},
      {"Sqrt", 13, 0, 100, [](double x) { return std::sqrt(x); }},
      {"Reciprocal", 13, 0.5, 4, [](double x) { return 1 / x; }},
      {"Floor", 13, -5, 5, [](double x) { return std::floor(x); }},
      {"Ceil", 13, -5, 5, [](double x) { return std::ceil(x); }},
      {"Sign", 13, -5, 5, [](double x) { return (x > 0) - (x < 0); }},
      {"Erf", 13, -4, 4, [](double x) { return std::erf(x); }},
      {"Sin", 7, -6, 6, [](double x) { return std::sin(x); }},
      {"Cos", 7, -6, 6, [](double x) { return std::cos(x); }},
      {"Tan", 7, -1.5, 1.5, [](double x) { return std::tan(x); }},
      {"Asin", 7, -1, 1, [](double x) { return std::asin(x); }},
      {"Acos", 7, -1, 1, [](double x) { return std::acos(x); }},
      {"Atan", 7, -9, 9, [](double x) { return std::atan(x); }},
      {"Sinh", 9, -5, 5, [](double x) { return std::sinh(x); }},
      {"Cosh", 9, -5, 5, [](double x) { return std::cosh(x); }},
      {"Asinh", 9, -5, 5, [](double x) { return std::asinh(x); }},
      {"Acosh", 9, 1, 9, [](double x) { return std::acosh(x); }},
      {"Atanh", 9, -0.99, 0.99, [](double x) { return std::atanh(x); }},
      {"Sigmoid", 13, -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", 13, -10, 10, [](double x) { return std::tanh(x); }},
      {"Relu", 14, -5, 5, [](double x) { return x > 0 ? x : 0; }},
      {"Softplus", 1, -20, 20, [](double x) { return std::log(std::exp(x) + 1); }},
      {"Softsign", 1, -20, 20, [](double x) { return x / (1 + std::fabs(x)); }},
      {"Mish", 18, -10, 10, [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }},
      {"HardSwish", 14, -5, 5, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }},
      {"Gelu", 20, -10, 10, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"Selu", 6, -5, 5,
       [](double x) {
         const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
         return x > 0 ? g * x : g * (a * std::exp(x) - a);
       }},
  };
  for (const auto& c : cases) {
    const int64_t n = 2000;
    auto x = RandomValues<float>(n, c.low, c.high, 11);
    Tensor out = RunUnary<float>(c.op, c.opset, MakeTensor<float>({n}, x));
    ASSERT_EQ(out.dtype(), DataType::kFloat) << c.op;
    for (int64_t i = 0; i < n; ++i) {
      ExpectClose(out.data<float>()[i], c.reference(x[i]), kFloatTolerance,
                  std::string(c.op) + " at " + std::to_string(x[i]));
    }
    // double computes in double.
    auto xd = RandomValues<double>(300, c.low, c.high, 12);
    Tensor outd = RunUnary<double>(c.op, c.opset, MakeTensor<double>({300}, xd));
    for (int64_t i = 0; i < 300; ++i) ExpectClose(outd.data<double>()[i], c.reference(xd[i]), 1e-12, c.op);
  }
}

TEST(Unary, AttributeActivations) {
  auto x = RandomValues<float>(1000, -4, 4);
  auto check = [&](const char* op, int opset, std::function<void(KernelTester&)> attrs,
                   std::function<double(double)> f) {
    Tensor out = RunUnary<float>(op, opset, MakeTensor<float>({1000}, x), attrs);
    for (int i = 0; i < 1000; ++i) ExpectClose(out.data<float>()[i], f(x[i]), kFloatTolerance, op);
  };
  check(
      "LeakyRelu", 16, [](KernelTester& t) { t.Attr("alpha", 0.1f); }, [](double v) { return v < 0 ? 0.1f * v : v; });
  check(
      "Elu", 6, [](KernelTester& t) { t.Attr("alpha", 2.0f); },
      [](double v) { return v < 0 ? 2 * (std::exp(v) - 1) : v; });
  check(
      "Celu", 12, [](KernelTester& t) { t.Attr("alpha", 2.0f); },
      [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); });
  check(
      "HardSigmoid", 6, [](KernelTester& t) { t.Attr("alpha", 0.25f).Attr("beta", 0.4f); },
      [](double v) { return std::max(0.0, std::min(1.0, double(0.25f) * v + double(0.4f))); });
  check(
      "ThresholdedRelu", 10, [](KernelTester& t) { t.Attr("alpha", 1.5f); }, [](double v) { return v > 1.5 ? v : 0; });
  check(
      "Swish", 24, [](KernelTester& t) { t.Attr("alpha", 0.5f); },
      [](double v) { return v / (1 + std::exp(-0.5 * v)); });
  check(
      "Shrink", 9, [](KernelTester& t) { t.Attr("lambd", 1.0f).Attr("bias", 0.5f); },
      [](double v) { return v < -1  ? v + 0.5
                            : v > 1 ? v - 0.5
                                    : 0; });
  check(
      "Gelu", 20, [](KernelTester& t) { t.Attr("approximate", std::string("tanh")); },
      [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); });
  KernelTester bad("Gelu", 20);
  bad.Input(MakeTensor<float>({1}, {1})).Attr("approximate", std::string("fast"));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(Unary, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {nan, inf, -inf, 0.0f, -0.0f};
  Tensor exp = RunUnary<float>("Exp", 13, MakeTensor<float>({5}, x));
  EXPECT_TRUE(std::isnan(exp.data<float>()[0]));
  EXPECT_EQ(exp.data<float>()[1], inf);
  EXPECT_EQ(exp.data<float>()[2], 0);
  EXPECT_EQ(exp.data<float>()[3], 1);
  Tensor sig = RunUnary<float>("Sigmoid", 13, MakeTensor<float>({5}, x));
  EXPECT_TRUE(std::isnan(sig.data<float>()[0]));
  EXPECT_EQ(sig.data<float>()[1], 1);
  EXPECT_EQ(sig.data<float>()[2], 0);
  Tensor tanh = RunUnary<float>("Tanh", 13, MakeTensor<float>({5}, x));
  EXPECT_TRUE(std::isnan(tanh.data<float>()[0]));
  EXPECT_EQ(tanh.data<float>()[1], 1);
  EXPECT_EQ(tanh.data<float>()[2], -1);
  Tensor relu = RunUnary<float>("Relu", 13, MakeTensor<float>({5}, x));
  EXPECT_TRUE(std::isnan(relu.data<float>()[0]));
  Tensor round = RunUnary<float>("Round", 11, MakeTensor<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f}));
  EXPECT_EQ(ToVector<float>(round), (std::vector<float>{0, 2, 2, -0.0f, -2, 2}));
}

TEST(Unary, IntegerPaths) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  Tensor abs = RunUnary<int32_t>("Abs", 13, MakeTensor<int32_t>({3}, {-5, 7, min}));
  EXPECT_EQ(ToVector<int32_t>(abs), (std::vector<int32_t>{5, 7, min}));
  Tensor neg = RunUnary<int8_t>("Neg", 13, MakeTensor<int8_t>({2}, {5, -128}));
  EXPECT_EQ(ToVector<int8_t>(neg), (std::vector<int8_t>{-5, -128}));
  Tensor sign = RunUnary<int64_t>("Sign", 13, MakeTensor<int64_t>({3}, {-9, 0, 4}));
  EXPECT_EQ(ToVector<int64_t>(sign), (std::vector<int64_t>{-1, 0, 1}));
  Tensor relu = RunUnary<int16_t>("Relu", 14, MakeTensor<int16_t>({2}, {-3, 3}));
  EXPECT_EQ(ToVector<int16_t>(relu), (std::vector<int16_t>{0, 3}));
  Tensor bnot = RunUnary<uint8_t>("BitwiseNot", 18, MakeTensor<uint8_t>({2}, {0, 0x0f}));
  EXPECT_EQ(ToVector<uint8_t>(bnot), (std::vector<uint8_t>{0xff, 0xf0}));
  Tensor shrink = RunUnary<int32_t>("Shrink", 9, MakeTensor<int32_t>({3}, {-5, 0, 5}),
                                    [](KernelTester& t) { t.Attr("lambd", 1.0f).Attr("bias", 2.0f); });
  EXPECT_EQ(ToVector<int32_t>(shrink), (std::vector<int32_t>{-3, 0, 3}));
  KernelTester relu_int_before_14("Relu", 13);
  relu_int_before_14.Input(MakeTensor<int32_t>({1}, {1}));
  EXPECT_FALSE(relu_int_before_14.Run(1).ok());
}

double GeluErf(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }
double GeluTanh(double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }

TEST(ContribGelu, MicrosoftGeluIsTheErfForm) {
  const auto x = RandomValues<float>(1000, -8, 8);
  KernelTester t("Gelu", 1, "com.microsoft");
  t.Input(MakeTensor<float>({10, 100}, x));
  Tensor out = RunAllCounts(t);
  for (int i = 0; i < 1000; ++i) ExpectClose(out.data<float>()[i], GeluErf(x[i]), kFloatTolerance, "Gelu");
}

TEST(ContribGelu, FastGeluIsTheTanhFormOfXPlusBias) {
  const auto x = RandomValues<float>(2 * 3 * 40, -6, 6);
  const auto bias = RandomValues<float>(40, -1, 1, /*seed=*/11);
  KernelTester with_bias("FastGelu", 1, "com.microsoft");
  with_bias.Input(MakeTensor<float>({2, 3, 40}, x)).Input(MakeTensor<float>({40}, bias));
  Tensor biased = RunAllCounts(with_bias);
  for (int i = 0; i < 240; ++i) {
    ExpectClose(biased.data<float>()[i], GeluTanh(double(x[i] + bias[i % 40])), kFloatTolerance, "FastGelu+bias");
  }
  KernelTester plain("FastGelu", 1, "com.microsoft");
  plain.Input(MakeTensor<float>({2, 3, 40}, x));
  Tensor unbiased = RunAllCounts(plain);
  for (int i = 0; i < 240; ++i) ExpectClose(unbiased.data<float>()[i], GeluTanh(x[i]), kFloatTolerance, "FastGelu");
}

TEST(ContribGelu, FastGeluRejectsABiasThatIsNotTheLastDimension) {
  KernelTester t("FastGelu", 1, "com.microsoft");
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<float>({2}, {1, 2}));
  auto result = t.Run(1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().ToString().find("FastGelu"), std::string::npos) << result.status().ToString();
  EXPECT_NE(result.status().ToString().find("[2,3]"), std::string::npos) << result.status().ToString();
}

TEST(Unary, Float16AndBFloat16ThroughFloat) {
  const int64_t n = 700;
  auto xf = RandomValues<float>(n, -6, 6);
  std::vector<Float16> h(n);
  std::vector<BFloat16> b(n);
  for (int64_t i = 0; i < n; ++i) {
    h[i] = Float16::FromFloat(xf[i]);
    b[i] = BFloat16::FromFloat(xf[i]);
  }
  Tensor sh = RunUnary<Float16>("Sigmoid", 13, MakeTensor<Float16>({n}, h));
  Tensor sb = RunUnary<BFloat16>("Gelu", 20, MakeTensor<BFloat16>({n}, b));
  for (int64_t i = 0; i < n; ++i) {
    const double xh = h[i].ToFloat(), xb = b[i].ToFloat();
    EXPECT_NEAR(sh.data<Float16>()[i].ToFloat(), 1 / (1 + std::exp(-xh)), 1e-3);
    const double gelu = 0.5 * xb * (1 + std::erf(xb / std::sqrt(2.0)));
    EXPECT_NEAR(sb.data<BFloat16>()[i].ToFloat(), gelu, 1e-2 * std::max(1.0, std::fabs(gelu)));
  }
}

TEST(Predicates, IsNaNIsInfNot) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto bools = [](const Tensor& t) { return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.num_elements()); };
  const std::vector<float> x = {1, nan, inf, -inf};
  EXPECT_EQ(bools(RunUnary<float>("IsNaN", 13, MakeTensor<float>({4}, x))), (std::vector<bool>{0, 1, 0, 0}));
  EXPECT_EQ(bools(RunUnary<float>("IsInf", 10, MakeTensor<float>({4}, x))), (std::vector<bool>{0, 0, 1, 1}));
  EXPECT_EQ(bools(RunUnary<float>("IsInf", 10, MakeTensor<float>({4}, x),
                                  [](KernelTester& t) { t.Attr("detect_negative", int64_t{0}); })),
            (std::vector<bool>{0, 0, 1, 0}));
  // float8e4m3fn has NaN (0x7f) but no infinity.
  const std::vector<Float8E4M3FN> f8 = {Float8E4M3FN::FromBits(0x7f), Float8E4M3FN::FromBits(0x38)};
  EXPECT_EQ(bools(RunUnary<Float8E4M3FN>("IsNaN", 20, MakeTensor<Float8E4M3FN>({2}, f8))), (std::vector<bool>{1, 0}));
  EXPECT_EQ(bools(RunUnary<bool>("Not", 1, MakeTensor<bool>({2}, {true, false}))), (std::vector<bool>{0, 1}));
}

TEST(Clip, InputsAttributesAndInvertedBounds) {
  auto x = RandomValues<float>(1000, -3, 3);
  KernelTester t("Clip", 13);
  t.Input(MakeTensor<float>({1000}, x)).Input(MakeTensor<float>({}, {-1})).Input(MakeTensor<float>({}, {2}));
  Tensor out = RunAllCounts(t);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(out.data<float>()[i], std::min(2.0f, std::max(-1.0f, x[i])));
  KernelTester only_max("Clip", 13);
  only_max.Input(MakeTensor<int32_t>({3}, {-9, 0, 9})).MissingInput().Input(MakeTensor<int32_t>({}, {1}));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(only_max)), (std::vector<int32_t>{-9, 0, 1}));
  KernelTester attrs("Clip", 6);
  attrs.Input(MakeTensor<float>({3}, {-9, 0, 9})).Attr("min", -1.0f).Attr("max", 1.0f);
  EXPECT_EQ(ToVector<float>(RunAllCounts(attrs)), (std::vector<float>{-1, 0, 1}));
  KernelTester inverted("Clip", 13);
  inverted.Input(MakeTensor<float>({2}, {-9, 9})).Input(MakeTensor<float>({}, {3})).Input(MakeTensor<float>({}, {1}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(inverted)), (std::vector<float>{1, 1}));
  KernelTester bad("Clip", 13);
  bad.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({2}, {0, 0}));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
