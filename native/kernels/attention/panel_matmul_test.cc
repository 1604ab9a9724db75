// Every PanelMatMul kernel against the portable one, on packed right-hand sides of odd
// widths and depths (partial panels, k of 1, packed_rows > k, lda/ldc wider than the data);
// kernels this CPU cannot run, or the ISA cap excludes, are skipped by name.
#include "native/kernels/attention/panel_matmul.h"

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

namespace onnx_light {
namespace attention {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class PanelMatMulVariantTest : public ::testing::TestWithParam<IsaVariant<PanelMatMulFn>> {};

TEST_P(PanelMatMulVariantTest, MatchesPortable) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const PanelMatMulFn kernel = GetParam().impl;
  const PanelMatMulFn reference = PortableVariant(PanelMatMulVariants()).impl;
  struct Case {
    int64_t m, n, k, extra_rows;
  };
  for (const Case& cs :
       {Case{8, 16, 1, 0}, Case{8, 5, 7, 3}, Case{16, 33, 64, 0}, Case{24, 48, 17, 5}, Case{8, 100, 130, 2}}) {
    const int64_t packed_rows = cs.k + cs.extra_rows, lda = cs.k + 3, width = RoundUp(cs.n, kPanelWidth);
    const int64_t ldc = width + 5;
    const std::vector<float> a = Random(cs.m * lda, 1), b = Random(packed_rows * cs.n, 2);
    std::vector<float> packed(PackedSize(packed_rows, cs.n), 0.0f);
    for (int64_t r = 0; r < packed_rows; ++r) {
      for (int64_t c = 0; c < cs.n; ++c) packed[PackedIndex(packed_rows, r, c)] = b[r * cs.n + c];
    }
    std::vector<float> got(cs.m * ldc, -7.0f), want(cs.m * ldc, -7.0f);
    kernel(cs.m, cs.n, cs.k, a.data(), lda, packed.data(), packed_rows, got.data(), ldc);
    reference(cs.m, cs.n, cs.k, a.data(), lda, packed.data(), packed_rows, want.data(), ldc);
    for (int64_t i = 0; i < cs.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        // One FMA chain per element against separate multiply and add: k roundings apart.
        const float bound = j < width ? 2e-7f * cs.k : 0.0f;
        ASSERT_NEAR(got[i * ldc + j], want[i * ldc + j], bound)
            << GetParam().name << " m=" << cs.m << " n=" << cs.n << " k=" << cs.k << " at (" << i << "," << j << ")";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, PanelMatMulVariantTest, ::testing::ValuesIn(PanelMatMulVariants()),
                         IsaVariantTestName<PanelMatMulFn>);

TEST(PanelMatMulTest, DispatchUsesTheBestEnabledVariant) {
  std::cout << "PanelMatMul uses '" << BestVariant(PanelMatMulVariants()).name << "'\n";
  const std::vector<float> a = Random(8 * 4, 3), b = Random(4 * 16, 4);
  std::vector<float> got(8 * 16), want(8 * 16);
  PanelMatMul(8, 16, 4, a.data(), 4, b.data(), 4, got.data(), 16);
  BestVariant(PanelMatMulVariants()).impl(8, 16, 4, a.data(), 4, b.data(), 4, want.data(), 16);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace attention
}  // namespace onnx_light
