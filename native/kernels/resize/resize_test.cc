#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

std::vector<float> RunAllCounts(KernelTester& t, Shape expected_shape) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{1});
  return testing::SerialMatchesParticipants<float>(t, expected_shape);
}

KernelTester& WithScales(KernelTester& t, std::vector<float> x, std::vector<float> scales) {
  const int64_t n = static_cast<int64_t>(x.size());
  return t.Input(MakeTensor<float>({1, n}, x)).MissingInput().Input(MakeTensor<float>({2}, scales));
}

TEST(ResizeTest, NearestHalfPixelRoundPreferFloor) {
  KernelTester t("Resize", 19);
  WithScales(t, {1, 2}, {1, 2});
  // x_original = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> 0, 0, 1, 1.
  EXPECT_EQ(RunAllCounts(t, Shape{1, 4}), (std::vector<float>{1, 1, 2, 2}));
}

TEST(ResizeTest, LinearHalfPixelClampsAtTheEdges) {
  KernelTester t("Resize", 19);
  WithScales(t, {1, 2}, {1, 2}).Attr("mode", std::string("linear"));
  EXPECT_EQ(RunAllCounts(t, Shape{1, 4}), (std::vector<float>{1, 1.25f, 1.75f, 2}));
}

TEST(ResizeTest, AlignCornersWithSizes) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>({1, 2}, {0, 10}))
      .MissingInput()
      .MissingInput()
      .Input(MakeTensor<int64_t>({2}, {1, 3}))
      .Attr("mode", std::string("linear"))
      .Attr("coordinate_transformation_mode", std::string("align_corners"));
  EXPECT_EQ(RunAllCounts(t, Shape{1, 3}), (std::vector<float>{0, 5, 10}));
}

TEST(ResizeTest, CropAndResizeExtrapolatesOutsideTheInput) {
  KernelTester t("Resize", 19);
  // roi [0, 2] on the last axis of a 2-long input: x_original = 0, 1, 2; 2 is outside.
  t.Input(MakeTensor<float>({1, 2}, {3, 4}))
      .Input(MakeTensor<float>({4}, {0, 0, 1, 2}))
      .MissingInput()
      .Input(MakeTensor<int64_t>({2}, {1, 3}))
      .Attr("mode", std::string("linear"))
      .Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
      .Attr("extrapolation_value", 7.0f);
  EXPECT_EQ(RunAllCounts(t, Shape{1, 3}), (std::vector<float>{3, 4, 7}));
}

TEST(ResizeTest, CubicKeepsConstantsAndIsIdenticalAcrossCounts) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>({1, 1, 4, 4}, std::vector<float>(16, 2.5f)))
      .MissingInput()
      .Input(MakeTensor<float>({4}, {1, 1, 2.5f, 1.5f}))
      .Attr("mode", std::string("cubic"));
  // The cubic weights of every output coordinate sum to 1, so a constant image stays constant.
  for (float v : RunAllCounts(t, Shape{1, 1, 10, 6})) EXPECT_NEAR(v, 2.5f, 1e-6);
}

// NCHW 2x upsampling (only H and W change: the row paths), blocks of several rows that
// start mid-plane. Half-pixel 2x maps output i to input i / 2 - 0.25: nearest
// (round_prefer_floor) reads i / 2; linear blends floor and floor + 1 of the clamped
// coordinate with weights 1 - t, t (t = 0.25 or 0.75 inside, clamped at the edges).
TEST(ResizeTest, NchwTwiceUpsamplingByRows) {
  constexpr int64_t kN = 2, kC = 3, kH = 5, kW = 4;
  std::vector<float> x(kN * kC * kH * kW);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 23) * 0.5f;
  auto at = [&](int64_t p, int64_t h, int64_t w) { return x[(p * kH + h) * kW + w]; };
  for (const char* mode : {"nearest", "linear"}) {
    KernelTester t("Resize", 19);
    t.Input(MakeTensor<float>({kN, kC, kH, kW}, x))
        .MissingInput()
        .Input(MakeTensor<float>({4}, {1, 1, 2, 2}))
        .Attr("mode", std::string(mode));
    t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{24});
    const std::vector<Value> r = testing::DeterministicOutputs(t, {.expect_regions = true});
    ASSERT_EQ(r.size(), 1u) << mode;
    ASSERT_EQ(r[0].tensor().shape(), Shape({kN, kC, 2 * kH, 2 * kW}));
    const std::vector<float> y = ToVector<float>(r[0].tensor());
    auto source = [](int64_t i, int64_t in, int64_t* i0, int64_t* i1, double* t) {
      const double xo = std::min(std::max(i / 2.0 - 0.25, 0.0), static_cast<double>(in - 1));
      *i0 = static_cast<int64_t>(xo), *i1 = std::min(*i0 + 1, in - 1), *t = xo - *i0;
    };
    for (int64_t p = 0; p < kN * kC; ++p) {
      for (int64_t i = 0; i < 2 * kH; ++i) {
        for (int64_t j = 0; j < 2 * kW; ++j) {
          const float got = y[(p * 2 * kH + i) * 2 * kW + j];
          if (std::string(mode) == "nearest") {
            EXPECT_EQ(got, at(p, i / 2, j / 2)) << p << "," << i << "," << j;
            continue;
          }
          int64_t h0, h1, w0, w1;
          double ty, tx;
          source(i, kH, &h0, &h1, &ty);
          source(j, kW, &w0, &w1, &tx);
          const double want = (1 - ty) * ((1 - tx) * at(p, h0, w0) + tx * at(p, h0, w1)) +
                              ty * ((1 - tx) * at(p, h1, w0) + tx * at(p, h1, w1));
          EXPECT_NEAR(got, want, 1e-5) << p << "," << i << "," << j;
        }
      }
    }
  }
}

// Float linear sums in float on every path (the weights rounded once, the last axis
// innermost, zero-weight taps skipped): the NCHW row path on [1, 1, H, W] and the general
// path on the same values as [H, W, 1] (a leading axis resized, the last one not: no row
// path) give the same bits, under every participant count and under a crop that
// extrapolates on both axes. Both are checked against onnx.reference in
// resize_reference_test.py.
TEST(ResizeTest, FloatLinearRowPathAndGeneralPathAgreeBitForBit) {
  constexpr int64_t kH = 7, kW = 9;
  std::vector<float> x(kH * kW);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 23) * 0.37f - 3.1f;
  for (const bool crop : {false, true}) {
    KernelTester rows("Resize", 19), general("Resize", 19);
    rows.Input(MakeTensor<float>({1, 1, kH, kW}, x));
    general.Input(MakeTensor<float>({kH, kW, 1}, x));
    if (crop) {
      rows.Input(MakeTensor<float>({8}, {0, 0, -0.2f, 0.1f, 1, 1, 1.3f, 0.8f}));
      general.Input(MakeTensor<float>({6}, {-0.2f, 0.1f, 0, 1.3f, 0.8f, 1}));
    } else {
      rows.MissingInput();
      general.MissingInput();
    }
    rows.Input(MakeTensor<float>({4}, {1, 1, 2, 1.5f}));
    general.Input(MakeTensor<float>({3}, {2, 1.5f, 1}));
    for (KernelTester* t : {&rows, &general}) {
      t->Attr("mode", std::string("linear")).Attr("extrapolation_value", -9.0f);
      if (crop) t->Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
    }
    const std::vector<float> a = RunAllCounts(rows, Shape{1, 1, 2 * kH, kW * 3 / 2});
    const std::vector<float> b = RunAllCounts(general, Shape{2 * kH, kW * 3 / 2, 1});
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "crop=" << crop << " i=" << i;
    if (crop) EXPECT_GT(std::count(a.begin(), a.end(), -9.0f), 0);
  }
}

TEST(ResizeTest, RejectsMissingScalesAndSizes) {
  KernelTester t("Resize", 19);
  t.Input(MakeTensor<float>({1, 2}, {1, 2}));
  EXPECT_FALSE(t.Run(1).ok());
  KernelTester m("Resize", 19);
  WithScales(m, {1, 2}, {1, 2}).Attr("mode", std::string("bilinear"));
  EXPECT_FALSE(m.Run(1).ok());
}

TEST(ResizeTest, AntialiasAveragesOverTheStretchedTriangle) {
  KernelTester t("Resize", 19);
  // Downscale 4 -> 2 (scale 0.5, half_pixel): x_original = 0.5 and 2.5; the triangle of
  // half-width 2 covers indices -1..2 with weights 1, 3, 3, 1 (/ 8), edges clamped.
  WithScales(t, {0, 8, 16, 24}, {1, 0.5f}).Attr("mode", std::string("linear")).Attr("antialias", int64_t{1});
  EXPECT_EQ(RunAllCounts(t, Shape{1, 2}),
            (std::vector<float>{(0 * 1 + 0 * 3 + 8 * 3 + 16) / 8.0f, (8 + 16 * 3 + 24 * 3 + 24) / 8.0f}));
}

}  // namespace
}  // namespace onnx_light
