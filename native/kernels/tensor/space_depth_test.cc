#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

// ONNX's DepthToSpace examples: input [1, 8, 2, 3] = 0..47, blocksize 2.
TEST(DepthToSpaceTest, DcrAndCrdMatchOnnxExamples) {
  KernelTester dcr("DepthToSpace", 13);
  dcr.Input(MakeTensor<float>({1, 8, 2, 3}, Iota<float>(48))).Attr("blocksize", int64_t{2});
  Tensor y = RunAllCounts(dcr)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({1, 2, 4, 6}));
  const std::vector<float> dcr_first_rows = {0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38};
  const auto d = ToVector<float>(y);
  EXPECT_EQ(std::vector<float>(d.begin(), d.begin() + 12), dcr_first_rows);
  KernelTester crd("DepthToSpace", 13);
  crd.Input(MakeTensor<float>({1, 8, 2, 3}, Iota<float>(48)))
      .Attr("blocksize", int64_t{2})
      .Attr("mode", std::string("CRD"));
  const auto c = ToVector<float>(RunAllCounts(crd)[0].tensor());
  EXPECT_EQ(std::vector<float>(c.begin(), c.begin() + 12),
            (std::vector<float>{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20}));
}

TEST(SpaceToDepthTest, InvertsDepthToSpaceDcr) {
  std::vector<int32_t> v = Iota<int32_t>(2 * 12 * 6 * 10);
  KernelTester d2s("DepthToSpace", 13);
  d2s.Input(MakeTensor<int32_t>({2, 12, 6, 10}, v)).Attr("blocksize", int64_t{2});
  Tensor spread = RunAllCounts(d2s, 8)[0].tensor();
  KernelTester s2d("SpaceToDepth", 13);
  s2d.Input(spread).Attr("blocksize", int64_t{2});
  Tensor back = RunAllCounts(s2d, 8)[0].tensor();
  EXPECT_EQ(back.shape(), Shape({2, 12, 6, 10}));
  EXPECT_EQ(ToVector<int32_t>(back), v);
  // ONNX's SpaceToDepth example, first channel: input [1, 2, 4, 4] of 0..31 -> channel 0 = [[0, 2], [8, 10]].
  KernelTester ex("SpaceToDepth", 13);
  ex.Input(MakeTensor<float>({1, 2, 4, 4}, Iota<float>(32))).Attr("blocksize", int64_t{2});
  const auto e = ToVector<float>(RunAllCounts(ex)[0].tensor());
  EXPECT_EQ(std::vector<float>(e.begin(), e.begin() + 8), (std::vector<float>{0, 2, 8, 10, 16, 18, 24, 26}));
  KernelTester bad("SpaceToDepth", 13);
  bad.NodeName("s2d").Input(MakeTensor<float>({1, 1, 3, 4}, Iota<float>(12))).Attr("blocksize", int64_t{2});
  EXPECT_NE(ErrorOf(bad).find("multiples"), std::string::npos);
  KernelTester rank("DepthToSpace", 13);
  rank.Input(MakeTensor<float>({4, 1, 1}, Iota<float>(4))).Attr("blocksize", int64_t{2});
  EXPECT_NE(ErrorOf(rank).find("4-D"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
