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

TEST(EinsumTest, MatrixProduct) {
  KernelTester t("Einsum", 12);
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(MakeTensor<float>({3, 2}, {1, 0, 0, 1, 1, 1}))
      .Attr("equation", std::string("ij,jk->ik"));
  EXPECT_EQ(RunAllCounts<float>(t, Shape{2, 2}), (std::vector<float>{4, 5, 10, 11}));
}

TEST(EinsumTest, ImplicitOutputIsSortedUnrepeatedLabels) {
  KernelTester t("Einsum", 12);
  // "ba" implicit -> output "ab": the transpose.
  t.Input(MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})).Attr("equation", std::string("ba"));
  EXPECT_EQ(RunAllCounts<int32_t>(t, Shape{3, 2}), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(EinsumTest, TraceAndDiagonal) {
  KernelTester trace("Einsum", 12);
  trace.Input(MakeTensor<double>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})).Attr("equation", std::string("ii"));
  EXPECT_EQ(RunAllCounts<double>(trace, Shape{}), (std::vector<double>{15}));
  KernelTester diag("Einsum", 12);
  diag.Input(MakeTensor<double>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})).Attr("equation", std::string("ii->i"));
  EXPECT_EQ(RunAllCounts<double>(diag, Shape{3}), (std::vector<double>{1, 5, 9}));
}

TEST(EinsumTest, EllipsisBroadcastsBatchDimensions) {
  KernelTester t("Einsum", 12);
  // [2, 1, 2] x [3, 2] ("...j,kj->...k"): each row dotted with each of the 3 rows of B.
  t.Input(MakeTensor<float>({2, 1, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>({3, 2}, {1, 0, 0, 1, 1, 1}))
      .Attr("equation", std::string("...j,kj->...k"));
  EXPECT_EQ(RunAllCounts<float>(t, Shape{2, 1, 3}), (std::vector<float>{1, 2, 3, 3, 4, 7}));
}

TEST(EinsumTest, BatchMatmulWithBroadcastEllipsis) {
  KernelTester t("Einsum", 12);
  // A [2, 1, 2] (batch 2), B [1, 2, 1] (batch 1 broadcast): "...ij,...jk->...ik".
  t.Input(MakeTensor<int64_t>({2, 1, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<int64_t>({1, 2, 1}, {10, 100}))
      .Attr("equation", std::string("...ij,...jk->...ik"));
  EXPECT_EQ(RunAllCounts<int64_t>(t, Shape{2, 1, 1}), (std::vector<int64_t>{210, 430}));
}

TEST(EinsumTest, OuterProductAndFullSum) {
  KernelTester outer("Einsum", 12);
  outer.Input(MakeTensor<float>({2}, {1, 2}))
      .Input(MakeTensor<float>({3}, {1, 10, 100}))
      .Attr("equation", std::string("i,j->ij"));
  EXPECT_EQ(RunAllCounts<float>(outer, Shape{2, 3}), (std::vector<float>{1, 10, 100, 2, 20, 200}));
  KernelTester sum("Einsum", 12);
  sum.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Attr("equation", std::string("ij->"));
  EXPECT_EQ(RunAllCounts<float>(sum, Shape{}), (std::vector<float>{10}));
}

TEST(EinsumTest, LargeContractionIsIdenticalForEveryParticipantCount) {
  std::vector<float> a(40 * 300), b(300 * 30);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 101) / 101.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 97) / 97.0f - 0.5f;
  KernelTester t("Einsum", 12);
  t.Input(MakeTensor<float>({40, 300}, a))
      .Input(MakeTensor<float>({300, 30}, b))
      .Attr("equation", std::string("ik,kj->ij"));
  std::vector<float> y = RunAllCounts<float>(t, Shape{40, 30});
  ASSERT_EQ(y.size(), 1200u);
  double expected = 0;  // element (7, 11), summed in double as the kernel does
  for (int k = 0; k < 300; ++k) expected += static_cast<double>(a[7 * 300 + k]) * b[k * 30 + 11];
  EXPECT_EQ(y[7 * 30 + 11], static_cast<float>(expected));
}

TEST(EinsumTest, RejectsMalformedEquations) {
  for (const char* eq : {"ij,jk->ik", "ij->k", "i.j->i", "ij,->"}) {
    KernelTester t("Einsum", 12);
    t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Attr("equation", std::string(eq));
    auto r = t.Run(1);
    EXPECT_FALSE(r.ok()) << eq;
  }
  KernelTester sizes("Einsum", 12);
  sizes.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Attr("equation", std::string("ij,jk->ik"));
  auto r = sizes.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("disagree"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace onnx_light
