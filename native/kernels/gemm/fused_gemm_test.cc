// com.microsoft FusedGemm against Gemm followed by the separate activation kernel, bit for
// bit (the epilogue runs each activation in its kernel's arithmetic order, Sigmoid/Tanh on
// the same simd/math.h lanes), on the tiled path, the GEMV paths (M == 1, N == 1), K == 0,
// transposes, broadcast C and a constant (prepacked) B; parallel runs bit-identical to the
// serial one. FusedGemm's extensions for MatMul + Add (A of rank > 2, a row C as a bias in
// the epilogue) against MatMul, Add and the activation kernel, bit for bit. The epilogue's Sigmoid/Tanh span variants
// against the exact portable ones; every variant's one-pass run (adds, then the activation)
// against the scalar formulas bit for bit, and against its own spans for the transcendental ones.
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

std::vector<float> Random(int64_t n, uint32_t seed) { return testing::RandomFloats(n, seed, -2.0f, 2.0f); }

struct ActivationCase {
  const char* name;
  float alpha, beta;  // activation_alpha/beta (NaN: not given)
  const char* op;     // the separate kernel
  int opset;
  void (*attrs)(KernelTester&);
};

const float kUnset = std::nanf("");

const ActivationCase kActivations[] = {
    {"Relu", kUnset, kUnset, "Relu", 14, nullptr},
    {"LeakyRelu", 0.2f, kUnset, "LeakyRelu", 16, [](KernelTester& t) { t.Attr("alpha", 0.2f); }},
    {"Sigmoid", kUnset, kUnset, "Sigmoid", 13, nullptr},
    {"Tanh", kUnset, kUnset, "Tanh", 13, nullptr},
    {"HardSigmoid", 0.25f, 0.6f, "HardSigmoid", 6, [](KernelTester& t) { t.Attr("alpha", 0.25f).Attr("beta", 0.6f); }},
    {"HardSwish", kUnset, kUnset, "HardSwish", 14, nullptr},
    {"Swish", kUnset, kUnset, "Swish", 24, nullptr},  // alpha 1: SiLU
    {"Gelu", kUnset, kUnset, "Gelu", 20, nullptr},
    {"FastGelu", kUnset, kUnset, "Gelu", 20, [](KernelTester& t) { t.Attr("approximate", std::string("tanh")); }},
};

void PrintTo(const ActivationCase& a, std::ostream* os) { *os << "activation '" << a.name << "'"; }

struct GemmCase {
  const char* name;
  int64_t m, n, k;
  bool trans_a, trans_b;
  std::vector<int64_t> c_shape;  // empty: no C
};

const GemmCase kCases[] = {
    {"tiled", 37, 53, 29, false, false, {53}},       {"tiled_transposed", 64, 70, 130, true, true, {64, 1}},
    {"gemv_row", 1, 300, 40, false, true, {1, 300}}, {"gemv_column", 90, 1, 33, true, false, {}},
    {"empty_k", 5, 6, 0, false, false, {5, 6}},
};

void GemmInputs(KernelTester& t, const GemmCase& c, bool constant_b) {
  t.Input(MakeTensor<float>(c.trans_a ? Shape({c.k, c.m}) : Shape({c.m, c.k}), Random(c.m * c.k, 1)));
  const Tensor b = MakeTensor<float>(c.trans_b ? Shape({c.n, c.k}) : Shape({c.k, c.n}), Random(c.k * c.n, 2));
  if (constant_b) {
    t.ConstantInput(b);
  } else {
    t.Input(b);
  }
  if (!c.c_shape.empty()) {
    int64_t count = 1;
    for (int64_t d : c.c_shape) count *= d;
    t.Input(MakeTensor<float>(Shape(c.c_shape), Random(count, 3)));
  }
  t.Attr("transA", int64_t{c.trans_a}).Attr("transB", int64_t{c.trans_b}).Attr("alpha", 0.75f).Attr("beta", 1.5f);
}

Tensor Output(KernelTester& t) {
  auto out = t.Run(1);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->at(0).tensor() : Tensor();
}

class FusedGemmTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(FusedGemmTest, EqualsGemmThenActivationBitForBit) {
  const ActivationCase& a = GetParam();
  for (const GemmCase& c : kCases) {
    KernelTester gemm("Gemm", 13);
    GemmInputs(gemm, c, false);
    KernelTester act(a.op, a.opset);
    act.Input(Output(gemm));
    if (a.attrs != nullptr) a.attrs(act);
    const std::vector<float> want = ToVector<float>(Output(act));
    for (bool constant_b : {false, true}) {
      KernelTester fused("FusedGemm", 1, "com.microsoft");
      GemmInputs(fused, c, constant_b);
      fused.Attr("activation", std::string(a.name));
      if (!std::isnan(a.alpha)) fused.Attr("activation_alpha", a.alpha);
      if (!std::isnan(a.beta)) fused.Attr("activation_beta", a.beta);
      fused.Tuning(param::kMinimumTasks, int64_t{1});
      const std::vector<float> got = testing::SerialMatchesParticipants<float>(fused, Shape({c.m, c.n}));
      ASSERT_EQ(got.size(), want.size()) << c.name;
      for (size_t i = 0; i < got.size(); ++i) {
        uint32_t g, e;
        std::memcpy(&g, &got[i], 4);
        std::memcpy(&e, &want[i], 4);
        ASSERT_EQ(g, e) << c.name << " " << a.name << " constant B " << constant_b << " at " << i << ": " << got[i]
                        << " vs " << want[i];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, FusedGemmTest, ::testing::ValuesIn(kActivations),
                         [](const ::testing::TestParamInfo<ActivationCase>& info) {
                           return std::string(info.param.name);
                         });

// MatMul + Add [+ activation] as transformers have it, fused (graph_rewrites'
// fuse_matmul_add_into_gemm): A [..., K] flattened into M, B [K, N], C one row of N with
// beta 1 (a bias, added in the epilogue). Equal bit for bit to MatMul, then Add, then the
// activation kernel, on the tiled path (several K blocks), GEMV rows (M == 1) and columns
// (N == 1), with B fed or constant (prepacked), for every participant count.
struct MatMulAddCase {
  const char* name;
  std::vector<int64_t> a_shape;  // [..., K]
  int64_t n;
  std::vector<int64_t> bias_shape;
};

const MatMulAddCase kMatMulAddCases[] = {
    {"projection_3d", {2, 17, 300}, 70, {70}}, {"row_bias_4d", {2, 3, 5, 64}, 33, {1, 1, 33}},
    {"matrix_2d", {37, 129}, 53, {1, 53}},     {"gemv_row", {1, 1, 257}, 300, {300}},
    {"gemv_column", {3, 30, 40}, 1, {1}},
};

std::vector<float> MatMulAddThen(const MatMulAddCase& c, const ActivationCase* a) {
  int64_t k = c.a_shape.back(), rows = 1, bias_count = 1;
  for (int64_t d : c.a_shape) rows *= d;
  for (int64_t d : c.bias_shape) bias_count *= d;
  KernelTester matmul("MatMul", 13);
  matmul.Input(MakeTensor<float>(Shape(c.a_shape), Random(rows, 1)))
      .Input(MakeTensor<float>({k, c.n}, Random(k * c.n, 2)));
  KernelTester add("Add", 14);
  add.Input(Output(matmul)).Input(MakeTensor<float>(Shape(c.bias_shape), Random(bias_count, 3)));
  if (a == nullptr) return ToVector<float>(Output(add));
  KernelTester act(a->op, a->opset);
  act.Input(Output(add));
  if (a->attrs != nullptr) a->attrs(act);
  return ToVector<float>(Output(act));
}

std::vector<float> FusedMatMulAdd(const MatMulAddCase& c, const ActivationCase* a, bool constant_b) {
  int64_t k = c.a_shape.back(), rows = 1, bias_count = 1;
  for (int64_t d : c.a_shape) rows *= d;
  for (int64_t d : c.bias_shape) bias_count *= d;
  KernelTester fused("FusedGemm", 1, "com.microsoft");
  fused.Input(MakeTensor<float>(Shape(c.a_shape), Random(rows, 1)));
  const Tensor b = MakeTensor<float>({k, c.n}, Random(k * c.n, 2));
  if (constant_b) {
    fused.ConstantInput(b);
  } else {
    fused.Input(b);
  }
  fused.Input(MakeTensor<float>(Shape(c.bias_shape), Random(bias_count, 3)));
  if (a != nullptr) {
    fused.Attr("activation", std::string(a->name));
    if (!std::isnan(a->alpha)) fused.Attr("activation_alpha", a->alpha);
    if (!std::isnan(a->beta)) fused.Attr("activation_beta", a->beta);
  }
  fused.Tuning(param::kMinimumTasks, int64_t{1});
  std::vector<int64_t> y_shape(c.a_shape.begin(), c.a_shape.end() - 1);
  y_shape.push_back(c.n);
  return testing::SerialMatchesParticipants<float>(fused, Shape(y_shape));
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t g, e;
    std::memcpy(&g, &got[i], 4);
    std::memcpy(&e, &want[i], 4);
    ASSERT_EQ(g, e) << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST_P(FusedGemmTest, MatMulAddWithActivationEqualsTheSeparateKernelsBitForBit) {
  const ActivationCase& a = GetParam();
  for (const MatMulAddCase& c : kMatMulAddCases) {
    const std::vector<float> want = MatMulAddThen(c, &a);
    for (bool constant_b : {false, true}) {
      ExpectSameBits(FusedMatMulAdd(c, &a, constant_b), want,
                     std::string(c.name) + " " + a.name + (constant_b ? " constant B" : " fed B"));
    }
  }
}

TEST(FusedGemm, MatMulAddWithoutActivationEqualsMatMulThenAddBitForBit) {
  for (const MatMulAddCase& c : kMatMulAddCases) {
    const std::vector<float> want = MatMulAddThen(c, nullptr);
    for (bool constant_b : {false, true}) {
      ExpectSameBits(FusedMatMulAdd(c, nullptr, constant_b), want,
                     std::string(c.name) + (constant_b ? " constant B" : " fed B"));
    }
  }
}

TEST(FusedGemm, HandComputedBiasOnA3dInput) {
  // A [2, 1, 2] = rows [1, 2], [3, 4]; B = identity; bias [10, -20]; Relu:
  // [11, -18] -> [11, 0], [13, -16] -> [13, 0].
  KernelTester t("FusedGemm", 1, "com.microsoft");
  t.Input(MakeTensor<float>({2, 1, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>({2, 2}, {1, 0, 0, 1}))
      .Input(MakeTensor<float>({2}, {10, -20}))
      .Attr("activation", std::string("Relu"));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), Shape({2, 1, 2}));
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{11, 0, 13, 0}));
}

TEST(FusedGemm, ScalarCAndBetaOnA3dInputBroadcastOverEveryRow) {
  // beta 2 (not a bias): Y = A B + 2 C with C [1, 1, 1] = 0.5: every element + 1.
  KernelTester t("FusedGemm", 1, "com.microsoft");
  t.Input(MakeTensor<float>({2, 2, 1}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>({1, 2}, {1, -1}))
      .Input(MakeTensor<float>({1, 1, 1}, {0.5f}))
      .Attr("beta", 2.0f);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), Shape({2, 2, 2}));
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{2, 0, 3, -1, 4, -2, 5, -3}));
}

TEST(FusedGemm, A3dInputRejectsACThatBroadcastsOverItsAxesAndATransposedA) {
  struct Bad {
    std::vector<int64_t> c_shape;
    int64_t trans_a;
    const char* expected;  // in the message
  };
  for (const Bad& bad : {Bad{{3, 4}, 0, "[3,4]"}, Bad{{2, 1, 4}, 0, "[2,1,4]"}, Bad{{4}, 1, "transA 0"}}) {
    int64_t count = 1;
    for (int64_t d : bad.c_shape) count *= d;
    KernelTester t("FusedGemm", 1, "com.microsoft");
    t.NodeName("proj7")
        .Input(MakeTensor<float>({2, 3, 5}, Random(30, 1)))
        .Input(MakeTensor<float>({5, 4}, Random(20, 2)))
        .Input(MakeTensor<float>(Shape(bad.c_shape), Random(count, 3)))
        .Attr("transA", bad.trans_a);
    auto out = t.Run(1);
    ASSERT_FALSE(out.ok()) << bad.expected;
    const std::string message = out.status().ToString();
    EXPECT_NE(message.find("proj7"), std::string::npos) << message;
    EXPECT_NE(message.find(bad.expected), std::string::npos) << message;
  }
}

TEST(Gemm, StillRejectsA3dInput) {
  KernelTester t("Gemm", 13);
  t.NodeName("g3").Input(MakeTensor<float>({2, 3, 5}, Random(30, 1))).Input(MakeTensor<float>({5, 4}, Random(20, 2)));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("must be 2-D"), std::string::npos) << out.status().ToString();
}

TEST(FusedGemm, HandComputedRelu) {
  // A = [[1, -2]], B = [[1, 0], [0, 1]] (identity), no C: relu([1, -2]) = [1, 0].
  KernelTester t("FusedGemm", 1, "com.microsoft");
  t.Input(MakeTensor<float>({2, 2}, {1, -2, -3, 4}))
      .Input(MakeTensor<float>({2, 2}, {1, 0, 0, 1}))
      .Attr("activation", std::string("Relu"));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{1, 0, 0, 4}));
}

TEST(FusedGemm, UnknownActivationIsAnErrorNamingItAndTheNode) {
  for (const char* name : {"Softplus", "Clip"}) {
    KernelTester t("FusedGemm", 1, "com.microsoft");
    t.NodeName("fg3")
        .Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4}))
        .Input(MakeTensor<float>({2, 2}, {1, 0, 0, 1}))
        .Attr("activation", std::string(name));
    auto out = t.Run(1);
    ASSERT_FALSE(out.ok()) << name;
    const std::string message = out.status().ToString();
    EXPECT_NE(message.find(std::string("'") + name + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("fg3"), std::string::npos) << message;
  }
}

// Every span variant against the exact portable one (libm in double) within simd/math.h's
// stated accuracy (~2e-7 relative, the unary family's vector_math bound), over values that
// cross every branch (|x| below 0.625 for tanh's polynomial, large |x| saturating, zeros).
class EpilogueSpanVariantTest : public ::testing::TestWithParam<IsaVariant<gemm::EpilogueSpans>> {};

TEST_P(EpilogueSpanVariantTest, MatchesThePortableSpans) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const gemm::EpilogueSpans spans = GetParam().impl;
  const gemm::EpilogueSpans exact = PortableVariant(gemm::EpilogueSpanVariants()).impl;
  std::vector<float> x = testing::RandomFloats(1003, 5, -12.0f, 12.0f);  // 1003: a partial last vector
  for (float v : {0.0f, -0.0f, 0.3f, -0.6f, 0.7f, 30.0f, -30.0f, 100.0f, -100.0f}) x.push_back(v);
  for (auto fn : {&gemm::EpilogueSpans::sigmoid, &gemm::EpilogueSpans::tanh}) {
    std::vector<float> got = x, want = x;
    (spans.*fn)(got.data(), static_cast<int64_t>(got.size()));
    (exact.*fn)(want.data(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 4e-7f * std::fabs(want[i]) + 1e-30f)
          << GetParam().name << (fn == &gemm::EpilogueSpans::sigmoid ? " sigmoid(" : " tanh(") << x[i] << ")";
    }
  }
  // Gelu within the elementwise family's bounds for the same vector forms (vector_math_test):
  // erf form 2e-6 relative; tanh form 3e-6 relative, and 1e-9 absolute below x = -5.8, where
  // the float argument's rounding (~1e-7 |u|) becomes several 1e-6 relative through e^(2u).
  struct GeluBound {
    void (*gemm::EpilogueSpans::*fn)(float*, int64_t);
    float relative, absolute;
    const char* name;
  };
  for (const GeluBound& g : {GeluBound{&gemm::EpilogueSpans::gelu_erf, 2e-6f, 1e-33f, "gelu"},
                             GeluBound{&gemm::EpilogueSpans::gelu_tanh, 3e-6f, 1e-9f, "gelu_tanh"}}) {
    std::vector<float> got = x, want = x;
    (spans.*g.fn)(got.data(), static_cast<int64_t>(got.size()));
    (exact.*g.fn)(want.data(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], g.relative * std::fabs(want[i]) + g.absolute)
          << GetParam().name << " " << g.name << "(" << x[i] << ")";
    }
  }
}

// The exact activations in scalar float as ONNX defines them, rounded as the separate
// kernels round them on this architecture.
float UnitClampOf(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }
float ExactActivation(const gemm::Epilogue& e, float x) {
  switch (e.activation) {
    case gemm::Activation::kRelu:
      return std::isnan(x) ? x : x > 0.0f ? x : 0.0f;
    case gemm::Activation::kClip: {
      const float low = x < e.alpha ? e.alpha : x;
      return low > e.beta ? e.beta : low;
    }
    case gemm::Activation::kLeakyRelu:
      return x < 0.0f ? e.alpha * x : x;
    case gemm::Activation::kHardSigmoid: {
#if defined(__aarch64__)
      // aarch64's baseline has FMA: the HardSigmoid kernel's alpha * x + beta is one fused
      // multiply-add there (GCC contracts it), so the epilogue rounds once too.
      return UnitClampOf(std::fma(e.alpha, x, e.beta));
#else
      volatile float scaled = e.alpha * x;
      return UnitClampOf(scaled + e.beta);
#endif
    }
    case gemm::Activation::kHardSwish:
      return x * UnitClampOf(x / 6.0f + 0.5f);
    default:
      return x;
  }
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0 || (std::isnan(a) && std::isnan(b)); }

// Values crossing every branch: both signs of zero, the clamps' corners (x / 6 + 1/2 at 0
// and 1 is x = -3 and 3), infinities and NaN, then random values; 1037 of them, so that
// runs end in a partial vector of every width.
std::vector<float> EpilogueInputs() {
  std::vector<float> x = {0.0f,
                          -0.0f,
                          3.0f,
                          -3.0f,
                          2.9999998f,
                          -2.9999998f,
                          0.5f,
                          -0.5f,
                          6.0f,
                          100.0f,
                          -100.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> random = testing::RandomFloats(1037 - static_cast<int64_t>(x.size()), 11, -8.0f, 8.0f);
  x.insert(x.end(), random.begin(), random.end());
  return x;
}

struct RunCase {
  gemm::Activation activation;
  float alpha, beta;
  const char* name;
};

// run = adds then the activation, in one pass: every variant gives the scalar formulas' bits for
// the exact activations, whatever the run's length (every length 0-40 and 1037), with and
// without the row bias, column bias and residual.
TEST_P(EpilogueSpanVariantTest, RunGivesTheExactActivationsBitForBit) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const gemm::EpilogueSpans spans = GetParam().impl;
  const std::vector<float> x = EpilogueInputs();
  const std::vector<float> bias = Random(static_cast<int64_t>(x.size()), 12);
  const std::vector<float> z = Random(static_cast<int64_t>(x.size()), 13);
  const float row_bias = 0.375f;
  for (const RunCase& c :
       {RunCase{gemm::Activation::kNone, 0, 0, "none"}, RunCase{gemm::Activation::kRelu, 0, 0, "relu"},
        RunCase{gemm::Activation::kClip, -1.5f, 2.25f, "clip"},
        RunCase{gemm::Activation::kLeakyRelu, 0.1f, 0, "leaky_relu"},
        RunCase{gemm::Activation::kHardSigmoid, 0.2f, 0.5f, "hard_sigmoid"},
        RunCase{gemm::Activation::kHardSwish, 0, 0, "hard_swish"}}) {
    gemm::Epilogue e;
    e.activation = c.activation;
    e.alpha = c.alpha;
    e.beta = c.beta;
    for (int terms = 0; terms < 8; ++terms) {
      const float* rb = (terms & 1) != 0 ? &row_bias : nullptr;
      const float* b = (terms & 2) != 0 ? bias.data() : nullptr;
      const float* r = (terms & 4) != 0 ? z.data() : nullptr;
      for (int64_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 40, 1037}) {
        std::vector<float> got(x.begin(), x.begin() + n);
        spans.run(e, got.data(), n, rb, b, r);
        for (int64_t i = 0; i < n; ++i) {
          float v = x[i];
          if (rb != nullptr) v += *rb;
          if (b != nullptr) v += b[i];
          if (r != nullptr) v += r[i];
          const float want = ExactActivation(e, v);
          ASSERT_TRUE(SameBits(got[i], want)) << GetParam().name << " " << c.name << " terms " << terms << " n " << n
                                              << " x " << x[i] << ": got " << got[i] << ", want " << want;
        }
      }
    }
  }
}

// The transcendental activations in run equal the variant's own spans applied after the
// adds, bit for bit (Swish: x * sigmoid(alpha x), alpha x rounded first), so fusing them
// into one pass changes no value.
TEST_P(EpilogueSpanVariantTest, RunEqualsTheSpansAfterTheAdds) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const gemm::EpilogueSpans spans = GetParam().impl;
  const std::vector<float> x = EpilogueInputs();
  const std::vector<float> bias = Random(static_cast<int64_t>(x.size()), 14);
  const float row_bias = -0.25f;
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> summed(x);
  for (int64_t i = 0; i < n; ++i) summed[i] = (summed[i] + row_bias) + bias[i];
  struct SpanCase {
    gemm::Activation activation;
    void (*span)(float*, int64_t);
  };
  for (const SpanCase& c :
       {SpanCase{gemm::Activation::kSigmoid, spans.sigmoid}, SpanCase{gemm::Activation::kTanh, spans.tanh},
        SpanCase{gemm::Activation::kGelu, spans.gelu_erf}, SpanCase{gemm::Activation::kGeluTanh, spans.gelu_tanh}}) {
    gemm::Epilogue e;
    e.activation = c.activation;
    std::vector<float> got(x), want(summed);
    spans.run(e, got.data(), n, &row_bias, bias.data(), nullptr);
    c.span(want.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameBits(got[i], want[i])) << GetParam().name << " activation " << static_cast<int>(c.activation)
                                             << " x " << x[i] << ": got " << got[i] << ", want " << want[i];
    }
  }
  for (float alpha : {1.0f, 1.702f}) {
    gemm::Epilogue e;
    e.activation = gemm::Activation::kSwish;
    e.alpha = alpha;
    std::vector<float> got(x), s(summed);
    spans.run(e, got.data(), n, &row_bias, bias.data(), nullptr);
    for (float& v : s) v = alpha * v;
    spans.sigmoid(s.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float want = summed[i] * s[i];
      ASSERT_TRUE(SameBits(got[i], want))
          << GetParam().name << " swish(" << alpha << ") x " << x[i] << ": got " << got[i] << ", want " << want;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, EpilogueSpanVariantTest, ::testing::ValuesIn(gemm::EpilogueSpanVariants()),
                         IsaVariantTestName<gemm::EpilogueSpans>);

}  // namespace
}  // namespace onnx_light
