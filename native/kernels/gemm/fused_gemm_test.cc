// com.microsoft FusedGemm against Gemm followed by the separate activation kernel, bit for
// bit (the epilogue runs each activation in its kernel's arithmetic order, Sigmoid/Tanh on
// the same simd/math.h lanes), on the tiled path, the GEMV paths (M == 1, N == 1), K == 0,
// transposes, broadcast C and a constant (prepacked) B; parallel runs bit-identical to the
// serial one. The epilogue's Sigmoid/Tanh span variants against the exact portable ones.
#include <cmath>
#include <cstring>
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
  for (const char* name : {"Gelu", "Clip"}) {
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
}

INSTANTIATE_TEST_SUITE_P(Isa, EpilogueSpanVariantTest, ::testing::ValuesIn(gemm::EpilogueSpanVariants()),
                         IsaVariantTestName<gemm::EpilogueSpans>);

}  // namespace
}  // namespace onnx_light
