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

// 3x4 input 0..11; rows cropped 3 -> 2 (odd difference: first row kept, last dropped),
// columns padded 4 -> 7 (one zero before, two after).
TEST(CenterCropPad, CropsOneAxisAndPadsAnother) {
  std::vector<int32_t> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i + 1;
  KernelTester t("CenterCropPad", 18);
  t.Input(MakeTensor<int32_t>(Shape{3, 4}, x)).Input(MakeTensor<int64_t>(Shape{2}, {2, 7}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 7}));
  EXPECT_EQ(ToVector<int32_t>(out[0].tensor()), (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 0, 0}));
}

// axes = [0] with a pad of 1 -> 4 leaves the other axis alone: rows 1 (one zero row before,
// two after).
TEST(CenterCropPad, AxesSubsetWithNegativeAxis) {
  KernelTester t("CenterCropPad", 18);
  t.Input(MakeTensor<float>(Shape{1, 2}, {5.f, 6.f}))
      .Input(MakeTensor<int32_t>(Shape{1}, {4}))
      .Attr("axes", std::vector<int64_t>{-2});
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{4, 2}));
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{0, 0, 5, 6, 0, 0, 0, 0}));
}

TEST(CenterCropPad, RejectsShapeAxesMismatch) {
  KernelTester t("CenterCropPad", 18);
  t.Input(MakeTensor<float>(Shape{2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>(Shape{1}, {1}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
