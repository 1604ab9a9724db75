#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// Forces the parallel path, then checks serial against 2, 4 and 8 participants.
template <typename T>
std::vector<T> RunAllCounts(KernelTester& t, Shape expected_shape) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{1});
  return testing::SerialMatchesParticipants<T>(t, expected_shape);
}

TEST(LrnTest, CenteredAndOneSidedWindows) {
  // alpha / size = 1, beta = 1, bias = 0: y = x / (sum of squares in the window).
  KernelTester odd("LRN", 13);
  odd.Input(MakeTensor<double>({1, 3, 1, 1}, {1, 2, 3}))
      .Attr("size", int64_t{3})
      .Attr("alpha", 3.0f)
      .Attr("beta", 1.0f)
      .Attr("bias", 0.0f);
  std::vector<double> y = RunAllCounts<double>(odd, Shape{1, 3, 1, 1});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_DOUBLE_EQ(y[0], 1.0 / 5);
  EXPECT_DOUBLE_EQ(y[1], 2.0 / 14);
  EXPECT_DOUBLE_EQ(y[2], 3.0 / 13);
  // size 2: the window is [c, c + 1].
  KernelTester even("LRN", 13);
  even.Input(MakeTensor<double>({1, 3, 1, 1}, {1, 2, 3}))
      .Attr("size", int64_t{2})
      .Attr("alpha", 2.0f)
      .Attr("beta", 1.0f)
      .Attr("bias", 0.0f);
  y = RunAllCounts<double>(even, Shape{1, 3, 1, 1});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_DOUBLE_EQ(y[0], 1.0 / 5);
  EXPECT_DOUBLE_EQ(y[1], 2.0 / 13);
  EXPECT_DOUBLE_EQ(y[2], 3.0 / 9);
}

TEST(LrnTest, RejectsLowRankAndMissingSize) {
  KernelTester t("LRN", 13);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Attr("size", int64_t{3});
  EXPECT_FALSE(t.Run(1).ok());
  KernelTester s("LRN", 13);
  s.Input(MakeTensor<float>({1, 2, 1}, {1, 2}));
  EXPECT_FALSE(s.Run(1).ok());
}

TEST(DetTest, KnownDeterminantsOverABatch) {
  KernelTester t("Det", 11);
  t.Input(MakeTensor<double>({3, 3, 3}, {6, 1, 1, 4, -2, 5, 2, 8, 7,     // -306
                                         1, 2, 3, 2, 4,  6, 0, 1, 5,     // singular: 0
                                         0, 1, 0, 1, 0,  0, 0, 0, 3}));  // a row swap: -3
  std::vector<double> d = RunAllCounts<double>(t, Shape{3});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NEAR(d[0], -306.0, 1e-9);
  EXPECT_EQ(d[1], 0.0);
  EXPECT_NEAR(d[2], -3.0, 1e-12);
}

TEST(DetTest, ManyMatricesIdenticalForEveryParticipantCount) {
  std::vector<float> x(50 * 4 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) - 5.0f;
  KernelTester t("Det", 22);
  t.Input(MakeTensor<float>({5, 10, 4, 4}, x));
  std::vector<float> d = RunAllCounts<float>(t, Shape{5, 10});
  ASSERT_EQ(d.size(), 50u);
}

TEST(DetTest, RejectsNonSquare) {
  KernelTester t("Det", 11);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("float[2,3]"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace onnx_light
