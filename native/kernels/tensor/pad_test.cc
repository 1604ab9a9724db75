#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

std::vector<float> PadRow(const std::string& mode, std::vector<int64_t> pads, int opset = 19) {
  KernelTester t("Pad", opset);
  t.Input(MakeTensor<float>({1, 3}, {1, 2, 3})).Input(MakeTensor<int64_t>({4}, pads)).Attr("mode", mode);
  if (mode == "constant") t.Input(MakeTensor<float>({}, {9}));
  auto out = RunAllCounts(t);
  return out.empty() ? std::vector<float>{} : ToVector<float>(out[0].tensor());
}

TEST(PadTest, EveryModeOnOneRow) {
  EXPECT_EQ(PadRow("constant", {0, 2, 0, 1}), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(PadRow("edge", {0, 2, 0, 1}), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(PadRow("reflect", {0, 2, 0, 1}), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(PadRow("wrap", {0, 2, 0, 1}), (std::vector<float>{2, 3, 1, 2, 3, 1}));
  // Pads longer than the axis reflect repeatedly (numpy.pad's behaviour): 1 2 3 2 1 2 3 ...
  EXPECT_EQ(PadRow("reflect", {0, 0, 0, 5}), (std::vector<float>{1, 2, 3, 2, 1, 2, 3, 2}));
  // Negative pads crop.
  EXPECT_EQ(PadRow("constant", {0, -1, 0, 1}), (std::vector<float>{2, 3, 9}));
}

TEST(PadTest, OnnxReflectExampleAxesAndLarge) {
  // ONNX's reflect example: [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], pads [0, 2, 0, 0].
  KernelTester t("Pad", 13);
  t.Input(MakeTensor<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}))
      .Input(MakeTensor<int64_t>({4}, {0, 2, 0, 0}))
      .Attr("mode", std::string("reflect"));
  EXPECT_EQ(ToVector<float>(RunAllCounts(t)[0].tensor()),
            (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  KernelTester axes("Pad", 18);
  axes.Input(MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<int64_t>({2}, {1, 1}))
      .Input(MakeTensor<int32_t>({}, {7}))
      .Input(MakeTensor<int64_t>({1}, {-2}));
  Tensor y = RunAllCounts(axes)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({4, 2}));
  EXPECT_EQ(ToVector<int32_t>(y), (std::vector<int32_t>{7, 7, 1, 2, 3, 4, 7, 7}));
  KernelTester big("Pad", 13);
  big.Input(MakeTensor<int32_t>({200, 300}, Iota<int32_t>(60000)))
      .Input(MakeTensor<int64_t>({4}, {3, 5, 4, 6}))
      .Attr("mode", std::string("edge"));
  const auto v = ToVector<int32_t>(RunAllCounts(big, 500)[0].tensor());
  EXPECT_EQ(v.size(), 207u * 311u);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[206 * 311 + 310], 59999);
  EXPECT_EQ(v[100 * 311 + 50], 97 * 300 + 45);
  KernelTester v2("Pad", 2);
  v2.Input(MakeTensor<float>({2}, {1, 2})).Attr("pads", std::vector<int64_t>{1, 0}).Attr("value", 4.0f);
  EXPECT_EQ(ToVector<float>(RunAllCounts(v2)[0].tensor()), (std::vector<float>{4, 1, 2}));
  KernelTester strings("Pad", 13);
  strings.Input(MakeTensor<std::string>({1}, {"a"}))
      .Input(MakeTensor<int64_t>({2}, {1, 1}))
      .Input(MakeTensor<std::string>({}, {"_"}));
  EXPECT_EQ(ToVector<std::string>(RunAllCounts(strings)[0].tensor()), (std::vector<std::string>{"_", "a", "_"}));
}

TEST(PadTest, RejectsBadPads) {
  KernelTester count("Pad", 13);
  count.NodeName("pd").Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>({2}, {1, 1}));
  EXPECT_NE(ErrorOf(count).find("2 entries per padded axis"), std::string::npos);
  KernelTester crop("Pad", 13);
  crop.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({2}, {-2, -1}));
  EXPECT_NE(ErrorOf(crop).find("do not fit"), std::string::npos);
  KernelTester empty("Pad", 13);
  empty.Input(MakeTensor<float>({0}, {})).Input(MakeTensor<int64_t>({2}, {1, 1})).Attr("mode", std::string("edge"));
  EXPECT_NE(ErrorOf(empty).find("empty axis"), std::string::npos);
  KernelTester wrap_old("Pad", 13);
  wrap_old.Input(MakeTensor<float>({2}, {1, 2}))
      .Input(MakeTensor<int64_t>({2}, {1, 1}))
      .Attr("mode", std::string("wrap"));
  EXPECT_FALSE(wrap_old.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
