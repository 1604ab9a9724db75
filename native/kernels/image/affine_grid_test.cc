#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {param::kMinimumElements, int64_t{1}},
    {param::kBlockElements, int64_t{1}},
};

std::vector<float> Grid(const std::vector<float>& theta, const std::vector<int64_t>& size, int64_t align,
                        Shape* shape) {
  const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
  KernelTester t("AffineGrid", 20);
  t.Input(MakeTensor<float>(Shape{size[0], spatial, spatial + 1}, theta))
      .Input(MakeTensor<int64_t>(Shape{int64_t(size.size())}, size))
      .Attr("align_corners", align);
  auto out = RunAllCounts(t, kForceParallel);
  if (out.size() != 1) return {};
  *shape = out[0].tensor().shape();
  return ToVector<float>(out[0].tensor());
}

// Identity theta: the grid is the base coordinates, x along W first.
TEST(AffineGrid, Identity2DCentresAndCorners) {
  Shape shape;
  const std::vector<float> identity = {1, 0, 0, 0, 1, 0};
  // H = 1, W = 2, align_corners = 0: x = -0.5, 0.5; y = 0.
  EXPECT_EQ(Grid(identity, {1, 3, 1, 2}, 0, &shape), (std::vector<float>{-0.5f, 0, 0.5f, 0}));
  EXPECT_EQ(shape, (Shape{1, 1, 2, 2}));
  // H = 2, W = 3, align_corners = 1: x = -1, 0, 1; y = -1, 1.
  EXPECT_EQ(Grid(identity, {1, 1, 2, 3}, 1, &shape), (std::vector<float>{-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1}));
}

// theta = [[2, 0, 0.5], [0, -1, 0], [0, 0, 1]] in 3-D: (x, y, z) -> (2x + 0.5, -y, z).
TEST(AffineGrid, Scaled3DWithTranslation) {
  Shape shape;
  const auto g = Grid({2, 0, 0, 0.5f, 0, -1, 0, 0, 0, 0, 1, 0}, {1, 1, 2, 1, 2}, 1, &shape);
  EXPECT_EQ(shape, (Shape{1, 2, 1, 2, 3}));
  // points (d, w): z = -1, 1; y = -1 (H = 1 aligned); x = -1, 1
  EXPECT_EQ(g, (std::vector<float>{-1.5f, 1, -1, 2.5f, 1, -1, -1.5f, 1, 1, 2.5f, 1, 1}));
}

TEST(AffineGrid, RejectsThetaSizeMismatch) {
  KernelTester t("AffineGrid", 20);
  t.Input(MakeTensor<float>(Shape{1, 2, 3}, {1, 0, 0, 0, 1, 0})).Input(MakeTensor<int64_t>(Shape{5}, {1, 1, 2, 2, 2}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
