#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

std::vector<int32_t> Trilu(bool upper, int64_t k, Shape shape = {3, 4}) {
  KernelTester t("Trilu", 14);
  t.Input(MakeTensor<int32_t>(shape, Iota<int32_t>(shape.num_elements(), 1)))
      .Input(MakeTensor<int64_t>({}, {k}))
      .Attr("upper", int64_t{upper});
  auto out = RunAllCounts(t);
  return out.empty() ? std::vector<int32_t>{} : ToVector<int32_t>(out[0].tensor());
}

TEST(TriluTest, UpperAndLowerWithOffsets) {
  // Matrix 1..12 as [3, 4].
  EXPECT_EQ(Trilu(true, 0), (std::vector<int32_t>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(Trilu(true, 1), (std::vector<int32_t>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(Trilu(true, -1), (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  EXPECT_EQ(Trilu(false, 0), (std::vector<int32_t>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(Trilu(false, -1), (std::vector<int32_t>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(Trilu(true, INT64_MAX), std::vector<int32_t>(12, 0));
  EXPECT_EQ(Trilu(false, INT64_MIN), std::vector<int32_t>(12, 0));
  EXPECT_EQ(Trilu(false, INT64_MAX), Iota<int32_t>(12, 1));
}

TEST(TriluTest, BatchedLargeAndErrors) {
  const auto v = Trilu(true, 0, {30, 40, 50});
  EXPECT_EQ(v[(7 * 40 + 10) * 50 + 9], 0);
  EXPECT_EQ(v[(7 * 40 + 10) * 50 + 10], (7 * 40 + 10) * 50 + 11);
  KernelTester rank("Trilu", 14);
  rank.NodeName("tr").Input(MakeTensor<float>({3}, {1, 2, 3}));
  EXPECT_NE(ErrorOf(rank).find("rank >= 2"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
