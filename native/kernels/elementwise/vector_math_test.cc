// The vectorised float spans against the exact scalar ones, over ranges that include the
// overflow, underflow and cancellation regions, and tails of every length.
#include "native/kernels/elementwise/vector_math.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

namespace onnx_light {
namespace elementwise {
namespace vector_math {
namespace {

std::vector<float> Grid(float low, float high, int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = low + (high - low) * i / (n - 1);
  return v;
}

// Max relative error, measured against max(|exact|, floor) so that values that underflow
// towards zero are held to an absolute bound of tolerance * floor.
void ExpectSpanClose(SpanFn fast, SpanFn exact, const std::vector<float>& x, double tolerance, double floor,
                     const char* what) {
  std::vector<float> a(x.size()), b(x.size());
  fast(x.data(), a.data(), x.size());
  exact(x.data(), b.data(), x.size());
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(b[i]) || std::isinf(b[i])) {
      EXPECT_EQ(std::isnan(a[i]), std::isnan(b[i])) << what << " at " << x[i];
      if (std::isinf(b[i])) {
        EXPECT_EQ(a[i], b[i]) << what << " at " << x[i];
      }
      continue;
    }
    const double error = std::fabs(double(a[i]) - b[i]) / std::max(std::fabs(double(b[i])), floor);
    if (error > worst) worst = error, worst_x = x[i];
  }
  EXPECT_LE(worst, tolerance) << what << " worst at x = " << worst_x;
}

// Every variant against the exact scalar one (itself included: the portable variant is
// the reference); variants this CPU cannot run, or the ISA cap excludes, are skipped by name.
class VectorMathVariantTest : public ::testing::TestWithParam<IsaVariant<const SpanKernels& (*)()>> {};

TEST_P(VectorMathVariantTest, MatchesScalarWithinTolerance) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const SpanKernels& fast = GetParam().impl();
  const SpanKernels& exact = Scalar();
  ExpectSpanClose(fast.exp, exact.exp, Grid(-110, 90, 200001), 2e-7, 1e-37, "exp");
  ExpectSpanClose(fast.sigmoid, exact.sigmoid, Grid(-110, 110, 200001), 3e-7, 1e-37, "sigmoid");
  ExpectSpanClose(fast.tanh, exact.tanh, Grid(-12, 12, 200001), 3e-7, 1e-30, "tanh");
  ExpectSpanClose(fast.tanh, exact.tanh, Grid(-1e-3f, 1e-3f, 20001), 3e-7, 1e-30, "tanh near 0");
  ExpectSpanClose(fast.gelu_erf, exact.gelu_erf, Grid(-14, 14, 200001), 2e-6, 1e-33, "gelu");
  ExpectSpanClose(fast.gelu_tanh, exact.gelu_tanh, Grid(-14, 14, 200001), 3e-6, 1e-9, "gelu tanh");
  // Values under 1e-9 (x < -5.8) are held to an absolute 2e-15: the float argument
  // u = sqrt(2/pi)(x + 0.044715 x^3) carries a rounding error of ~1e-7 |u|, which e^(2u)
  // turns into a relative error of several 1e-6 there.
}

INSTANTIATE_TEST_SUITE_P(Isa, VectorMathVariantTest, ::testing::ValuesIn(Variants()),
                         IsaVariantTestName<const SpanKernels& (*)()>);

TEST(VectorMath, BestIsTheFirstEnabledVariant) {
  const std::vector<const SpanKernels*> vectorised = Vectorised();
  EXPECT_EQ(&Best(), vectorised.empty() ? &Scalar() : vectorised.front());
  EXPECT_EQ(&Best(), &BestVariant(Variants()).impl());
}

// Every width runs the same algorithm on the same constants: lane for lane the same bits.
TEST(VectorMath, WidthsAgreeBitForBit) {
  const std::vector<const SpanKernels*> vectorised = Vectorised();
  const std::vector<float> x = Grid(-30, 30, 100003);
  for (size_t k = 1; k < vectorised.size(); ++k) {
    const SpanKernels& a = *vectorised[0];
    const SpanKernels& b = *vectorised[k];
    for (auto member : {&SpanKernels::exp, &SpanKernels::sigmoid, &SpanKernels::tanh, &SpanKernels::gelu_erf,
                        &SpanKernels::gelu_tanh}) {
      std::vector<float> ya(x.size()), yb(x.size());
      (a.*member)(x.data(), ya.data(), x.size());
      (b.*member)(x.data(), yb.data(), x.size());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(ya[i], yb[i]) << a.isa << " vs " << b.isa << " at " << x[i];
    }
  }
}

TEST(VectorMath, SpecialValuesAndTails) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {nan, inf, -inf, 0.0f, -0.0f, 100, -100, 1e-30f, 3};
  const SpanKernels& best = Best();
  for (SpanFn f : {best.exp, best.sigmoid, best.tanh, best.gelu_erf, best.gelu_tanh}) {
    std::vector<float> y(x.size());
    f(x.data(), y.data(), x.size());
    EXPECT_TRUE(std::isnan(y[0]));
  }
  std::vector<float> y(x.size());
  best.exp(x.data(), y.data(), x.size());
  EXPECT_EQ(y[1], inf);
  EXPECT_EQ(y[2], 0);
  EXPECT_EQ(y[3], 1);
  // A span of any length computes each element as a full-vector span does.
  const std::vector<float> grid = Grid(-5, 5, 37);
  std::vector<float> full(grid.size());
  best.gelu_erf(grid.data(), full.data(), grid.size());
  for (size_t start = 0; start < grid.size(); ++start) {
    for (size_t n = 0; start + n <= grid.size(); n += 3) {
      std::vector<float> part(n);
      best.gelu_erf(grid.data() + start, part.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(part[i], full[start + i]);
    }
  }
}

}  // namespace
}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
