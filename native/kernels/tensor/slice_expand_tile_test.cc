#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

Tensor SliceOf(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
               std::vector<int64_t> steps, int64_t grain = 1) {
  KernelTester t("Slice", 13);
  const int64_t n = static_cast<int64_t>(starts.size());
  t.Input(x)
      .Input(MakeTensor<int64_t>({n}, starts))
      .Input(MakeTensor<int64_t>({n}, ends))
      .Input(MakeTensor<int64_t>({n}, axes))
      .Input(MakeTensor<int64_t>({n}, steps));
  auto out = RunAllCounts(t, grain);
  return out.empty() ? Tensor() : out[0].tensor();
}

TEST(SliceTest, OnnxExamplesStepsAndClamping) {
  Tensor x = MakeTensor<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // ONNX example 1: starts [1, 0], ends [2, 3], steps [1, 2] -> [[5, 7]].
  Tensor a = SliceOf(x, {1, 0}, {2, 3}, {0, 1}, {1, 2});
  EXPECT_EQ(a.shape(), Shape({1, 2}));
  EXPECT_EQ(ToVector<float>(a), (std::vector<float>{5, 7}));
  // ONNX example 2: starts [0, 1], ends [-1, 1000] -> [[2, 3, 4]].
  EXPECT_EQ(ToVector<float>(SliceOf(x, {0, 1}, {-1, 1000}, {0, 1}, {1, 1})), (std::vector<float>{2, 3, 4}));
  // Reverse the columns with the most negative end.
  EXPECT_EQ(ToVector<float>(SliceOf(x, {-1}, {INT64_MIN}, {1}, {-1})), (std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5}));
  // Negative step from beyond the end, every other element.
  EXPECT_EQ(ToVector<float>(SliceOf(x, {100}, {0}, {-1}, {-2})), (std::vector<float>{4, 2, 8, 6}));
  // Empty result when start >= end.
  EXPECT_EQ(SliceOf(x, {3}, {1}, {1}, {1}).shape(), Shape({2, 0}));
}

TEST(SliceTest, LargeAttributeFormAndErrors) {
  // [300, 400] with data = flat index; rows 10..290 step 7, columns 399..0 step -3.
  Tensor x = MakeTensor<int32_t>({300, 400}, Iota<int32_t>(120000));
  Tensor y = SliceOf(x, {10, 399}, {290, -1000}, {0, 1}, {7, -3}, 64);
  EXPECT_EQ(y.shape(), Shape({40, 134}));
  EXPECT_EQ(ToVector<int32_t>(y)[5 * 134 + 2], (10 + 5 * 7) * 400 + (399 - 2 * 3));
  KernelTester v1("Slice", 1);
  v1.Input(MakeTensor<float>({2, 4}, Iota<float>(8)))
      .Attr("starts", std::vector<int64_t>{1})
      .Attr("ends", std::vector<int64_t>{3})
      .Attr("axes", std::vector<int64_t>{1});
  EXPECT_EQ(ToVector<float>(RunAllCounts(v1)[0].tensor()), (std::vector<float>{1, 2, 5, 6}));
  KernelTester zero("Slice", 13);
  zero.NodeName("sl")
      .Input(x)
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<int64_t>({1}, {5}))
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<int64_t>({1}, {0}));
  EXPECT_NE(ErrorOf(zero).find("step"), std::string::npos);
  KernelTester axis("Slice", 13);
  axis.Input(x)
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<int64_t>({1}, {5}))
      .Input(MakeTensor<int64_t>({1}, {2}));
  EXPECT_NE(ErrorOf(axis).find("out of range"), std::string::npos);
}

TEST(ExpandTest, BidirectionalBroadcast) {
  KernelTester t("Expand", 13);
  t.Input(MakeTensor<float>({3, 1}, {1, 2, 3})).Input(MakeTensor<int64_t>({3}, {2, 1, 4}));
  Tensor y = RunAllCounts(t)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({2, 3, 4}));
  EXPECT_EQ(ToVector<float>(y),
            (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  KernelTester smaller("Expand", 13);  // the shape may be shorter than the input's rank
  smaller.Input(MakeTensor<int32_t>({2, 3}, Iota<int32_t>(6))).Input(MakeTensor<int64_t>({1}, {1}));
  EXPECT_EQ(RunAllCounts(smaller)[0].tensor().shape(), Shape({2, 3}));
  KernelTester big("Expand", 13);
  big.Input(MakeTensor<int32_t>({1, 500}, Iota<int32_t>(500))).Input(MakeTensor<int64_t>({2}, {600, 500}));
  const auto v = ToVector<int32_t>(RunAllCounts(big, 1000)[0].tensor());
  EXPECT_EQ(v[599 * 500 + 321], 321);
  KernelTester bad("Expand", 13);
  bad.NodeName("ex").Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({1}, {4}));
  EXPECT_NE(ErrorOf(bad).find("cannot expand"), std::string::npos);
  KernelTester overflow("Expand", 13);
  overflow.Input(MakeTensor<float>({1}, {1}))
      .Input(MakeTensor<int64_t>({3}, {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31}));
  EXPECT_FALSE(overflow.Run(1).ok());
}

TEST(TileTest, RepeatsAndTile1) {
  KernelTester t("Tile", 13);
  t.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>({2}, {2, 3}));
  Tensor y = RunAllCounts(t)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({4, 6}));
  EXPECT_EQ(ToVector<float>(y),
            (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  KernelTester strings("Tile", 13);
  strings.Input(MakeTensor<std::string>({2}, {"a", "b"})).Input(MakeTensor<int64_t>({1}, {2}));
  EXPECT_EQ(ToVector<std::string>(RunAllCounts(strings)[0].tensor()), (std::vector<std::string>{"a", "b", "a", "b"}));
  KernelTester v1("Tile", 1);
  v1.Input(MakeTensor<float>({1, 2}, {1, 2})).Input(MakeTensor<int64_t>({}, {3})).Input(MakeTensor<int64_t>({}, {0}));
  EXPECT_EQ(RunAllCounts(v1)[0].tensor().shape(), Shape({3, 2}));
  KernelTester big("Tile", 13);
  big.Input(MakeTensor<int32_t>({30, 7}, Iota<int32_t>(210))).Input(MakeTensor<int64_t>({2}, {40, 50}));
  const auto v = ToVector<int32_t>(RunAllCounts(big, 100)[0].tensor());
  EXPECT_EQ(v[(1000) * 350 + 345], (1000 % 30) * 7 + 345 % 7);
  KernelTester negative("Tile", 13);
  negative.NodeName("tl").Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({1}, {-1}));
  EXPECT_NE(ErrorOf(negative).find("negative"), std::string::npos);
  KernelTester overflow("Tile", 13);
  overflow.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({1}, {INT64_MAX}));
  EXPECT_NE(ErrorOf(overflow).find("overflow"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
