#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"
#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace testing {
namespace {

// X (1, 4, 7, 6), W (6, 2, 3, 3): two groups, stride 1, pads 1.
constexpr int64_t kOutH = 7, kOutW = 6, kTaps = 9;

KernelTester DeformConv(const std::vector<float>& offset, const std::vector<float>* mask, int64_t offset_group) {
  KernelTester t("DeformConv", 19);
  t.Input(MakeTensor<float>({1, 4, 7, 6}, RandomFloats(4 * 7 * 6, 1)))
      .Input(MakeTensor<float>({6, 2, 3, 3}, RandomFloats(6 * 2 * 9, 2)))
      .Input(MakeTensor<float>({1, offset_group * 2 * kTaps, kOutH, kOutW}, offset))
      .Input(MakeTensor<float>({6}, RandomFloats(6, 3)));
  if (mask != nullptr) t.Input(MakeTensor<float>({1, offset_group * kTaps, kOutH, kOutW}, *mask));
  t.Attr("group", int64_t{2}).Attr("offset_group", offset_group).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  t.Attr("kernel_shape", std::vector<int64_t>{3, 3});
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kMinimumTasks, int64_t{1});
  return t;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "at " << i;
}

TEST(DeformConvTest, ZeroOffsetsAndUnitMaskAreAPlainConvolution) {
  const int64_t n = 2 * 2 * kTaps * kOutH * kOutW;
  KernelTester deform = DeformConv(std::vector<float>(n, 0.0f), nullptr, 2);
  const std::vector<float> got = SerialMatchesParticipants<float>(deform, Shape({1, 6, kOutH, kOutW}));
  KernelTester conv("Conv", 11);
  conv.Input(MakeTensor<float>({1, 4, 7, 6}, RandomFloats(4 * 7 * 6, 1)))
      .Input(MakeTensor<float>({6, 2, 3, 3}, RandomFloats(6 * 2 * 9, 2)))
      .Input(MakeTensor<float>({6}, RandomFloats(6, 3)))
      .Attr("group", int64_t{2})
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto expected = conv.Run(1);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ExpectClose(got, ToVector<float>(expected->at(0).tensor()));
}

// Every tap of every position shifted by whole pixels (down 1, left 2) with mask 0.5:
// the same as convolving the shifted image (zeros entering at the edges), halved.
TEST(DeformConvTest, IntegerOffsetsShiftTheSamplesAndTheMaskScalesThem) {
  std::vector<float> offset(1 * 2 * kTaps * kOutH * kOutW);
  for (int64_t tap = 0; tap < kTaps; ++tap) {
    for (int64_t p = 0; p < kOutH * kOutW; ++p) {
      offset[(tap * 2) * kOutH * kOutW + p] = 1.0f;       // h
      offset[(tap * 2 + 1) * kOutH * kOutW + p] = -2.0f;  // w
    }
  }
  const std::vector<float> mask(kTaps * kOutH * kOutW, 0.5f);
  KernelTester deform = DeformConv(offset, &mask, 1);
  const std::vector<float> got = SerialMatchesParticipants<float>(deform, Shape({1, 6, kOutH, kOutW}));

  const std::vector<float> x = RandomFloats(4 * 7 * 6, 1), w = RandomFloats(6 * 2 * 9, 2), b = RandomFloats(6, 3);
  const auto pixel = [&](int64_t c, int64_t h, int64_t wc) {
    return h >= 0 && h < 7 && wc >= 0 && wc < 6 ? x[(c * 7 + h) * 6 + wc] : 0.0f;
  };
  std::vector<float> want(6 * kOutH * kOutW);
  for (int64_t m = 0; m < 6; ++m) {
    for (int64_t oy = 0; oy < kOutH; ++oy) {
      for (int64_t ox = 0; ox < kOutW; ++ox) {
        double sum = 0;
        for (int64_t c = 0; c < 2; ++c) {
          for (int64_t i = 0; i < 3; ++i) {
            for (int64_t j = 0; j < 3; ++j) {
              sum += 0.5 * w[((m * 2 + c) * 3 + i) * 3 + j] * pixel((m / 3) * 2 + c, oy - 1 + i + 1, ox - 1 + j - 2);
            }
          }
        }
        want[(m * kOutH + oy) * kOutW + ox] = static_cast<float>(sum + b[m]);
      }
    }
  }
  ExpectClose(got, want);
}

TEST(DeformConvTest, HalfPixelOffsetsInterpolateBilinearly) {
  // One channel, 1x1 kernel: the output is the input sampled at (y + 0.5, x + 0.25).
  KernelTester t("DeformConv", 19);
  const std::vector<float> x = {1, 2, 3, 4};  // 2 x 2
  std::vector<float> offset = {0.5f, 0.5f, 0.5f, 0.5f, 0.25f, 0.25f, 0.25f, 0.25f};
  t.Input(MakeTensor<float>({1, 1, 2, 2}, x))
      .Input(MakeTensor<float>({1, 1, 1, 1}, {1.0f}))
      .Input(MakeTensor<float>({1, 2, 2, 2}, offset));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // (0.5, 0.25): rows 0/1 halfway, columns 1/4 of the way; row 1 samples half outside (zeros).
  const float top = 0.5f * (0.75f * 1 + 0.25f * 2) + 0.5f * (0.75f * 3 + 0.25f * 4);
  const float top_right = 0.5f * (0.75f * 2) + 0.5f * (0.75f * 4);
  const float bottom = 0.5f * (0.75f * 3 + 0.25f * 4);
  const float bottom_right = 0.5f * (0.75f * 4);
  ExpectClose(ToVector<float>(out->at(0).tensor()), {top, top_right, bottom, bottom_right});
}

TEST(DeformConvTest, RejectsOffsetsOfTheWrongShape) {
  KernelTester t("DeformConv", 19);
  t.Input(MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>({1, 1, 1, 1}, {1.0f}))
      .Input(MakeTensor<float>({1, 3, 2, 2}, std::vector<float>(12, 0)));
  const Status s = t.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("offset must be (1, 2, 2, 2)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
