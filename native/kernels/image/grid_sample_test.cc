#include <cmath>
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

std::vector<float> Sample(int opset, const std::vector<int64_t>& x_dims, const std::vector<float>& x,
                          const std::vector<int64_t>& grid_dims, const std::vector<float>& grid,
                          const std::string& mode, const std::string& padding, int64_t align_corners) {
  KernelTester t("GridSample", opset);
  t.Input(MakeTensor<float>(Shape(x_dims), x))
      .Input(MakeTensor<float>(Shape(grid_dims), grid))
      .Attr("mode", mode)
      .Attr("padding_mode", padding)
      .Attr("align_corners", align_corners);
  auto out = RunAllCounts(t, kForceParallel);
  if (out.size() != 1) return {};
  return ToVector<float>(out[0].tensor());
}

void ExpectNear(const std::vector<float>& a, const std::vector<double>& e, double tol) {
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tol) << "at " << i;
}

// X = [[1, 2], [3, 4]]; grid points are (x, y) with x addressing the last axis.
TEST(GridSample, BilinearAlignedCornersHitsPixelsAndMidpoints) {
  const auto y =
      Sample(16, {1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 4, 2}, {-1, -1, 1, 1, 0, 0, 1, -1}, "bilinear", "zeros", 1);
  ExpectNear(y, {1, 4, 2.5, 2}, 1e-6);
}

TEST(GridSample, NearestZerosOutsideAndBorderClamp) {
  // align_corners=0: x = ((g + 1) * 2 - 1) / 2; g = 2 -> 2.5 -> rounds to 2 (even) -> outside.
  ExpectNear(Sample(20, {1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 2, 2}, {2, 0, -0.6f, -0.6f}, "nearest", "zeros", 0), {0, 1},
             0);
  ExpectNear(Sample(20, {1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 1, 2}, {3, 3}, "linear", "border", 0), {4}, 1e-6);
}

TEST(GridSample, ReflectionFoldsBackInside1D) {
  // align_corners=1 over [0, 2]: g = 1.5 -> 2.5 -> reflected to 1.5 -> halfway 20..30.
  ExpectNear(Sample(20, {1, 1, 3}, {10, 20, 30}, {1, 1, 1}, {1.5f}, "linear", "reflection", 1), {25}, 1e-5);
}

TEST(GridSample, CubicMidpointUsesKeysWeights) {
  // Keys (a = -0.75) at t = 0.5: weights -3/32, 19/32, 19/32, -3/32 over 1, 2, 4, 8.
  const double expected = (-3.0 * 1 + 19.0 * 2 + 19.0 * 4 - 3.0 * 8) / 32;
  ExpectNear(Sample(20, {1, 1, 4}, {1, 2, 4, 8}, {1, 1, 1}, {0}, "cubic", "border", 1), {expected}, 1e-5);
}

TEST(GridSample, TrilinearCentreOfVolumeIsTheMean) {
  ExpectNear(Sample(20, {1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 1, 1, 1, 3}, {0, 0, 0}, "linear", "zeros", 0),
             {3.5}, 1e-6);
}

// Many points and channels: bilinear with align_corners=1 on a plane that is linear in
// (row, col) reproduces the plane exactly wherever the location is inside.
TEST(GridSample, LinearPlaneIsReproducedAcrossParticipantCounts) {
  const int64_t n = 2, c = 3, h = 5, w = 7, gh = 6, gw = 9;
  std::vector<float> x(n * c * h * w);
  for (int64_t i = 0; i < n * c; ++i)
    for (int64_t r = 0; r < h; ++r)
      for (int64_t s = 0; s < w; ++s) x[(i * h + r) * w + s] = float(i) + 0.5f * r - 0.25f * s;
  std::vector<float> grid, expected;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t r = 0; r < gh; ++r)
      for (int64_t s = 0; s < gw; ++s) grid.push_back(-1 + 2.f * s / (gw - 1)), grid.push_back(-1 + 2.f * r / (gh - 1));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t r = 0; r < gh; ++r)
        for (int64_t s = 0; s < gw; ++s) {
          const float* g = &grid[((b * gh + r) * gw + s) * 2];
          const double col = (g[0] + 1) / 2 * (w - 1), row = (g[1] + 1) / 2 * (h - 1);
          expected.push_back(double(b * c + k) + 0.5 * row - 0.25 * col);
        }
  ExpectNear(Sample(20, {n, c, h, w}, x, {n, gh, gw, 2}, grid, "linear", "zeros", 1),
             std::vector<double>(expected.begin(), expected.end()), 1e-5);
}

TEST(GridSample, RejectsMismatchedGridAndLegacyVolumes) {
  KernelTester bad_grid("GridSample", 20);
  bad_grid.Input(MakeTensor<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>(Shape{1, 1, 1, 3}, {0, 0, 0}));
  EXPECT_FALSE(bad_grid.Run(1).ok());
  KernelTester legacy("GridSample", 16);
  legacy.Input(MakeTensor<float>(Shape{1, 1, 2, 2, 2}, std::vector<float>(8, 1.f)))
      .Input(MakeTensor<float>(Shape{1, 1, 1, 1, 3}, {0, 0, 0}));
  EXPECT_FALSE(legacy.Run(1).ok());
  KernelTester bad_mode("GridSample", 20);
  bad_mode.Input(MakeTensor<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>(Shape{1, 1, 1, 2}, {0, 0}))
      .Attr("mode", std::string("bilinear"));
  EXPECT_FALSE(bad_mode.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
