#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

// The serial output, checked bit-identical against 2, 4 and 8 participants.
Tensor Built(KernelTester& t) {
  auto out = RunAllCounts(t, 1024);
  return out.empty() ? Tensor() : out[0].tensor();
}

TEST(ConstantOfShapeTest, FillsWithValueOrFloatZero) {
  KernelTester zero("ConstantOfShape", 9);
  zero.Input(MakeTensor<int64_t>({2}, {2, 3}));
  Tensor z = Built(zero);
  EXPECT_EQ(z.dtype(), DataType::kFloat);
  EXPECT_EQ(ToVector<float>(z), std::vector<float>(6, 0.0f));

  KernelTester sevens("ConstantOfShape", 25);
  sevens.Input(MakeTensor<int64_t>({3}, {7, 101, 143})).Attr("value", MakeTensor<int32_t>({1}, {7}));
  Tensor s = Built(sevens);
  EXPECT_EQ(s.shape(), Shape({7, 101, 143}));
  EXPECT_EQ(ToVector<int32_t>(s), std::vector<int32_t>(7 * 101 * 143, 7));

  KernelTester scalar("ConstantOfShape", 20);
  scalar.Input(MakeTensor<int64_t>({0}, {})).Attr("value", MakeTensor<double>({1}, {2.5}));
  EXPECT_EQ(ToVector<double>(Built(scalar)), std::vector<double>{2.5});

  KernelTester empty("ConstantOfShape", 20);
  empty.Input(MakeTensor<int64_t>({2}, {0, 5}));
  EXPECT_EQ(Built(empty).shape(), Shape({0, 5}));
}

TEST(ConstantOfShapeTest, RejectsBadShapes) {
  KernelTester negative("ConstantOfShape", 20);
  negative.NodeName("cos").Input(MakeTensor<int64_t>({2}, {2, -1}));
  EXPECT_NE(ErrorOf(negative).find("cos"), std::string::npos);
  KernelTester huge("ConstantOfShape", 20);
  huge.Input(MakeTensor<int64_t>({3}, {int64_t{1} << 40, int64_t{1} << 40, 1 << 20}));
  EXPECT_FALSE(huge.Run(1).ok());
  KernelTester wrong_type("ConstantOfShape", 20);
  wrong_type.Input(MakeTensor<int32_t>({1}, {3}));
  EXPECT_NE(ErrorOf(wrong_type).find("int64"), std::string::npos);
}

TEST(RangeTest, OnnxExamplesAndEdges) {
  KernelTester up("Range", 11);
  up.Input(MakeTensor<int32_t>({}, {3})).Input(MakeTensor<int32_t>({}, {9})).Input(MakeTensor<int32_t>({}, {3}));
  EXPECT_EQ(ToVector<int32_t>(Built(up)), (std::vector<int32_t>{3, 6}));
  KernelTester down("Range", 11);
  down.Input(MakeTensor<int16_t>({}, {10})).Input(MakeTensor<int16_t>({}, {4})).Input(MakeTensor<int16_t>({}, {-2}));
  EXPECT_EQ(ToVector<int16_t>(Built(down)), (std::vector<int16_t>{10, 8, 6}));
  KernelTester f("Range", 11);
  f.Input(MakeTensor<float>({}, {1})).Input(MakeTensor<float>({}, {2})).Input(MakeTensor<float>({}, {0.25f}));
  EXPECT_EQ(ToVector<float>(Built(f)), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  KernelTester none("Range", 11);
  none.Input(MakeTensor<double>({}, {5})).Input(MakeTensor<double>({}, {1})).Input(MakeTensor<double>({}, {1}));
  EXPECT_EQ(Built(none).shape(), Shape({0}));
  // The full int64 span: no overflow in the count or the values.
  KernelTester wide("Range", 11);
  wide.Input(MakeTensor<int64_t>({}, {INT64_MIN}))
      .Input(MakeTensor<int64_t>({}, {INT64_MAX}))
      .Input(MakeTensor<int64_t>({}, {int64_t{1} << 62}));
  EXPECT_EQ(ToVector<int64_t>(Built(wide)),
            (std::vector<int64_t>{INT64_MIN, -(int64_t{1} << 62), 0, int64_t{1} << 62}));
  KernelTester zero("Range", 11);
  zero.NodeName("rz")
      .Input(MakeTensor<int32_t>({}, {0}))
      .Input(MakeTensor<int32_t>({}, {5}))
      .Input(MakeTensor<int32_t>({}, {0}));
  EXPECT_NE(ErrorOf(zero).find("delta"), std::string::npos);
  KernelTester mixed("Range", 11);
  mixed.Input(MakeTensor<int32_t>({}, {0})).Input(MakeTensor<int64_t>({}, {5})).Input(MakeTensor<int32_t>({}, {1}));
  EXPECT_FALSE(mixed.Run(1).ok());
}

TEST(RangeTest, LargeRangesMatchAcrossParticipants) {
  KernelTester t("Range", 11);
  t.Input(MakeTensor<int32_t>({}, {-50000}))
      .Input(MakeTensor<int32_t>({}, {150001}))
      .Input(MakeTensor<int32_t>({}, {1}));
  const auto v = ToVector<int32_t>(Built(t));
  ASSERT_EQ(v.size(), 200001u);
  EXPECT_EQ(v.front(), -50000);
  EXPECT_EQ(v.back(), 150000);
  KernelTester h("Range", 27);
  h.Input(MakeTensor<Float16>({}, {Float16::FromFloat(2048)}))
      .Input(MakeTensor<Float16>({}, {Float16::FromFloat(2060)}))
      .Input(MakeTensor<Float16>({}, {Float16::FromFloat(2)}));
  std::vector<float> got;
  for (const Float16& x : ToVector<Float16>(Built(h))) got.push_back(x.ToFloat());
  EXPECT_EQ(got, (std::vector<float>{2048, 2050, 2052, 2054, 2056, 2058}));
}

TEST(EyeLikeTest, DiagonalsAndTypes) {
  KernelTester t("EyeLike", 9);
  t.Input(MakeTensor<float>({3, 4}, std::vector<float>(12, 5.0f))).Attr("k", int64_t{1});
  EXPECT_EQ(ToVector<float>(Built(t)), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  KernelTester below("EyeLike", 9);
  below.Input(MakeTensor<int64_t>({3, 2}, std::vector<int64_t>(6, 0))).Attr("k", int64_t{-1}).Attr("dtype", int64_t{6});
  Tensor b = Built(below);
  EXPECT_EQ(b.dtype(), DataType::kInt32);
  EXPECT_EQ(ToVector<int32_t>(b), (std::vector<int32_t>{0, 0, 1, 0, 0, 1}));
  for (int64_t k : {INT64_MIN, INT64_MAX}) {
    KernelTester far("EyeLike", 22);
    far.Input(MakeTensor<BFloat16>({2, 2}, std::vector<BFloat16>(4))).Attr("k", k);
    for (const BFloat16& x : ToVector<BFloat16>(Built(far))) EXPECT_EQ(x.bits, 0);
  }
  KernelTester big("EyeLike", 22);
  big.Input(MakeTensor<double>({700, 900}, std::vector<double>(700 * 900)));
  const auto eye = ToVector<double>(Built(big));
  double trace = 0, sum = 0;
  for (int64_t r = 0; r < 700; ++r) trace += eye[r * 900 + r];
  for (double x : eye) sum += x;
  EXPECT_EQ(trace, 700);
  EXPECT_EQ(sum, 700);
  KernelTester rank3("EyeLike", 22);
  rank3.Input(MakeTensor<float>({1, 1, 1}, {0}));
  EXPECT_NE(ErrorOf(rank3).find("2-D"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
