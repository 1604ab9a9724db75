#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {"parallel.minimum_elements", int64_t{1}},
    {"parallel.grain_elements", int64_t{1}},
};

// N=1, C=4, one pixel, x = 1, 2, 3, 4, size 3 (window c-1..c+1), alpha 3, beta 0.5, bias 1:
// y[c] = x[c] / sqrt(1 + (3/3) * window square sum).
TEST(Lrn, ChannelWindowsClipAtTheEdges) {
  KernelTester t("LRN", 13);
  t.Input(MakeTensor<float>(Shape{1, 4, 1, 1}, {1, 2, 3, 4}))
      .Attr("size", int64_t{3}).Attr("alpha", 3.f).Attr("beta", 0.5f).Attr("bias", 1.f);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<float>(out[0].tensor());
  const double expected[] = {1 / std::sqrt(1.0 + 5), 2 / std::sqrt(1.0 + 14), 3 / std::sqrt(1.0 + 29),
                             4 / std::sqrt(1.0 + 25)};
  ASSERT_EQ(y.size(), 4u);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(y[c], expected[c], 1e-6) << c;
}

// An even size puts the extra channel after c: size 2 -> window c..c+1.
TEST(Lrn, EvenSizeWindowLeansForward) {
  KernelTester t("LRN", 1);
  t.Input(MakeTensor<double>(Shape{1, 3, 1, 2}, {1, 1, 2, 2, 3, 3})).Attr("size", int64_t{2})
      .Attr("alpha", 2.f).Attr("beta", 1.f).Attr("bias", 0.f);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<double>(out[0].tensor());
  const std::vector<double> expected = {1 / 5.0, 1 / 5.0, 2 / 13.0, 2 / 13.0, 3 / 9.0, 3 / 9.0};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-12) << i;
}

TEST(Lrn, RejectsLowRankInput) {
  KernelTester t("LRN", 13);
  t.Input(MakeTensor<float>(Shape{2, 2}, {1, 2, 3, 4})).Attr("size", int64_t{3});
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
