// Every ISA variant of the gate rows (gate_rows.h) against the portable variant (libm per
// element), over lengths covering full vectors, tails and one element; and an element's
// value independent of its position in the row (the tail runs the vector code).
// Variants this CPU cannot run (or the ISA cap excludes) are reported as skipped, by name.
#include "native/kernels/rnn/gate_rows.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

namespace onnx_light {
namespace rnn {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

const std::vector<int64_t> kLengths = {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 100};

class GateRowsVariantTest : public ::testing::TestWithParam<IsaVariant<GateRows>> {};

// math.h's sigmoid and tanh are within a few float ulps of libm: 4e-7 relative (or
// absolute near 0, where tanh is x and sigmoid 1/2) bounds them.
TEST_P(GateRowsVariantTest, MatchesPortableWithinFloatRounding) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const GateRows& portable = PortableVariant(GateRowsVariants()).impl;
  for (int64_t n : kLengths) {
    for (int f = 0; f < 2; ++f) {
      std::vector<float> got = Random(n, static_cast<uint32_t>(n)), want = got;
      (f == 0 ? v.sigmoid : v.tanh)(got.data(), n);
      (f == 0 ? portable.sigmoid : portable.tanh)(want.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double bound = 4e-7 * std::max({std::fabs(double{got[i]}), std::fabs(double{want[i]}), 1e-3});
        EXPECT_LE(std::fabs(double{got[i]} - double{want[i]}), bound)
            << (f == 0 ? "sigmoid" : "tanh") << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST_P(GateRowsVariantTest, ValueDoesNotDependOnPositionInRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const std::vector<float> base = Random(37, 5);
  std::vector<float> whole = base;
  v.tanh(whole.data(), 37);
  for (int64_t i = 0; i < 37; ++i) {
    float single = base[i];
    v.tanh(&single, 1);
    EXPECT_EQ(single, whole[i]) << "i=" << i;
  }
}

TEST_P(GateRowsVariantTest, SaturatesAndKeepsNan) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  std::vector<float> s = {-1000.0f, 1000.0f, 0.0f, NAN};
  std::vector<float> t = s;
  v.sigmoid(s.data(), 4);
  v.tanh(t.data(), 4);
  EXPECT_EQ(s[0], 0.0f);
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[2], 0.5f);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_EQ(t[0], -1.0f);
  EXPECT_EQ(t[1], 1.0f);
  EXPECT_EQ(t[2], 0.0f);
  EXPECT_TRUE(std::isnan(t[3]));
}

INSTANTIATE_TEST_SUITE_P(Isa, GateRowsVariantTest, ::testing::ValuesIn(GateRowsVariants()),
                         IsaVariantTestName<GateRows>);

}  // namespace
}  // namespace rnn
}  // namespace onnx_light
