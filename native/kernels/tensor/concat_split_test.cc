#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(ConcatTest, AxesIncludingNegativeAndEmptyInputs) {
  Tensor a = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor b = MakeTensor<float>({2, 1}, {5, 6});
  Tensor empty = MakeTensor<float>({2, 0}, {});
  KernelTester t("Concat", 13);
  t.Input(a).Input(empty).Input(b).Input(empty).Attr("axis", int64_t{-1});
  Tensor y = RunAllCounts(t)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  KernelTester rows("Concat", 13);
  rows.Input(a).Input(MakeTensor<float>({1, 2}, {7, 8})).Attr("axis", int64_t{0});
  EXPECT_EQ(ToVector<float>(RunAllCounts(rows)[0].tensor()), (std::vector<float>{1, 2, 3, 4, 7, 8}));
  KernelTester strings("Concat", 13);
  strings.Input(MakeTensor<std::string>({1}, {"x"}))
      .Input(MakeTensor<std::string>({2}, {"y", "z"}))
      .Attr("axis", int64_t{0});
  EXPECT_EQ(ToVector<std::string>(RunAllCounts(strings)[0].tensor()), (std::vector<std::string>{"x", "y", "z"}));
}

TEST(ConcatTest, LargeAcrossParticipantsWithBlocksStraddlingInputs) {
  // Three inputs of 7, 1 and 13 columns; element value encodes (input, row, column).
  const int64_t rows = 3000;
  std::vector<int32_t> widths = {7, 1, 13};
  KernelTester t("Concat", 13);
  for (int i = 0; i < 3; ++i) {
    std::vector<int32_t> v(rows * widths[i]);
    for (int64_t r = 0; r < rows; ++r)
      for (int c = 0; c < widths[i]; ++c) v[r * widths[i] + c] = i * 100000000 + r * 100 + c;
    t.Input(MakeTensor<int32_t>({rows, widths[i]}, v));
  }
  t.Attr("axis", int64_t{1});
  const auto y = ToVector<int32_t>(RunAllCounts(t, 5)[0].tensor());
  ASSERT_EQ(y.size(), static_cast<size_t>(rows * 21));
  EXPECT_EQ(y[1234 * 21 + 0], 1234 * 100);
  EXPECT_EQ(y[1234 * 21 + 7], 100000000 + 1234 * 100);
  EXPECT_EQ(y[1234 * 21 + 20], 200000000 + 1234 * 100 + 12);
}

TEST(ConcatTest, RejectsMismatches) {
  KernelTester shape("Concat", 13);
  shape.NodeName("cat")
      .Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<float>({3, 1}, {5, 6, 7}))
      .Attr("axis", int64_t{1});
  const std::string m = ErrorOf(shape);
  EXPECT_NE(m.find("cat"), std::string::npos);
  EXPECT_NE(m.find("[3,1]"), std::string::npos) << m;
  KernelTester type("Concat", 13);
  type.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<double>({1}, {2})).Attr("axis", int64_t{0});
  EXPECT_FALSE(type.Run(1).ok());
  KernelTester axis("Concat", 13);
  axis.Input(MakeTensor<float>({1}, {1})).Attr("axis", int64_t{1});
  EXPECT_NE(ErrorOf(axis).find("axis"), std::string::npos);
}

TEST(SplitTest, SizesFromInputAttributeOrEqualParts) {
  Tensor x = MakeTensor<float>({2, 6}, Iota<float>(12));
  KernelTester input("Split", 13);
  input.Outputs(2).Input(x).Input(MakeTensor<int64_t>({2}, {2, 4})).Attr("axis", int64_t{1});
  auto out = RunAllCounts(input);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(ToVector<float>(out[1].tensor()), (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
  KernelTester attribute("Split", 11);
  attribute.Outputs(3).Input(x).Attr("split", std::vector<int64_t>{1, 0, 5}).Attr("axis", int64_t{-1});
  out = RunAllCounts(attribute);
  EXPECT_EQ(out[1].tensor().shape(), Shape({2, 0}));
  EXPECT_EQ(ToVector<float>(out[2].tensor()), (std::vector<float>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));
  KernelTester equal("Split", 13);
  equal.Outputs(2).Input(x);
  out = RunAllCounts(equal);
  EXPECT_EQ(ToVector<float>(out[1].tensor()), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  KernelTester uneven("Split", 18);
  uneven.Outputs(4).Input(MakeTensor<float>({7}, Iota<float>(7))).Attr("num_outputs", int64_t{4});
  out = RunAllCounts(uneven);
  EXPECT_EQ(out[0].tensor().shape(), Shape({2}));
  EXPECT_EQ(ToVector<float>(out[3].tensor()), (std::vector<float>{6}));
}

TEST(SplitTest, LargeAndErrors) {
  KernelTester big("Split", 13);
  big.Outputs(3)
      .Input(MakeTensor<int32_t>({1000, 30}, Iota<int32_t>(30000)))
      .Input(MakeTensor<int64_t>({3}, {11, 9, 10}))
      .Attr("axis", int64_t{1});
  auto out = RunAllCounts(big, 7);
  EXPECT_EQ(ToVector<int32_t>(out[1].tensor())[500 * 9 + 2], 500 * 30 + 13);
  KernelTester bad_sum("Split", 13);
  bad_sum.NodeName("sp")
      .Outputs(2)
      .Input(MakeTensor<float>({6}, Iota<float>(6)))
      .Input(MakeTensor<int64_t>({2}, {2, 5}));
  EXPECT_NE(ErrorOf(bad_sum).find("add up"), std::string::npos);
  KernelTester uneven("Split", 13);
  uneven.Outputs(4).Input(MakeTensor<float>({7}, Iota<float>(7)));
  EXPECT_NE(ErrorOf(uneven).find("evenly"), std::string::npos);
  KernelTester negative("Split", 13);
  negative.Outputs(2).Input(MakeTensor<float>({6}, Iota<float>(6))).Input(MakeTensor<int64_t>({2}, {-1, 7}));
  EXPECT_FALSE(negative.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
