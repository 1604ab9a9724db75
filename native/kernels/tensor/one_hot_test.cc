#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(OneHotTest, AxesNegativeIndicesAndOutOfRange) {
  KernelTester last("OneHot", 11);
  last.Input(MakeTensor<int64_t>({3}, {0, -1, 5}))
      .Input(MakeTensor<int64_t>({}, {3}))
      .Input(MakeTensor<float>({2}, {0, 1}));
  Tensor y = RunAllCounts(last)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({3, 3}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0}));  // 5 is out of range: all off
  KernelTester first("OneHot", 11);
  first.Input(MakeTensor<float>({2}, {1.7f, 0.0f}))
      .Input(MakeTensor<float>({}, {2.0f}))
      .Input(MakeTensor<int32_t>({2}, {-1, 7}))
      .Attr("axis", int64_t{0});
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(first)[0].tensor()), (std::vector<int32_t>{-1, 7, 7, -1}));
  std::vector<int64_t> idx(3000);
  for (int i = 0; i < 3000; ++i) idx[i] = i % 40;
  KernelTester big("OneHot", 11);
  big.Input(MakeTensor<int64_t>({3000}, idx))
      .Input(MakeTensor<int64_t>({1}, {40}))
      .Input(MakeTensor<uint8_t>({2}, {0, 1}));
  const auto v = ToVector<uint8_t>(RunAllCounts(big, 100)[0].tensor());
  EXPECT_EQ(v[2345 * 40 + 2345 % 40], 1);
  EXPECT_EQ(v[2345 * 40 + 0], 0);
  KernelTester bad("OneHot", 11);
  bad.NodeName("oh")
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<int64_t>({}, {0}))
      .Input(MakeTensor<float>({2}, {0, 1}));
  EXPECT_NE(ErrorOf(bad).find("depth"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
