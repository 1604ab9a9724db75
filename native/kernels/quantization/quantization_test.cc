#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// The serial outputs, after the determinism check with the parallel path forced (small
// blocks).
std::vector<Value> RunAllCounts(KernelTester& t) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  return testing::DeterministicOutputs(t);
}

TEST(QuantizeLinearTest, PerTensorUint8RoundsHalfToEvenAndSaturates) {
  KernelTester t("QuantizeLinear", 21);
  // x / 2: 0, 0.5, 1, 1.5, 2.5, -0.5, -1.5, 500, -500, -127
  t.Input(MakeTensor<float>({10}, {0, 1, 2, 3, 5, -1, -3, 1000, -1000, -254}))
      .Input(MakeTensor<float>({}, {2.0f}))
      .Input(MakeTensor<uint8_t>({}, {128}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor()), (std::vector<uint8_t>{128, 128, 129, 130, 130, 128, 126, 255, 0, 1}));
}

TEST(QuantizeLinearTest, MissingZeroPointGivesUint8) {
  KernelTester t("QuantizeLinear", 13);
  t.Input(MakeTensor<float>({3}, {-1, 10, 300})).Input(MakeTensor<float>({}, {1.0f}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().dtype(), DataType::kUint8);
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor()), (std::vector<uint8_t>{0, 10, 255}));
}

TEST(QuantizeLinearTest, PerAxisInt8UsesEachChannelsScaleAndZeroPoint) {
  KernelTester t("QuantizeLinear", 13);
  t.Input(MakeTensor<float>({1, 3, 2}, {4, -4, 4, -4, 4, 1000}))
      .Input(MakeTensor<float>({3}, {1, 2, 4}))
      .Input(MakeTensor<int8_t>({3}, {0, 1, -1}))
      .Attr("axis", int64_t{1});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  // channel 0: 4, -4; channel 1: 2+1, -2+1; channel 2: 1-1, 250-1 -> 127.
  EXPECT_EQ(ToVector<int8_t>(out[0].tensor()), (std::vector<int8_t>{4, -4, 3, -1, 0, 127}));
}

TEST(QuantizeLinearTest, BlockedInt4WithRemainderBlock) {
  KernelTester t("QuantizeLinear", 21);
  // x [2, 5], axis 1, block 2: scale [2, 3]; the last block holds one column.
  t.Input(MakeTensor<float>({2, 5}, {1, 2, 3, 4, 5, -1, -2, -30, -40, 50}))
      .Input(MakeTensor<float>({2, 3}, {1, 1, 0.5f, 1, 2, 10}))
      .Input(MakeTensor<Int4>({2, 3}, {Int4{0}, Int4{1}, Int4{0}, Int4{0}, Int4{0}, Int4{-3}}))
      .Attr("axis", int64_t{1})
      .Attr("block_size", int64_t{2});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  std::vector<int> got;
  for (const Int4& v : ToVector<Int4>(out[0].tensor())) got.push_back(v.value);
  // row 0: 1, 2 | 3+1, 4+1 | 10 -> 7; row 1: -1, -2 | -15 -> -8, -20 -> -8 | 5-3.
  EXPECT_EQ(got, (std::vector<int>{1, 2, 4, 5, 7, -1, -2, -8, -8, 2}));
}

TEST(QuantizeLinearTest, Float8SaturateClampsElseGivesNaN) {
  for (int64_t saturate : {1, 0}) {
    KernelTester t("QuantizeLinear", 19);
    t.Input(MakeTensor<float>({3}, {1000, -1000, 3}))
        .Input(MakeTensor<float>({}, {1.0f}))
        .Input(MakeTensor<Float8E4M3FN>({}, {Float8E4M3FN::FromBits(0)}))
        .Attr("saturate", saturate);
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    std::vector<int> bits;
    for (const auto& v : ToVector<Float8E4M3FN>(out[0].tensor())) bits.push_back(v.bits);
    // 448 = 0x7E is the largest e4m3fn value, 0x7F its NaN; 3.0 = 0x44.
    if (saturate)
      EXPECT_EQ(bits, (std::vector<int>{0x7E, 0xFE, 0x44}));
    else
      EXPECT_EQ(bits, (std::vector<int>{0x7F, 0xFF, 0x44}));
  }
}

TEST(QuantizeLinearTest, OutputDtypeSelectsTypeWithoutZeroPoint) {
  KernelTester t("QuantizeLinear", 21);
  t.Input(MakeTensor<float>({2}, {-70000, 70000}))
      .Input(MakeTensor<float>({}, {1.0f}))
      .Attr("output_dtype", static_cast<int64_t>(DataType::kInt16));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<int16_t>(out[0].tensor()), (std::vector<int16_t>{-32768, 32767}));
}

TEST(QuantizeLinearTest, HalfInputAndScaleDivideInHalfPrecision) {
  // 1 / 0.007904052734375 (float16 0x200c) = 126.517 in float, 126.5 once rounded to
  // float16, which rounds half to even: 126 (float division would give 127).
  KernelTester t("QuantizeLinear", 21);
  t.Input(MakeTensor<Float16>({1}, {Float16::FromFloat(1.0f)}))
      .Input(MakeTensor<Float16>({}, {Float16::FromBits(0x200c)}))
      .Input(MakeTensor<int16_t>({}, {0}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<int16_t>(out[0].tensor()), (std::vector<int16_t>{126}));
}

TEST(QuantizeLinearTest, LargeInputIsIdenticalForEveryParticipantCount) {
  std::vector<float> x(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 300.0);
  std::vector<float> scales(50);
  std::vector<uint8_t> zeros(50);
  for (int i = 0; i < 50; ++i) {
    scales[i] = 0.5f + 0.25f * i;
    zeros[i] = static_cast<uint8_t>(100 + i);
  }
  KernelTester t("QuantizeLinear", 21);
  t.Input(MakeTensor<float>({10, 500}, x))
      .Input(MakeTensor<float>({10, 5}, scales))
      .Input(MakeTensor<uint8_t>({10, 5}, zeros))
      .Attr("axis", int64_t{1})
      .Attr("block_size", int64_t{100});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  // Spot check one element against the formula: row 3, column 250 -> block 2.
  const float q = x[3 * 500 + 250] / scales[3 * 5 + 2];
  const float expected = std::min(255.0f, std::max(0.0f, std::nearbyint(q) + zeros[17]));
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor())[3 * 500 + 250], static_cast<uint8_t>(expected));
}

TEST(QuantizeLinearTest, RejectsBadScaleShapesAndTypes) {
  {
    KernelTester t("QuantizeLinear", 13);
    t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
        .Input(MakeTensor<float>({2}, {1, 2}))
        .Attr("axis", int64_t{1});
    auto out = t.Run(1);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().ToString().find("per-axis scale"), std::string::npos) << out.status().ToString();
  }
  {
    KernelTester t("QuantizeLinear", 13);
    t.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<uint8_t>({1}, {0}));
    EXPECT_FALSE(t.Run(1).ok());  // zero point shape differs from the scale's
  }
  {
    KernelTester t("QuantizeLinear", 21);
    t.Input(MakeTensor<float>({2, 4}, std::vector<float>(8, 1.0f)))
        .Input(MakeTensor<float>({2, 3}, std::vector<float>(6, 1.0f)))
        .Attr("axis", int64_t{1})
        .Attr("block_size", int64_t{2});
    EXPECT_FALSE(t.Run(1).ok());  // ceil(4 / 2) = 2 blocks, not 3
  }
  {
    KernelTester t("QuantizeLinear", 21);
    t.Input(MakeTensor<float>({2}, {1, 2}))
        .Input(MakeTensor<float>({}, {1.0f}))
        .Input(MakeTensor<int8_t>({}, {0}))
        .Attr("output_dtype", static_cast<int64_t>(DataType::kUint8));
    EXPECT_FALSE(t.Run(1).ok());  // output_dtype disagrees with the zero point
  }
  {
    KernelTester t("QuantizeLinear", 13);
    t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
        .Input(MakeTensor<float>({3}, {1, 2, 3}))
        .Attr("axis", int64_t{2});
    EXPECT_FALSE(t.Run(1).ok());  // axis out of range
  }
}

TEST(DequantizeLinearTest, PerAxisUint8ToFloat) {
  KernelTester t("DequantizeLinear", 13);
  t.Input(MakeTensor<uint8_t>({2, 2}, {0, 255, 10, 20}))
      .Input(MakeTensor<float>({2}, {0.5f, 2.0f}))
      .Input(MakeTensor<uint8_t>({2}, {128, 10}))
      .Attr("axis", int64_t{1});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{-64.0f, 490.0f, -59.0f, 20.0f}));
}

TEST(DequantizeLinearTest, Int32WithoutZeroPoint) {
  KernelTester t("DequantizeLinear", 10);
  t.Input(MakeTensor<int32_t>({3}, {-2147483647 - 1, 7, 2147483647})).Input(MakeTensor<float>({}, {0.25f}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{-536870912.0f, 1.75f, 536870912.0f}));
}

TEST(DequantizeLinearTest, Float8AndInt4InputsAndHalfOutput) {
  {
    KernelTester t("DequantizeLinear", 19);
    // e4m3fn 0x44 = 3.0, 0xC8 = -4.0, 0x7E = 448.
    t.Input(MakeTensor<Float8E4M3FN>(
                {3}, {Float8E4M3FN::FromBits(0x44), Float8E4M3FN::FromBits(0xC8), Float8E4M3FN::FromBits(0x7E)}))
        .Input(MakeTensor<float>({}, {2.0f}));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{6.0f, -8.0f, 896.0f}));
  }
  {
    KernelTester t("DequantizeLinear", 23);
    t.Input(MakeTensor<Int4>({3}, {Int4{-8}, Int4{0}, Int4{7}}))
        .Input(MakeTensor<float>({}, {1.5f}))
        .Input(MakeTensor<Int4>({}, {Int4{-1}}))
        .Attr("output_dtype", static_cast<int64_t>(DataType::kFloat16));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].tensor().dtype(), DataType::kFloat16);
    std::vector<float> got;
    for (const Float16& h : ToVector<Float16>(out[0].tensor())) got.push_back(h.ToFloat());
    EXPECT_EQ(got, (std::vector<float>{-10.5f, 1.5f, 12.0f}));
  }
}

TEST(DequantizeLinearTest, SubByteValuesReadFromTheLowBitsEitherWay) {
  // -1 as int4 is 0xFF sign-extended or 0x0F packed (as ml_dtypes stores it); int2 -2 is
  // 0xFE or 0x02.
  KernelTester t("DequantizeLinear", 25);
  t.Input(MakeTensor<Int4>({2}, {Int4{-1}, Int4{0x0F}})).Input(MakeTensor<float>({}, {1.0f}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{-1.0f, -1.0f}));
  KernelTester t2("DequantizeLinear", 25);
  t2.Input(MakeTensor<Int2>({2}, {Int2{-2}, Int2{2}}))
      .Input(MakeTensor<float>({1}, {1.0f}))
      .Input(MakeTensor<Int2>({}, {Int2{1}}));
  auto out2 = RunAllCounts(t2);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(ToVector<float>(out2[0].tensor()), (std::vector<float>{-3.0f, -3.0f}));
}

TEST(DequantizeLinearTest, RejectsZeroPointOfAnotherType) {
  KernelTester t("DequantizeLinear", 13);
  t.Input(MakeTensor<uint8_t>({2}, {1, 2})).Input(MakeTensor<float>({}, {1.0f})).Input(MakeTensor<int8_t>({}, {0}));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("DequantizeLinear"), std::string::npos);
}

TEST(DynamicQuantizeLinearTest, MatchesTheOnnxExample) {
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input(MakeTensor<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})).Outputs(3);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 3u);
  // Range [-3, 2]: scale 5/255, zero point 3 / (5/255) = 153.
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor()), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ(ToVector<float>(out[1].tensor())[0], 5.0f / 255.0f);
  EXPECT_EQ(ToVector<uint8_t>(out[2].tensor())[0], 153);
}

TEST(DynamicQuantizeLinearTest, ChunkedRangeIsIdenticalForEveryParticipantCount) {
  std::vector<float> x(3000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::cos(0.11 * i) * (1.0 + i % 7));
  x[2999] = -9.0f;  // the minimum sits in the last chunk
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input(MakeTensor<float>({3000}, x)).Outputs(3);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 3u);
  float hi = 0;
  for (float v : x) hi = std::max(hi, v);
  EXPECT_FLOAT_EQ(ToVector<float>(out[1].tensor())[0], (hi + 9.0f) / 255.0f);
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor())[2999], 0);
}

// The ONNX definition (onnx.reference's DynamicQuantizeLinear) spelled out in float32 as
// numpy evaluates it: range [min(0, min x), max(0, max x)] over the non-NaN elements, scale
// = (max - min or 1) / 255, zero = round(clip(-min / scale, 0, 255)), y = clip(round(x /
// scale) + zero, 0, 255), round half to even, a NaN quotient giving the zero point (the
// kernel's documented NaN rule; numpy's cast of NaN is undefined).
struct DqlReference {
  std::vector<uint8_t> y;
  float scale;
  uint8_t zero;
};
DqlReference DynamicQuantizeReference(const std::vector<float>& x) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : x) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  DqlReference r;
  r.scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zf = -lo / r.scale;
  r.zero = static_cast<uint8_t>(std::nearbyint(std::isnan(zf) ? 0.0f : std::min(255.0f, std::max(0.0f, zf))));
  for (float v : x) {
    const float q = v / r.scale;
    const float t = (std::isnan(q) ? 0.0f : std::nearbyint(q)) + static_cast<float>(r.zero);
    r.y.push_back(static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, t))));
  }
  return r;
}

void ExpectDynamicQuantizeMatchesReference(const std::vector<float>& x) {
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input(MakeTensor<float>({static_cast<int64_t>(x.size())}, x)).Outputs(3);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 3u);
  const DqlReference want = DynamicQuantizeReference(x);
  ASSERT_EQ(ToVector<float>(out[1].tensor())[0], want.scale) << "n " << x.size();
  ASSERT_EQ(ToVector<uint8_t>(out[2].tensor())[0], want.zero) << "n " << x.size();
  ASSERT_EQ(ToVector<uint8_t>(out[0].tensor()), want.y) << "n " << x.size();
}

// Range [-64, 63.5]: scale 0.5 and zero point 128 exactly, so x = k / 4 gives quotients k / 2,
// a tie at every odd k, which must go to the even one of floor(k / 2) and floor(k / 2) + 1.
TEST(DynamicQuantizeLinearTest, TiesRoundHalfToEvenInEveryLaneAndTail) {
  std::vector<float> x;
  for (int k = -256; k <= 254; ++k) x.push_back(static_cast<float>(k) / 4.0f);
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input(MakeTensor<float>({static_cast<int64_t>(x.size())}, x)).Outputs(3);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(ToVector<float>(out[1].tensor())[0], 0.5f);
  EXPECT_EQ(ToVector<uint8_t>(out[2].tensor())[0], 128);
  const auto y = ToVector<uint8_t>(out[0].tensor());
  for (size_t i = 0; i < x.size(); ++i) {
    const int k = static_cast<int>(i) - 256;
    const int half_floor = (k - ((k % 2 + 2) % 2)) / 2;  // floor(k / 2), exact division
    const int rounded = (k % 2 == 0) ? k / 2 : (half_floor % 2 == 0 ? half_floor : half_floor + 1);
    ASSERT_EQ(y[i], rounded + 128) << "x " << x[i];
  }
}

TEST(DynamicQuantizeLinearTest, EveryLengthMatchesTheDefinitionBitForBit) {
  std::vector<float> pool(5000);
  for (size_t i = 0; i < pool.size(); ++i) {
    pool[i] = static_cast<float>(std::sin(0.37 * i) * 3.0 + std::cos(1.3 * i) * (i % 5 == 0 ? 7.0 : 0.25));
  }
  for (size_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257, 1023, 4099}) {
    ExpectDynamicQuantizeMatchesReference(std::vector<float>(pool.begin(), pool.begin() + n));
  }
  // Positive only (zero point 0), negative only (zero point 255), all zero (scale 1 / 255).
  std::vector<float> positive(77), negative(77), zeros(77, 0.0f);
  for (int i = 0; i < 77; ++i) positive[i] = 0.5f + i * 0.031f, negative[i] = -positive[i];
  ExpectDynamicQuantizeMatchesReference(positive);
  ExpectDynamicQuantizeMatchesReference(negative);
  ExpectDynamicQuantizeMatchesReference(zeros);
}

TEST(DynamicQuantizeLinearTest, NaNsSkipTheRangeAndQuantizeToTheZeroPoint) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(37);
  for (int i = 0; i < 37; ++i) x[i] = (i % 3 == 0) ? nan : static_cast<float>(i) * 0.1f - 1.5f;
  x[0] = -0.0f;
  ExpectDynamicQuantizeMatchesReference(x);
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input(MakeTensor<float>({37}, x)).Outputs(3);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 3u);
  const uint8_t zero = ToVector<uint8_t>(out[2].tensor())[0];
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor())[3], zero);
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor())[36], zero);
  // Infinities: the scale becomes infinite; the definition still gives a value per element.
  std::vector<float> inf(20, 1.0f);
  inf[5] = std::numeric_limits<float>::infinity();
  inf[17] = -2.0f;
  ExpectDynamicQuantizeMatchesReference(inf);
}

// The 8-bit rows (byte_lanes.h: 16 lanes per step, the scalar formula for the tail), per
// tensor and per axis (a run per channel), at lengths around every multiple of 16, against
// the ONNX reference formula spelled out in double: y = saturate(round_half_even(float(x /
// scale)) + zero_point), a NaN quotient giving the zero point (the kernel's documented NaN
// rule: ONNX leaves it undefined).
template <typename Q>
Q ReferenceQuantize(float x, float scale, int zero_point) {
  const float q = x / scale;
  const double r = std::isnan(q) ? zero_point : std::nearbyint(static_cast<double>(q)) + zero_point;
  const double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::min(hi, std::max(lo, r)));
}

// Multiples of 0.25 in [-87.5, 87.5] (ties at scale 0.5: x / 0.5 = k + 0.5) with NaN,
// infinities, a negative zero and values that saturate either way every 11th element.
std::vector<float> QuantizeLinearInputs(int64_t n) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            1e30f,
                            -1e30f,
                            70000.0f,
                            -70000.0f};
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[i] = i % 11 == 5 ? specials[(i / 11) % 8] : static_cast<float>((i * 37) % 701 - 350) * 0.25f;
  }
  return x;
}

template <typename Q>
void ExpectQuantizeRowsMatchReference(int64_t channels, int64_t inner) {
  const int64_t n = channels * inner;
  const std::vector<float> x = QuantizeLinearInputs(n);
  std::vector<float> scales;
  std::vector<Q> zeros;
  for (int64_t c = 0; c < channels; ++c) {
    scales.push_back(c % 2 == 0 ? 0.5f : 0.3f + 0.1f * static_cast<float>(c));
    zeros.push_back(static_cast<Q>(std::numeric_limits<Q>::min() + (60 + 13 * c) % 256));
  }
  KernelTester t("QuantizeLinear", 13);
  const Shape param_shape = channels == 1 ? Shape{} : Shape{channels};
  t.Input(MakeTensor<float>({channels, inner}, x))
      .Input(MakeTensor<float>(param_shape, scales))
      .Input(MakeTensor<Q>(param_shape, zeros))
      .Attr("axis", int64_t{0});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<Q>(out[0].tensor());
  for (int64_t e = 0; e < n; ++e) {
    const int64_t c = e / inner;
    ASSERT_EQ(static_cast<int>(y[e]), static_cast<int>(ReferenceQuantize<Q>(x[e], scales[c], zeros[c])))
        << "x " << x[e] << " at " << e << " of " << channels << " x " << inner;
  }
}

TEST(QuantizeLinearTest, EightBitRowsOfEveryLengthMatchTheFormulaBitForBit) {
  for (int64_t inner : {1, 7, 15, 16, 17, 31, 32, 33, 47, 100, 1000}) {
    ExpectQuantizeRowsMatchReference<uint8_t>(1, inner);
    ExpectQuantizeRowsMatchReference<int8_t>(1, inner);
    ExpectQuantizeRowsMatchReference<uint8_t>(5, inner);
    ExpectQuantizeRowsMatchReference<int8_t>(5, inner);
  }
}

// Per axis along the last axis: each element its own parameter (the strided-parameter run).
TEST(QuantizeLinearTest, EightBitPerAxisAlongTheLastAxis) {
  const std::vector<float> x = QuantizeLinearInputs(3 * 20);
  std::vector<float> scales(20);
  std::vector<int8_t> zeros(20);
  for (int i = 0; i < 20; ++i)
    scales[i] = 0.25f * static_cast<float>(i + 1), zeros[i] = static_cast<int8_t>(i * 5 - 50);
  KernelTester t("QuantizeLinear", 13);
  t.Input(MakeTensor<float>({3, 20}, x))
      .Input(MakeTensor<float>({20}, scales))
      .Input(MakeTensor<int8_t>({20}, zeros))
      .Attr("axis", int64_t{1});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<int8_t>(out[0].tensor());
  for (int64_t e = 0; e < 60; ++e) {
    ASSERT_EQ(y[e], ReferenceQuantize<int8_t>(x[e], scales[e % 20], zeros[e % 20])) << "at " << e;
  }
}

// y = (x - zero_point) * scale in float, every byte value, per tensor and per axis, lengths
// around multiples of 16.
template <typename Q>
void ExpectDequantizeRowsMatchReference(int64_t channels, int64_t inner) {
  const int64_t n = channels * inner;
  std::vector<Q> x(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) x[e] = static_cast<Q>(std::numeric_limits<Q>::min() + (e * 7 + e / 256) % 256);
  std::vector<float> scales;
  std::vector<Q> zeros;
  for (int64_t c = 0; c < channels; ++c) {
    scales.push_back(0.0123f * static_cast<float>(c + 1));
    zeros.push_back(static_cast<Q>(std::numeric_limits<Q>::min() + (90 + 31 * c) % 256));
  }
  KernelTester t("DequantizeLinear", 13);
  const Shape param_shape = channels == 1 ? Shape{} : Shape{channels};
  t.Input(MakeTensor<Q>({channels, inner}, x))
      .Input(MakeTensor<float>(param_shape, scales))
      .Input(MakeTensor<Q>(param_shape, zeros))
      .Attr("axis", int64_t{0});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto y = ToVector<float>(out[0].tensor());
  for (int64_t e = 0; e < n; ++e) {
    const int64_t c = e / inner;
    // The product of two floats rounded once: the double product rounded to float.
    const float want =
        static_cast<float>(static_cast<double>(static_cast<int>(x[e]) - static_cast<int>(zeros[c])) * scales[c]);
    ASSERT_EQ(y[e], want) << "at " << e << " of " << channels << " x " << inner;
  }
}

TEST(DequantizeLinearTest, EightBitRowsOfEveryLengthMatchTheFormulaBitForBit) {
  for (int64_t inner : {1, 7, 15, 16, 17, 31, 32, 33, 47, 100, 1000}) {
    ExpectDequantizeRowsMatchReference<uint8_t>(1, inner);
    ExpectDequantizeRowsMatchReference<int8_t>(1, inner);
    ExpectDequantizeRowsMatchReference<uint8_t>(3, inner);
    ExpectDequantizeRowsMatchReference<int8_t>(3, inner);
  }
}

}  // namespace
}  // namespace onnx_light
