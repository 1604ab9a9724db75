// Every ISA variant of the float row primitives (rows_variants.h) against the portable
// variant, over row lengths that cover full vectors, tails and one element. Variants this
// CPU cannot run (or the ISA cap excludes) are reported as skipped, by name.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/simd/rows.h"
#include "native/kernels/simd/rows_variants.h"

namespace onnx_light {
namespace simd {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed, float lo = -8.0f, float hi = 8.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// |a - b| <= rel * max(|a|, |b|, scale).
void ExpectClose(float a, float b, double rel, double scale, const char* what, int64_t n, int64_t i) {
  const double bound = rel * std::max({std::fabs(double{a}), std::fabs(double{b}), scale});
  EXPECT_LE(std::fabs(double{a} - double{b}), bound) << what << " n=" << n << " i=" << i << ": " << a << " vs " << b;
}

const std::vector<int64_t> kLengths = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257, 1000};

class FloatRowsVariantTest : public ::testing::TestWithParam<IsaVariant<FloatRows>> {};

TEST_P(FloatRowsVariantTest, MatchesPortable) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const FloatRows& v = GetParam().impl;
  const FloatRows& ref = PortableVariant(FloatRowsVariants()).impl;
  for (int64_t n : kLengths) {
    const std::vector<float> x = Random(n, 1 + n), gamma = Random(n, 2 + n, 0.5f, 2.0f), beta = Random(n, 3 + n);
    double abs_sum = 0;
    for (float f : x) abs_sum += std::fabs(f);

    // Exact ones: max, scaling, lane-wise max.
    EXPECT_EQ(v.row_max(x.data(), n), ref.row_max(x.data(), n)) << "n=" << n;
    std::vector<float> a = x, b = x;
    v.scale_row(a.data(), n, 0.37f);
    ref.scale_row(b.data(), n, 0.37f);
    EXPECT_EQ(a, b) << "scale_row n=" << n;
    std::vector<float> ma = Random(n, 4 + n), mb = ma;
    v.max_into(x.data(), ma.data(), n);
    ref.max_into(x.data(), mb.data(), n);
    EXPECT_EQ(ma, mb) << "max_into n=" << n;

    // exp polynomials against libm, sums in another order.
    const float shift = ref.row_max(x.data(), n);
    std::vector<float> ya(n), yb(n);
    const float sa = v.exp_shifted_sum(x.data(), ya.data(), n, shift);
    const float sb = ref.exp_shifted_sum(x.data(), yb.data(), n, shift);
    ExpectClose(sa, sb, 1e-5, 0, "exp_shifted_sum", n, -1);
    for (int64_t i = 0; i < n; ++i) ExpectClose(ya[i], yb[i], 1e-6, 1e-30, "exp_shifted_sum y", n, i);

    v.softmax_row(x.data(), ya.data(), n);
    ref.softmax_row(x.data(), yb.data(), n);
    for (int64_t i = 0; i < n; ++i) ExpectClose(ya[i], yb[i], 1e-5, 1e-30, "softmax_row", n, i);
    v.log_softmax_row(x.data(), ya.data(), n);
    ref.log_softmax_row(x.data(), yb.data(), n);
    for (int64_t i = 0; i < n; ++i) ExpectClose(ya[i], yb[i], 1e-5, 1e-3, "log_softmax_row", n, i);

    const std::vector<float> shifts = Random(n, 5 + n, 7.0f, 9.0f);
    std::vector<float> suma(n, 1.0f), sumb(n, 1.0f);
    v.exp_shifted_accumulate(x.data(), shifts.data(), ya.data(), suma.data(), n);
    ref.exp_shifted_accumulate(x.data(), shifts.data(), yb.data(), sumb.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ExpectClose(ya[i], yb[i], 1e-6, 1e-30, "exp_shifted_accumulate y", n, i);
      ExpectClose(suma[i], sumb[i], 1e-6, 0, "exp_shifted_accumulate sum", n, i);
    }

    const float mean = 0.25f;
    ExpectClose(v.row_sum(x.data(), n), ref.row_sum(x.data(), n), 1e-6 * n, abs_sum, "row_sum", n, -1);
    ExpectClose(v.row_squared_deviation_sum(x.data(), n, mean), ref.row_squared_deviation_sum(x.data(), n, mean),
                1e-6 * n, 0, "row_squared_deviation_sum", n, -1);
    for (const float* bias : {beta.data(), static_cast<const float*>(nullptr)}) {
      v.normalize_row(x.data(), ya.data(), n, mean, 0.8f, gamma.data(), bias);
      ref.normalize_row(x.data(), yb.data(), n, mean, 0.8f, gamma.data(), bias);
      // gamma * (x - mean) * inv + beta may cancel to near 0: the bound scales with the
      // terms (a fused multiply-add and a multiply then add differ by an ulp of those).
      for (int64_t i = 0; i < n; ++i) {
        const double terms = std::fabs(double{gamma[i]} * (x[i] - mean) * 0.8) + (bias ? std::fabs(bias[i]) : 0.0);
        ExpectClose(ya[i], yb[i], 1e-6, terms, "normalize_row", n, i);
      }
    }
  }
}

// Masked keys (-inf, or far below the float exp range) weigh exactly nothing in every variant.
TEST_P(FloatRowsVariantTest, ExpFlushesMaskedToZero) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const FloatRows& v = GetParam().impl;
  for (int64_t n : kLengths) {
    std::vector<float> x(n, -INFINITY), y(n, 1.0f);
    x[0] = 0.0f;
    if (n > 2) x[n - 1] = -200.0f;
    EXPECT_EQ(v.exp_shifted_sum(x.data(), y.data(), n, 0.0f), 1.0f) << "n=" << n;
    for (int64_t i = 1; i < n; ++i) EXPECT_EQ(y[i], 0.0f) << "n=" << n << " i=" << i;
  }
}

// Softmax's exp of values at or below their maximum (exp_shifted_accumulate, and the
// softmax rows) takes math.h's shorter ExpNonPositiveOrZero: it must give what the general
// exp_shifted_sum gives, bit for bit, over the whole range below the maximum: the
// polynomial's range, the flush to 0 around -87.33654 (results near and in the
// subnormals), -inf, 0 and NaN.
std::vector<float> BelowShift(float shift) {
  std::vector<float> x;
  for (float d = -110.0f; d <= 0.0f; d += 0.0371f) x.push_back(shift + d);
  for (float d = -87.34f; d <= -87.32f; d += 0.0001f) x.push_back(shift + d);
  float edge = -87.33654f;
  for (int i = 0; i < 20; ++i) {
    x.push_back(shift + edge);
    edge = std::nextafter(edge, 0.0f);
  }
  for (float v : {shift, std::nextafter(shift, -INFINITY), shift - 1e-30f, -INFINITY, NAN, shift - 1e30f}) {
    x.push_back(v);
  }
  return x;
}

bool SameBits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

TEST_P(FloatRowsVariantTest, ExpBelowTheMaximumIsTheGeneralExpBitForBit) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const FloatRows& v = GetParam().impl;
  for (float shift : {0.0f, 2.75f, -40.5f}) {
    const std::vector<float> x = BelowShift(shift);
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<float> general(n), below(n), shifts(n, shift), sums(n, 0.0f);
    v.exp_shifted_sum(x.data(), general.data(), n, shift);
    v.exp_shifted_accumulate(x.data(), shifts.data(), below.data(), sums.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameBits(below[i], general[i]))
          << "x - shift = " << x[i] - shift << " (shift " << shift << "): " << below[i] << " vs " << general[i];
      ASSERT_TRUE(SameBits(sums[i], general[i])) << i;
    }
  }
  // The rows: softmax = exp(x - max) * (1 / sum), log_softmax = x - (max + log(sum)), from
  // the general steps; masked (-inf) entries included.
  for (int64_t n : kLengths) {
    std::vector<float> x = Random(n, 11 + n, -30.0f, 30.0f);
    for (int64_t i = 1; i < n; i += 3) x[i] = -INFINITY;
    const float m = v.row_max(x.data(), n);
    std::vector<float> want(n), got(n);
    const float sum = v.exp_shifted_sum(x.data(), want.data(), n, m);
    v.scale_row(want.data(), n, 1.0f / sum);
    v.softmax_row(x.data(), got.data(), n);
    EXPECT_EQ(got, want) << "softmax_row n=" << n;
    const float log_shift = m + std::log(sum);
    for (int64_t i = 0; i < n; ++i) want[i] = x[i] - log_shift;
    v.log_softmax_row(x.data(), got.data(), n);
    EXPECT_EQ(got, want) << "log_softmax_row n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, FloatRowsVariantTest, ::testing::ValuesIn(FloatRowsVariants()),
                         IsaVariantTestName<FloatRows>);

// The dispatched functions of rows.h are the best enabled variant's.
TEST(FloatRowsTest, DispatchUsesTheBestEnabledVariant) {
  const IsaVariant<FloatRows>& best = BestVariant(FloatRowsVariants());
  std::cout << "rows.h dispatches to '" << best.name << "' (cap " << IsaName(MaxIsa()) << ")\n";
  const std::vector<float> x = Random(77, 9);
  EXPECT_EQ(RowSum(x.data(), 77), best.impl.row_sum(x.data(), 77));
  std::vector<float> a(77), b(77);
  SoftmaxRow(x.data(), a.data(), 77);
  best.impl.softmax_row(x.data(), b.data(), 77);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace simd
}  // namespace onnx_light
