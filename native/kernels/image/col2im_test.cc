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

// Independent reference: scatter-add every (kernel offset, block) value onto the image.
std::vector<double> Scatter2D(const std::vector<float>& x, int64_t channels, int64_t h, int64_t w, int64_t kh,
                              int64_t kw, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t bh = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1;
  const int64_t bw = (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  std::vector<double> y(channels * h * w, 0.0);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        for (int64_t r = 0; r < bh; ++r)
          for (int64_t s = 0; s < bw; ++s) {
            const int64_t row = r * stride - pad + i * dilation, col = s * stride - pad + j * dilation;
            if (row < 0 || row >= h || col < 0 || col >= w) continue;
            y[(c * h + row) * w + col] += x[((c * kh + i) * kw + j) * bh * bw + r * bw + s];
          }
  return y;
}

void Check(int64_t channels, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t stride, int64_t pad,
           int64_t dilation) {
  const int64_t bh = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1;
  const int64_t bw = (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  std::vector<float> x(channels * kh * kw * bh * bw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.f;
  KernelTester t("Col2Im", 18);
  t.Input(MakeTensor<float>(Shape{1, channels * kh * kw, bh * bw}, x))
      .Input(MakeTensor<int64_t>(Shape{2}, {h, w}))
      .Input(MakeTensor<int64_t>(Shape{2}, {kh, kw}))
      .Attr("strides", std::vector<int64_t>{stride, stride})
      .Attr("pads", std::vector<int64_t>{pad, pad, pad, pad})
      .Attr("dilations", std::vector<int64_t>{dilation, dilation});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{1, channels, h, w}));
  const auto y = ToVector<float>(out[0].tensor());
  const auto e = Scatter2D(x, channels, h, w, kh, kw, stride, pad, dilation);
  ASSERT_EQ(y.size(), e.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], e[i]) << "at " << i;  // small integers: exact
}

TEST(Col2Im, OverlappingBlocksAddUp) { Check(2, 5, 6, 3, 2, 1, 0, 1); }
TEST(Col2Im, StridesPadsAndDilations) { Check(3, 7, 5, 2, 3, 2, 1, 2); }

TEST(Col2Im, RejectsBlockCountMismatch) {
  KernelTester t("Col2Im", 18);
  t.Input(MakeTensor<float>(Shape{1, 4, 3}, std::vector<float>(12, 1.f)))
      .Input(MakeTensor<int64_t>(Shape{2}, {3, 3}))
      .Input(MakeTensor<int64_t>(Shape{2}, {2, 2}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
