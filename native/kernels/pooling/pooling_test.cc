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

std::vector<float> Iota(int64_t n, float from = 1) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = from + static_cast<float>(i);
  return v;
}

std::vector<Value> Pool(KernelTester& t) { return RunAllCounts(t, kForceParallel); }
// MaxPool, AveragePool, LpPool: also the 2-D row path's threshold.
std::vector<Value> WindowPool(KernelTester& t) {
  t.Tuning(param::kMinimumRowReads, int64_t{1});
  return RunAllCounts(t, kForceParallel);
}

TEST(MaxPool, StridedWindowsWithRowAndColumnMajorIndices) {
  for (int64_t order : {0, 1}) {
    KernelTester t("MaxPool", 12);
    t.Input(MakeTensor<float>({1, 1, 4, 4}, Iota(16))).Outputs(2);
    t.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
    t.Attr("storage_order", order);
    auto out = WindowPool(t);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].tensor().shape(), Shape({1, 1, 2, 2}));
    EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{6, 8, 14, 16}));
    // Element (h, w) of a 4x4 plane: row-major h*4+w, column-major w*4+h.
    const std::vector<int64_t> expected =
        order == 0 ? std::vector<int64_t>{5, 7, 13, 15} : std::vector<int64_t>{5, 13, 7, 15};
    EXPECT_EQ(ToVector<int64_t>(out[1].tensor()), expected);
  }
}

TEST(MaxPool, IndicesCountBatchAndChannelAndDilation) {
  KernelTester t("MaxPool", 12);
  t.Input(MakeTensor<float>({1, 2, 4, 4}, Iota(32))).Outputs(2);
  t.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("dilations", std::vector<int64_t>{2, 2});
  auto out = WindowPool(t);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({1, 2, 2, 2}));
  // Window (0,0) with dilation 2 reads (0,0),(0,2),(2,0),(2,2): max at (2,2) = 11.
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{11, 12, 15, 16, 27, 28, 31, 32}));
  EXPECT_EQ(ToVector<int64_t>(out[1].tensor()), (std::vector<int64_t>{10, 11, 14, 15, 26, 27, 30, 31}));
}

TEST(MaxPool, CeilModeDropsWindowsStartingInPadding) {
  KernelTester t("MaxPool", 10);
  t.Input(MakeTensor<float>({1, 1, 5}, {3, 1, 4, 1, 5})).Attr("kernel_shape", std::vector<int64_t>{2});
  t.Attr("strides", std::vector<int64_t>{2}).Attr("ceil_mode", int64_t{1});
  auto out = WindowPool(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{3, 4, 5}));

  KernelTester floor("MaxPool", 10);
  floor.Input(MakeTensor<float>({1, 1, 5}, {3, 1, 4, 1, 5})).Attr("kernel_shape", std::vector<int64_t>{2});
  floor.Attr("strides", std::vector<int64_t>{2});
  auto f = WindowPool(floor);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(ToVector<float>(f[0].tensor()), (std::vector<float>{3, 4}));

  KernelTester dropped("MaxPool", 12);  // 4 + 1 pad, k=2, s=2: third window would start in the pad
  dropped.Input(MakeTensor<float>({1, 1, 4}, {1, 2, 3, 4})).Attr("kernel_shape", std::vector<int64_t>{2});
  dropped.Attr("strides", std::vector<int64_t>{2})
      .Attr("pads", std::vector<int64_t>{0, 1})
      .Attr("ceil_mode", int64_t{1});
  auto d = WindowPool(dropped);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(ToVector<float>(d[0].tensor()), (std::vector<float>{2, 4}));
}

TEST(MaxPool, Int8AndSameUpper) {
  KernelTester t("MaxPool", 12);
  t.Input(MakeTensor<int8_t>({1, 1, 3, 3}, {-5, 1, 2, -3, -4, 0, 7, -8, -9}));
  t.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("auto_pad", std::string("SAME_UPPER"));
  auto out = WindowPool(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({1, 1, 3, 3}));
  EXPECT_EQ(ToVector<int8_t>(out[0].tensor()), (std::vector<int8_t>{1, 2, 2, 7, 0, 0, 7, -8, -9}));
}

TEST(AveragePool, CountIncludePad) {
  for (int64_t include : {0, 1}) {
    KernelTester t("AveragePool", 19);
    t.Input(MakeTensor<float>({1, 1, 3, 3}, std::vector<float>(9, 9.0f)));
    t.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    t.Attr("count_include_pad", include);
    auto out = WindowPool(t);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> expected =
        include ? std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4} : std::vector<float>(9, 9.0f);
    EXPECT_EQ(ToVector<float>(out[0].tensor()), expected);
  }
}

TEST(LpPool, EuclideanNormOfWindows) {
  KernelTester t("LpPool", 18);
  t.Input(MakeTensor<float>({1, 1, 2, 2}, {3, 4, 0, 12})).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  auto out = WindowPool(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[0], 13.0f);
}

TEST(GlobalPools, OneValuePerPlane) {
  const auto x = Iota(2 * 3 * 4);
  struct Case {
    const char* op;
    std::vector<float> expected;
  };
  for (const Case& c :
       {Case{"GlobalAveragePool", {2.5, 6.5, 10.5, 14.5, 18.5, 22.5}}, Case{"GlobalMaxPool", {4, 8, 12, 16, 20, 24}}}) {
    KernelTester t(c.op, 22);
    t.Input(MakeTensor<float>({2, 3, 2, 2}, x));
    auto out = Pool(t);
    ASSERT_EQ(out.size(), 1u) << c.op;
    EXPECT_EQ(out[0].tensor().shape(), Shape({2, 3, 1, 1}));
    EXPECT_EQ(ToVector<float>(out[0].tensor()), c.expected) << c.op;
  }
  KernelTester lp("GlobalLpPool", 2);
  lp.Input(MakeTensor<float>({1, 1, 2}, {6, 8})).Attr("p", int64_t{2});
  auto out = Pool(lp);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[0], 10.0f);
}

// Enough planes for the interleaved 8-plane folds and the single-plane tail: every split
// of the planes over participants (one plane per task up to all of them) gives the same
// bits, within float rounding of a double reference.
TEST(GlobalPools, PlanesFoldTheSameInterleavedOrAlone) {
  const int64_t planes = 21, plane = 49;
  std::vector<float> x(planes * plane);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  for (const char* op : {"GlobalLpPool", "GlobalAveragePool"}) {
    KernelTester t(op, op[6] == 'L' ? 2 : 22);
    t.Input(MakeTensor<float>({1, planes, 7, 7}, x));
    if (op[6] == 'L') t.Attr("p", int64_t{2});
    auto out = Pool(t);
    ASSERT_EQ(out.size(), 1u) << op;
    const float* y = out[0].tensor().data<float>();
    for (int64_t c = 0; c < planes; ++c) {
      double acc = 0;
      for (int64_t i = 0; i < plane; ++i) {
        const double v = x[c * plane + i];
        acc += op[6] == 'L' ? v * v : v;
      }
      const double expected = op[6] == 'L' ? std::sqrt(acc) : acc / plane;
      EXPECT_NEAR(y[c], expected, 1e-5 * (1 + std::abs(expected))) << op << " plane " << c;
    }
  }
}

// A convolution-sized case: identical for every participant count, spot-checked.
TEST(MaxPool, LargeInputIsDeterministic) {
  std::vector<float> x(2 * 8 * 33 * 31);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i);
  KernelTester t("MaxPool", 12);
  t.Input(MakeTensor<float>({2, 8, 33, 31}, x)).Outputs(2);
  t.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto out = WindowPool(t);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({2, 8, 33, 31}));
  const float* y = out[0].tensor().data<float>();
  const int64_t* idx = out[1].tensor().data<int64_t>();
  for (int64_t i = 0; i < out[0].tensor().num_elements(); ++i) ASSERT_EQ(y[i], x[idx[i]]);
  EXPECT_EQ(y[31 + 1], std::max({x[0], x[1], x[2], x[31], x[32], x[33], x[62], x[63], x[64]}));
}

TEST(Pool, BadShapesAreInvalidArgument) {
  KernelTester rank("MaxPool", 12);
  rank.NodeName("mp").Input(MakeTensor<float>({1, 4}, Iota(4))).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  auto s = rank.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[1,4]"), std::string::npos) << s.message();
  KernelTester big("AveragePool", 19);
  big.Input(MakeTensor<float>({1, 1, 2, 2}, Iota(4))).Attr("kernel_shape", std::vector<int64_t>{3, 3});
  EXPECT_EQ(big.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester no_kernel("MaxPool", 12);
  no_kernel.Input(MakeTensor<float>({1, 1, 2, 2}, Iota(4)));
  EXPECT_EQ(no_kernel.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// One roi covering a 2x2 map exactly: with output_half_pixel and sampling_ratio 1 the
// single sample of each 1x1 bin sits at the bin centre; max mode keeps the largest
// weighted corner.
TEST(RoiAlign, BinCentresAndModes) {
  KernelTester avg("RoiAlign", 16);
  avg.Input(MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})).Input(MakeTensor<float>({1, 4}, {0, 0, 1, 1}));
  avg.Input(MakeTensor<int64_t>({1}, {0})).Attr("output_height", int64_t{2}).Attr("output_width", int64_t{2});
  avg.Attr("sampling_ratio", int64_t{1}).Attr("coordinate_transformation_mode", std::string("output_half_pixel"));
  auto a = Pool(avg);
  ASSERT_EQ(a.size(), 1u);
  // Samples at (0.25, 0.25), (0.25, 0.75), (0.75, 0.25), (0.75, 0.75) of the bilinear map.
  const std::vector<float> expected = {1.75f, 2.25f, 2.75f, 3.25f};
  const auto got = ToVector<float>(a[0].tensor());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << i;

  KernelTester bad("RoiAlign", 16);
  bad.Input(MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})).Input(MakeTensor<float>({1, 4}, {0, 0, 1, 1}));
  bad.Input(MakeTensor<int64_t>({1}, {3}));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// Channel c of the map is 2^c times channel 0, so (the op being linear in X, and scaling
// by a power of two exact) every output channel is exactly 2^c times channel 0 of the same
// roi: checks that each roi's sample table serves every channel, in blocks that start and
// end mid-roi, for both modes and both coordinate modes.
TEST(RoiAlign, EveryChannelOfARoiSharesItsSampleTable) {
  constexpr int64_t kC = 12, kH = 9, kW = 11, kRois = 3;
  std::vector<float> x(2 * kC * kH * kW);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t i = 0; i < kH * kW; ++i)
        x[(n * kC + c) * kH * kW + i] =
            std::ldexp(static_cast<float>((i * 7 + n * 3) % 13) - 4.0f, static_cast<int>(c));
  // Rois: inside, partly outside the map, and one degenerate (zero width).
  const std::vector<float> rois = {1.5f, 0.5f, 9.0f, 7.5f, -3.0f, 4.0f, 13.0f, 12.0f, 2.0f, 2.0f, 2.0f, 6.0f};
  for (const char* mode : {"avg", "max"}) {
    for (const char* transform : {"half_pixel", "output_half_pixel"}) {
      KernelTester t("RoiAlign", 16);
      t.Input(MakeTensor<float>({2, kC, kH, kW}, x))
          .Input(MakeTensor<float>({kRois, 4}, rois))
          .Input(MakeTensor<int64_t>({kRois}, {1, 0, 1}))
          .Attr("output_height", int64_t{3})
          .Attr("output_width", int64_t{4})
          .Attr("mode", std::string(mode))
          .Attr("coordinate_transformation_mode", std::string(transform));
      t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{200});
      const auto out = DeterministicOutputs(t, {.expect_regions = true});
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].tensor().shape(), Shape({kRois, kC, 3, 4}));
      const auto y = ToVector<float>(out[0].tensor());
      bool nonzero = false;
      for (int64_t r = 0; r < kRois; ++r) {
        for (int64_t c = 0; c < kC; ++c) {
          for (int64_t i = 0; i < 12; ++i) {
            const float base = y[(r * kC) * 12 + i];
            nonzero = nonzero || base != 0;
            EXPECT_EQ(y[(r * kC + c) * 12 + i], std::ldexp(base, static_cast<int>(c)))
                << mode << " " << transform << " roi " << r << " channel " << c << " at " << i;
          }
        }
      }
      EXPECT_TRUE(nonzero);
    }
  }
}

TEST(MaxRoiPool, QuantisedBins) {
  KernelTester t("MaxRoiPool", 22);
  t.Input(MakeTensor<float>({1, 1, 4, 4}, Iota(16))).Input(MakeTensor<float>({1, 5}, {0, 0, 0, 3, 3}));
  t.Attr("pooled_shape", std::vector<int64_t>{2, 2});
  auto out = Pool(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{6, 8, 14, 16}));
}

TEST(MaxUnpool, ScattersPooledValuesAndChecksIndices) {
  KernelTester t("MaxUnpool", 22);
  t.Input(MakeTensor<float>({1, 1, 2, 2}, {6, 8, 14, 16})).Input(MakeTensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15}));
  t.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), Shape({1, 1, 4, 4}));
  EXPECT_EQ(ToVector<float>((*out)[0].tensor()),
            (std::vector<float>{0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16}));

  KernelTester shaped("MaxUnpool", 11);  // explicit output_shape
  shaped.Input(MakeTensor<float>({1, 1, 1, 1}, {3})).Input(MakeTensor<int64_t>({1, 1, 1, 1}, {3}));
  shaped.Input(MakeTensor<int64_t>({4}, {1, 1, 3, 3})).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  auto s = shaped.Run(1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Index 3 addresses (1, 1) of the default 2x2 output; it lands at (1, 1) of 3x3.
  EXPECT_EQ(ToVector<float>((*s)[0].tensor()), (std::vector<float>{0, 0, 0, 0, 3, 0, 0, 0, 0}));

  KernelTester bad("MaxUnpool", 22);
  bad.Input(MakeTensor<float>({1, 1, 1, 1}, {3})).Input(MakeTensor<int64_t>({1, 1, 1, 1}, {9}));
  bad.Attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
