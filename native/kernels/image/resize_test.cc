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

std::vector<float> ResizeScales(const std::vector<int64_t>& dims, const std::vector<float>& x,
                                const std::vector<float>& scales, const std::string& mode, const std::string& transform,
                                Shape* shape) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>(Shape(dims), x)).MissingInput()
      .Input(MakeTensor<float>(Shape{int64_t(scales.size())}, scales))
      .Attr("mode", mode).Attr("coordinate_transformation_mode", transform);
  auto out = RunAllCounts(t, kForceParallel);
  if (out.size() != 1) return {};
  *shape = out[0].tensor().shape();
  return ToVector<float>(out[0].tensor());
}

// [1, 2] -> x2 nearest, asymmetric: source = floor-ish(x / 2) -> 1 1 2 2.
TEST(Resize, NearestUpsampleRepeats) {
  Shape shape;
  EXPECT_EQ(ResizeScales({1, 2}, {1, 2}, {1, 2}, "nearest", "asymmetric", &shape), (std::vector<float>{1, 1, 2, 2}));
  EXPECT_EQ(shape, (Shape{1, 4}));
}

// half_pixel linear x2 of [0, 4]: sources -0.25, 0.25, 0.75, 1.25 -> edge-clamped 0, 1, 3, 4.
TEST(Resize, LinearHalfPixelClampsAtEdges) {
  Shape shape;
  EXPECT_EQ(ResizeScales({1, 2}, {0, 4}, {1, 2}, "linear", "half_pixel", &shape), (std::vector<float>{0, 1, 3, 4}));
}

// align_corners linear on 2-D: a plane linear in (row, col) is reproduced exactly.
TEST(Resize, BilinearAlignCornersReproducesAPlane) {
  Shape shape;
  const auto y = ResizeScales({2, 3}, {0, 1, 2, 10, 11, 12}, {2, 2}, "linear", "align_corners", &shape);
  EXPECT_EQ(shape, (Shape{4, 6}));
  ASSERT_EQ(y.size(), 24u);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) EXPECT_NEAR(y[r * 6 + c], 10.0 * r / 3 + 2.0 * c / 5, 1e-5) << r << "," << c;
}

TEST(Resize, SizesAndTfCropExtrapolation) {
  // sizes [1, 3] of [0, 10] with tf_crop_and_resize over roi [0, -0.5] .. [1, 1.5]: sources
  // -0.5 (outside -> 7), 0.5 (halfway -> 5), 1.5 (outside -> 7).
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>(Shape{1, 2}, {0, 10}))
      .Input(MakeTensor<float>(Shape{4}, {0, -0.5f, 1, 1.5f}))
      .MissingInput()
      .Input(MakeTensor<int64_t>(Shape{2}, {1, 3}))
      .Attr("mode", std::string("linear"))
      .Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
      .Attr("extrapolation_value", 7.f);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{7, 5, 7}));
}

// Antialiased linear x0.5: a triangle of half-width 2 source pixels around the source
// coordinate (0.5, then 2.5), edge-clamped: weights 1/8, 3/8, 3/8, 1/8.
TEST(Resize, AntialiasWidensTheLinearFilter) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>(Shape{1, 4}, {0, 4, 8, 12})).MissingInput().Input(MakeTensor<float>(Shape{2}, {1, 0.5f}))
      .Attr("mode", std::string("linear")).Attr("antialias", int64_t{1});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<float>(out[0].tensor());
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], (0 * 1 + 0 * 3 + 4 * 3 + 8 * 1) / 8.0, 1e-6);
  EXPECT_NEAR(y[1], (4 * 1 + 8 * 3 + 12 * 3 + 12 * 1) / 8.0, 1e-6);
}

TEST(Resize, RejectsBothOrNeitherScalesAndSizes) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>(Shape{1, 2}, {0, 10}));
  EXPECT_FALSE(t.Run(1).ok());
  KernelTester both("Resize", 19);
  both.Input(MakeTensor<float>(Shape{1, 2}, {0, 10})).MissingInput().Input(MakeTensor<float>(Shape{2}, {1, 2}))
      .Input(MakeTensor<int64_t>(Shape{2}, {1, 4}));
  EXPECT_FALSE(both.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
