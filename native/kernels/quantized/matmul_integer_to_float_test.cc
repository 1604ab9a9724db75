// com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul against a naive oracle: the
// ONNX definitions of DynamicQuantizeLinear (scalar, written out here), an exact 64-bit
// integer matmul, then Cast -> Mul(a_scale * b_scale) -> Add(bias) in float, one rounding per
// op. The kernels promise that chain bit for bit, so the comparison is exact; every case runs
// with 1, 2, 4 and 8 participants (bit-identical) and with a constant (prepacked) or a
// run-time B. Built with -ffp-contract=off so that the oracle rounds as it is written.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

template <typename T>
std::vector<T> RandomBytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(std::is_signed<T>::value ? -128 : 0, std::is_signed<T>::value ? 127 : 255);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The serial outputs, after the determinism check with the parallel path forced.
std::vector<Value> RunAllCounts(KernelTester& t) {
  t.Tuning(param::kMinimumTasks, int64_t{1});
  return testing::DeterministicOutputs(t);
}

// DynamicQuantizeLinear as the ONNX operator page defines it.
struct Quantized {
  std::vector<uint8_t> values;
  float scale = 0;
  int32_t zero_point = 0;
};

Quantized ReferenceDynamicQuantize(const std::vector<float>& x) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : x) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  Quantized q;
  q.scale = (hi - lo) / 255.0f;
  if (hi == lo) q.scale = 1.0f / 255.0f;
  const float zp = std::nearbyint(std::clamp(0.0f - lo / q.scale, 0.0f, 255.0f));
  q.zero_point = static_cast<int32_t>(zp);
  for (float v : x)
    q.values.push_back(static_cast<uint8_t>(std::clamp(std::nearbyint(v / q.scale) + zp, 0.0f, 255.0f)));
  return q;
}

// Y[t, i, j] = float(sum_k (A - azp)(B - bzp[j])) * (a_scale * b_scale[j]) (+ bias[j]), A of
// `batches` x m rows, B shared.
template <typename TA, typename TB>
std::vector<float> ReferenceToFloat(const std::vector<TA>& a, int32_t azp, float a_scale, const std::vector<TB>& b,
                                    const std::vector<int32_t>& bzp, const std::vector<float>& b_scale,
                                    const std::vector<float>& bias, int64_t rows, int64_t k, int64_t n) {
  std::vector<float> y(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int32_t zb = bzp[bzp.size() == 1 ? 0 : j];
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += (int64_t(a[i * k + kk]) - azp) * (int64_t(b[kk * n + j]) - zb);
      const float cast = static_cast<float>(static_cast<int32_t>(s));
      const float scale = a_scale * b_scale[b_scale.size() == 1 ? 0 : j];
      float v = cast * scale;
      if (!bias.empty()) v = v + bias[j];
      y[i * n + j] = v;
    }
  }
  return y;
}

void ExpectSameFloats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

// batches x m rows of A, K, N; per-column B parameters; bias; B constant at creation.
struct Case {
  int64_t batches, m, k, n;
  bool per_column, bias, constant_b;
};

std::string CaseName(const Case& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
         (c.per_column ? "_PerColumn" : "_PerTensor") + (c.bias ? "_Bias" : "") +
         (c.constant_b ? "_ConstantB" : "_RuntimeB");
}

const Case kCases[] = {
    {1, 1, 1, 1, false, false, false},     // the smallest product
    {1, 5, 50, 33, false, true, true},     // edge tiles in both directions
    {2, 7, 37, 19, true, true, false},     // batched A folded into M, per-column B
    {1, 130, 200, 300, true, true, true},  // several row and column blocks; A quantized in parallel chunks
    {3, 16, 64, 64, false, false, true},   // no bias, per-tensor B, constant
};

class MatMulIntegerToFloatCases : public ::testing::TestWithParam<Case> {};

template <typename TA, typename TB>
void CheckMatMulIntegerToFloat(const Case& c, uint32_t seed) {
  const int64_t rows = c.batches * c.m;
  const auto a = RandomBytes<TA>(rows * c.k, seed);
  const auto b = RandomBytes<TB>(c.k * c.n, seed + 1);
  const int64_t params = c.per_column ? c.n : 1;
  const auto bzp_bytes = RandomBytes<TB>(params, seed + 2);
  const std::vector<int32_t> bzp(bzp_bytes.begin(), bzp_bytes.end());
  const auto b_scale = RandomFloats(params, seed + 3, 0.001f, 0.05f);
  const auto bias = c.bias ? RandomFloats(c.n, seed + 4, -3.0f, 3.0f) : std::vector<float>{};
  const TA azp = RandomBytes<TA>(1, seed + 5)[0];
  const float a_scale = 0.0123f;
  KernelTester t("MatMulIntegerToFloat", 1, "com.microsoft");
  t.Input(MakeTensor<TA>({c.batches, c.m, c.k}, a));
  Tensor bt = MakeTensor<TB>({c.k, c.n}, b);
  Tensor bzpt = c.per_column ? MakeTensor<TB>({c.n}, bzp_bytes) : MakeTensor<TB>({}, bzp_bytes);
  if (c.constant_b) {
    t.ConstantInput(bt);
  } else {
    t.Input(bt);
  }
  t.Input(MakeTensor<float>({}, {a_scale}));
  t.Input(c.per_column ? MakeTensor<float>({c.n}, b_scale) : MakeTensor<float>({}, b_scale));
  t.Input(MakeTensor<TA>({}, {azp}));
  if (c.constant_b) {
    t.ConstantInput(bzpt);
  } else {
    t.Input(bzpt);
  }
  if (c.bias) t.Input(MakeTensor<float>({c.n}, bias));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{c.batches, c.m, c.n}));
  ExpectSameFloats(ToVector<float>(out[0].tensor()),
                   ReferenceToFloat(a, azp, a_scale, b, bzp, b_scale, bias, rows, c.k, c.n));
}

TEST_P(MatMulIntegerToFloatCases, UnsignedAWithSignedBMatchesTheChain) {
  CheckMatMulIntegerToFloat<uint8_t, int8_t>(GetParam(), 11);
}

TEST_P(MatMulIntegerToFloatCases, UnsignedAWithUnsignedBMatchesTheChain) {
  CheckMatMulIntegerToFloat<uint8_t, uint8_t>(GetParam(), 21);
}

TEST_P(MatMulIntegerToFloatCases, SignedAWithSignedBMatchesTheChain) {
  CheckMatMulIntegerToFloat<int8_t, int8_t>(GetParam(), 31);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatMulIntegerToFloatCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return CaseName(info.param); });

class DynamicQuantizeMatMulCases : public ::testing::TestWithParam<Case> {};

template <typename TB>
void CheckDynamicQuantizeMatMul(const Case& c, uint32_t seed, float lo, float hi) {
  const int64_t rows = c.batches * c.m;
  const auto x = RandomFloats(rows * c.k, seed, lo, hi);
  const auto b = RandomBytes<TB>(c.k * c.n, seed + 1);
  const int64_t params = c.per_column ? c.n : 1;
  const auto bzp_bytes = RandomBytes<TB>(params, seed + 2);
  const std::vector<int32_t> bzp(bzp_bytes.begin(), bzp_bytes.end());
  const auto b_scale = RandomFloats(params, seed + 3, 0.001f, 0.05f);
  const auto bias = c.bias ? RandomFloats(c.n, seed + 4, -3.0f, 3.0f) : std::vector<float>{};
  KernelTester t("DynamicQuantizeMatMul", 1, "com.microsoft");
  t.Input(MakeTensor<float>({c.batches, c.m, c.k}, x));
  Tensor bt = MakeTensor<TB>({c.k, c.n}, b);
  Tensor bzpt = c.per_column ? MakeTensor<TB>({c.n}, bzp_bytes) : MakeTensor<TB>({}, bzp_bytes);
  if (c.constant_b) {
    t.ConstantInput(bt);
  } else {
    t.Input(bt);
  }
  t.Input(c.per_column ? MakeTensor<float>({c.n}, b_scale) : MakeTensor<float>({}, b_scale));
  if (c.constant_b) {
    t.ConstantInput(bzpt);
  } else {
    t.Input(bzpt);
  }
  if (c.bias) t.Input(MakeTensor<float>({c.n}, bias));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{c.batches, c.m, c.n}));
  const Quantized q = ReferenceDynamicQuantize(x);
  ExpectSameFloats(ToVector<float>(out[0].tensor()),
                   ReferenceToFloat(q.values, q.zero_point, q.scale, b, bzp, b_scale, bias, rows, c.k, c.n));
}

TEST_P(DynamicQuantizeMatMulCases, SignedWeightsMatchTheUnfusedChain) {
  CheckDynamicQuantizeMatMul<int8_t>(GetParam(), 41, -2.0f, 3.0f);
}

TEST_P(DynamicQuantizeMatMulCases, UnsignedWeightsMatchTheUnfusedChain) {
  CheckDynamicQuantizeMatMul<uint8_t>(GetParam(), 51, -2.0f, 3.0f);
}

// All of A above zero (the range is [0, max], zero point 0) and all below (zero point 255).
TEST_P(DynamicQuantizeMatMulCases, OneSignedInputsMatchTheUnfusedChain) {
  CheckDynamicQuantizeMatMul<int8_t>(GetParam(), 61, 0.5f, 4.0f);
  CheckDynamicQuantizeMatMul<int8_t>(GetParam(), 71, -4.0f, -0.5f);
}

INSTANTIATE_TEST_SUITE_P(Shapes, DynamicQuantizeMatMulCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return CaseName(info.param); });

TEST(DynamicQuantizeMatMul, AllZeroInputGivesTheBias) {
  // The range is [0, 0]: scale 1/255, zero point 0, every product 0, Y = bias.
  KernelTester t("DynamicQuantizeMatMul", 1, "com.microsoft");
  t.Input(MakeTensor<float>({2, 3}, std::vector<float>(6, 0.0f)));
  t.ConstantInput(MakeTensor<int8_t>({3, 2}, {1, -2, 3, -4, 5, -6}));
  t.Input(MakeTensor<float>({}, {0.5f})).MissingInput().Input(MakeTensor<float>({2}, {1.5f, -2.5f}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{1.5f, -2.5f, 1.5f, -2.5f}));
}

TEST(MatMulIntegerToFloat, HandComputedProduct) {
  // A = [[11, 7], [3, 4]] - 12, B = [[1], [2]]: -11 and -25, times 0.5 * 0.25, plus 1.
  KernelTester t("MatMulIntegerToFloat", 1, "com.microsoft");
  t.Input(MakeTensor<uint8_t>({2, 2}, {11, 7, 3, 4})).Input(MakeTensor<uint8_t>({2, 1}, {1, 2}));
  t.Input(MakeTensor<float>({}, {0.5f})).Input(MakeTensor<float>({1}, {0.25f}));
  t.Input(MakeTensor<uint8_t>({}, {12})).MissingInput().Input(MakeTensor<float>({1}, {1.0f}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{-11 * 0.125f + 1.0f, -25 * 0.125f + 1.0f}));
}

// Bad parameters fail with InvalidArgument naming the op and the offending input.
TEST(MatMulIntegerToFloat, PerRowAScaleAndShortBiasAreInvalidArgument) {
  const auto run = [](Tensor a_scale, Tensor bias) {
    KernelTester t("MatMulIntegerToFloat", 1, "com.microsoft");
    t.NodeName("proj");
    t.Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
    t.Input(std::move(a_scale)).Input(MakeTensor<float>({}, {0.1f})).MissingInput().MissingInput();
    t.Input(std::move(bias));
    return t.Run(1).status();
  };
  const Status scale = run(MakeTensor<float>({2}, {0.1f, 0.2f}), MakeTensor<float>({3}, {0, 0, 0}));
  EXPECT_EQ(scale.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(scale.message().find("MatMulIntegerToFloat"), std::string::npos) << scale.message();
  EXPECT_NE(scale.message().find("proj"), std::string::npos) << scale.message();
  EXPECT_NE(scale.message().find("a_scale"), std::string::npos) << scale.message();
  const Status bias = run(MakeTensor<float>({}, {0.1f}), MakeTensor<float>({2}, {0, 0}));
  EXPECT_EQ(bias.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bias.message().find("bias"), std::string::npos) << bias.message();
}

TEST(DynamicQuantizeMatMul, WrongBScaleCountIsInvalidArgument) {
  KernelTester t("DynamicQuantizeMatMul", 1, "com.microsoft");
  t.Input(MakeTensor<float>({1, 2}, {1.0f, 2.0f})).Input(MakeTensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
  t.Input(MakeTensor<float>({2}, {0.1f, 0.2f}));
  const Status s = t.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("b_scale"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace onnx_light
