#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/tensor/cast_convert.h"
#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Runs Cast serially and checks 2, 4 and 8 participants (parallel path forced) give the
// same bytes; returns the serial output.
Tensor CastAllCounts(const Tensor& x, DataType to, int opset = 25, int64_t saturate = 1,
                     const std::string& round_mode = "up") {
  KernelTester t("Cast", opset);
  t.Input(x)
      .Attr("to", static_cast<int64_t>(to))
      .Tuning(param::kMinimumElements, int64_t{1})
      .Tuning(param::kBlockElements, int64_t{256});
  if (opset >= 19) t.Attr("saturate", saturate);
  if (opset >= 24) t.Attr("round_mode", round_mode);
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  if (serial.empty()) return Tensor();
  return testing::Detach(serial.at(0)).tensor();
}

template <typename T>
std::vector<uint8_t> Bytes(const Tensor& t) {
  std::vector<uint8_t> out;
  for (const T& v : ToVector<T>(t)) out.push_back(v.bits);
  return out;
}

// Every float16 codec variant against the scalar codec of native/core (which the portable
// variant is); variants this CPU cannot run, or the ISA cap excludes, are skipped by name.
class HalfCodecVariantTest : public ::testing::TestWithParam<IsaVariant<cast_internal::HalfCodec>> {};

TEST_P(HalfCodecVariantTest, FloatToHalfMatchesScalarCodecOnEveryHalfAndAFloatSweep) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  std::vector<float> values;
  for (uint32_t h = 0; h < 65536; ++h) values.push_back(HalfBitsToFloat(static_cast<uint16_t>(h)));
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) values.push_back(BitsToFloat(static_cast<uint32_t>(u)));
  // Rounding boundaries: halfway between neighbouring halves, and the overflow edge.
  values.insert(values.end(), {65504.0f, 65519.99f, 65520.0f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f});
  for (size_t n : {values.size(), size_t{7}, size_t{9}}) {  // also tails shorter than a vector
    std::vector<uint16_t> fast(n);
    GetParam().impl.float_to_half(values.data(), fast.data(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(fast[i], FloatToHalfBits(values[i])) << "value " << values[i] << " at " << i;
    }
  }
}

TEST_P(HalfCodecVariantTest, HalfToFloatMatchesScalarCodec) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> fast(all.size());
  GetParam().impl.half_to_float(all.data(), fast.data(), all.size());
  for (uint32_t h = 0; h < 65536; ++h) {
    const float expected = HalfBitsToFloat(all[h]);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(fast[h])) << h;
      continue;
    }
    ASSERT_EQ(0, std::memcmp(&fast[h], &expected, 4)) << "half bits " << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, HalfCodecVariantTest, ::testing::ValuesIn(cast_internal::HalfCodecVariants()),
                         IsaVariantTestName<cast_internal::HalfCodec>);

// The fast entry points take the best enabled variant, and decline when that is portable.
TEST(CastTest, FastCodecIsTheBestEnabledVariant) {
  const auto& best = BestVariant(cast_internal::HalfCodecVariants());
  float x = 1.5f;
  uint16_t h = 0;
  EXPECT_EQ(cast_internal::FloatToHalfFast(&x, &h, 1), best.isa != Isa::kPortable) << best.name;
}

TEST(CastTest, FloatToFloat16KnownValuesAcrossParticipantCounts) {
  std::vector<float> x(100003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 9000.0f;
  x[0] = 65520.0f;            // rounds to infinity
  x[1] = 1.0f + 1.0f / 2048;  // halfway between 1 and its successor: ties to even -> 1
  x[2] = -0.0f;
  Tensor y = CastAllCounts(MakeTensor<float>({100003}, x), DataType::kFloat16);
  const auto h = ToVector<Float16>(y);
  EXPECT_EQ(h[0].bits, 0x7c00);
  EXPECT_EQ(h[1].bits, 0x3c00);
  EXPECT_EQ(h[2].bits, 0x8000);
  // 5 * 0.37f - 9000 = -8998.15: halves step by 8 above 8192, so the nearest is -9000.
  EXPECT_EQ(h[5].ToFloat(), -9000.0f);
}

TEST(CastTest, EveryFloat8CodeRoundTripsThroughFloat) {
  const DataType types[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                            DataType::kFloat8E5M2FNUZ, DataType::kFloat8E8M0};
  for (DataType type : types) {
    std::vector<Float8E4M3FN> codes(256);  // same layout for every 8-bit format
    for (int b = 0; b < 256; ++b) codes[b].bits = static_cast<uint8_t>(b);
    Tensor storage = MakeTensor<Float8E4M3FN>({256}, codes);
    Tensor coded = Tensor::Borrow(type, storage.shape(), storage.raw_data(), nullptr);
    Tensor wide = CastAllCounts(coded, DataType::kDouble);
    Tensor back = CastAllCounts(wide, type, 25, /*saturate=*/0);
    const auto decoded = ToVector<double>(wide);
    const auto again = Bytes<Float8E4M3FN>(back);
    const NarrowFloatFormat& f = *(type == DataType::kFloat8E4M3FN     ? &formats::kFloat8E4M3FN
                                   : type == DataType::kFloat8E4M3FNUZ ? &formats::kFloat8E4M3FNUZ
                                   : type == DataType::kFloat8E5M2     ? &formats::kFloat8E5M2
                                   : type == DataType::kFloat8E5M2FNUZ ? &formats::kFloat8E5M2FNUZ
                                                                       : &formats::kFloat8E8M0);
    for (int b = 0; b < 256; ++b) {
      const double exact = NarrowFloatToDouble(b, f);
      if (std::isnan(exact)) {
        EXPECT_TRUE(std::isnan(decoded[b])) << DataTypeName(type) << " code " << b;
        EXPECT_TRUE(std::isnan(NarrowFloatToDouble(again[b], f))) << DataTypeName(type) << " code " << b;
        continue;
      }
      EXPECT_EQ(decoded[b], exact) << DataTypeName(type) << " code " << b;
      EXPECT_EQ(again[b], b) << DataTypeName(type) << " code " << b;
    }
  }
}

TEST(CastTest, Float8SaturationAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = MakeTensor<float>({7}, {448.0f, 480.0f, 1e6f, -inf, nan, 0.001953125f, 0.0029296875f});
  // E4M3FN: max 448 = 0x7E; NaN 0x7F; 2^-9 is the smallest subnormal (code 1); 1.5 * 2^-9
  // is halfway between codes 1 and 2: ties to even -> 2.
  EXPECT_EQ(Bytes<Float8E4M3FN>(CastAllCounts(x, DataType::kFloat8E4M3FN)),
            (std::vector<uint8_t>{0x7e, 0x7e, 0x7e, 0xfe, 0x7f, 0x01, 0x02}));
  const auto no_sat = Bytes<Float8E4M3FN>(CastAllCounts(x, DataType::kFloat8E4M3FN, 25, 0));
  EXPECT_EQ(no_sat[0], 0x7e);
  for (int i : {1, 2, 3, 4}) EXPECT_EQ(no_sat[i] & 0x7f, 0x7f) << i;  // NaN, either sign
  // E5M2 keeps infinities when not saturating: max 57344 = 0x7B, inf = 0x7C.
  const auto e5 = Bytes<Float8E5M2>(CastAllCounts(x, DataType::kFloat8E5M2, 25, 0));
  EXPECT_EQ(e5[2], 0x7c);
  EXPECT_EQ(e5[3], 0xfc);
  EXPECT_EQ(Bytes<Float8E5M2>(CastAllCounts(x, DataType::kFloat8E5M2))[2], 0x7b);
  // FNUZ: no negative zero, NaN is 0x80.
  const auto fnuz =
      Bytes<Float8E4M3FNUZ>(CastAllCounts(MakeTensor<float>({2}, {-0.0f, nan}), DataType::kFloat8E4M3FNUZ));
  EXPECT_EQ(fnuz, (std::vector<uint8_t>{0x00, 0x80}));
}

TEST(CastTest, E8M0RoundModes) {
  Tensor x = MakeTensor<float>({4}, {1.1f, 1.5f, 2.0f, 0.124f});
  // e8m0 code = exponent + 127. 1.1: up -> 2 (128), down -> 1 (127), nearest -> 1.
  // 1.5: nearest ties up -> 2. 0.124: up -> 0.125 (124).
  EXPECT_EQ(Bytes<Float8E8M0>(CastAllCounts(x, DataType::kFloat8E8M0, 25, 1, "up")),
            (std::vector<uint8_t>{128, 128, 128, 124}));
  EXPECT_EQ(Bytes<Float8E8M0>(CastAllCounts(x, DataType::kFloat8E8M0, 25, 1, "down")),
            (std::vector<uint8_t>{127, 127, 128, 123}));
  EXPECT_EQ(Bytes<Float8E8M0>(CastAllCounts(x, DataType::kFloat8E8M0, 25, 1, "nearest")),
            (std::vector<uint8_t>{127, 128, 128, 124}));
  KernelTester bad("Cast", 25);
  bad.Input(x).Attr("to", int64_t{24}).Attr("round_mode", std::string("sideways"));
  auto r = bad.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("round_mode"), std::string::npos);
}

TEST(CastTest, Float4AndFloat6ClampAndMapNanToNegativeZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = MakeTensor<float>({6}, {0.25f, 1.05f, -3.5f, 9.0f, nan, -0.0f});
  // float4e2m1 values: 0, .5, 1, 1.5, 2, 3, 4, 6 (codes 0-7), sign bit 8. 0.25 ties to 0;
  // -3.5 ties to even -4 (code 6); 9 clamps to 6 (code 7).
  EXPECT_EQ(Bytes<Float4E2M1>(CastAllCounts(x, DataType::kFloat4E2M1)),
            (std::vector<uint8_t>{0x0, 0x2, 0xe, 0x7, 0x8, 0x8}));
  // float6e2m3 max is 7.5 (0x1f); NaN -> sign bit alone (0x20).
  const auto f6 = Bytes<Float6E2M3>(CastAllCounts(x, DataType::kFloat6E2M3, 28));
  EXPECT_EQ(f6[3], 0x1f);
  EXPECT_EQ(f6[4], 0x20);
}

TEST(CastTest, SubByteIntegersWrap) {
  Tensor x = MakeTensor<float>({6}, {-9.0f, -8.0f, 7.0f, 8.0f, 7.6f, -1.0f});
  const Tensor i4 = CastAllCounts(x, DataType::kInt4);
  std::vector<int> got;
  for (const Int4& v : ToVector<Int4>(i4)) got.push_back(v.value);
  EXPECT_EQ(got, (std::vector<int>{7, -8, 7, -8, 7, -1}));
  got.clear();
  for (const UInt4& v : ToVector<UInt4>(CastAllCounts(x, DataType::kUint4))) got.push_back(v.value);
  EXPECT_EQ(got, (std::vector<int>{7, 8, 7, 8, 7, 15}));
  got.clear();
  for (const Int2& v : ToVector<Int2>(CastAllCounts(MakeTensor<int32_t>({4}, {-3, 2, 3, 1}), DataType::kInt2))) {
    got.push_back(v.value);
  }
  EXPECT_EQ(got, (std::vector<int>{1, -2, -1, 1}));
  // int4 -> float reads the stored, sign-extended value.
  EXPECT_EQ(ToVector<float>(CastAllCounts(i4, DataType::kFloat)), (std::vector<float>{7, -8, 7, -8, 7, -1}));
  // ml_dtypes stores int4 masked to its 4 bits (-1 as 0x0F, -8 as 0x08): read the same.
  std::vector<Int4> masked(3);
  masked[0].value = 0x0f;
  masked[1].value = 0x08;
  masked[2].value = 0x07;
  EXPECT_EQ(ToVector<int32_t>(CastAllCounts(MakeTensor<Int4>({3}, masked), DataType::kInt32)),
            (std::vector<int32_t>{-1, -8, 7}));
}

TEST(CastTest, IntegerConversions) {
  EXPECT_EQ(ToVector<int8_t>(CastAllCounts(MakeTensor<int16_t>({3}, {200, -129, 5}), DataType::kInt8)),
            (std::vector<int8_t>{-56, 127, 5}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ToVector<int32_t>(CastAllCounts(MakeTensor<float>({4}, {3.7f, -3.7f, nan, 0.5f}), DataType::kInt32)),
            (std::vector<int32_t>{3, -3, 0, 0}));
  EXPECT_EQ(ToVector<uint8_t>(CastAllCounts(MakeTensor<float>({2}, {300.7f, -3.7f}), DataType::kUint8)),
            (std::vector<uint8_t>{44, 253}));
  EXPECT_EQ(ToVector<int64_t>(CastAllCounts(MakeTensor<double>({2}, {1e20, -1e20}), DataType::kInt64)),
            (std::vector<int64_t>{INT64_MAX, INT64_MIN}));
  EXPECT_EQ(ToVector<uint64_t>(CastAllCounts(MakeTensor<double>({1}, {1.8e19}), DataType::kUint64)),
            (std::vector<uint64_t>{18000000000000000000ull}));
  EXPECT_EQ(ToVector<bool>(CastAllCounts(MakeTensor<float>({3}, {0.0f, -0.0f, nan}), DataType::kBool)),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(ToVector<float>(CastAllCounts(MakeTensor<bool>({2}, {true, false}), DataType::kFloat)),
            (std::vector<float>{1.0f, 0.0f}));
}

TEST(CastTest, LargeIntegersRoundOnceIntoNarrowFloats) {
  const int64_t base = int64_t{1} << 60;
  // bfloat16 has 8 significant bits: at 2^60 its step is 2^53, so 2^52 is a tie.
  Tensor x = MakeTensor<int64_t>({4}, {base + (int64_t{1} << 52) + 1, base + (int64_t{1} << 52),
                                       base + 3 * (int64_t{1} << 52), -(base + (int64_t{1} << 52) + 1)});
  std::vector<uint16_t> bits;
  for (const BFloat16& v : ToVector<BFloat16>(CastAllCounts(x, DataType::kBFloat16))) bits.push_back(v.bits);
  // 2^60 is exponent 187 (0x5D80); above the tie rounds up, ties go to even.
  EXPECT_EQ(bits, (std::vector<uint16_t>{0x5d81, 0x5d80, 0x5d82, 0xdd81}));
  EXPECT_EQ(ToVector<float>(CastAllCounts(MakeTensor<uint64_t>({1}, {UINT64_MAX}), DataType::kFloat))[0],
            18446744073709551616.0f);
}

TEST(CastTest, NumbersToStringsAndBack) {
  Tensor x =
      MakeTensor<float>({7}, {1.5f, 100.0f, 1e20f, 3e-5f, 0.1f, -std::numeric_limits<float>::infinity(), 1.0f / 3});
  EXPECT_EQ(ToVector<std::string>(CastAllCounts(x, DataType::kString)),
            (std::vector<std::string>{"1.5", "100.0", "1e+20", "3e-05", "0.1", "-inf", "0.33333334"}));
  EXPECT_EQ(ToVector<std::string>(CastAllCounts(MakeTensor<int64_t>({2}, {-7, INT64_MAX}), DataType::kString)),
            (std::vector<std::string>{"-7", "9223372036854775807"}));
  EXPECT_EQ(ToVector<std::string>(CastAllCounts(MakeTensor<bool>({2}, {true, false}), DataType::kString)),
            (std::vector<std::string>{"True", "False"}));

  Tensor s = MakeTensor<std::string>({6}, {"3.25", "+INF", "-inf", "1e-5", "1E8", "-12"});
  const auto f = ToVector<float>(CastAllCounts(s, DataType::kFloat));
  EXPECT_EQ(f, (std::vector<float>{3.25f, INFINITY, -INFINITY, 1e-5f, 1e8f, -12.0f}));
  EXPECT_TRUE(std::isnan(ToVector<double>(CastAllCounts(MakeTensor<std::string>({1}, {"NaN"}), DataType::kDouble))[0]));
  EXPECT_EQ(
      ToVector<int64_t>(CastAllCounts(MakeTensor<std::string>({2}, {"12345678901234567", "100.5"}), DataType::kInt64)),
      (std::vector<int64_t>{12345678901234567, 100}));

  KernelTester bad("Cast", 13);
  bad.NodeName("to_number").Input(MakeTensor<std::string>({2}, {"1", "Hello"})).Attr("to", int64_t{1});
  auto r = bad.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("to_number"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("element 1"), std::string::npos) << r.status().message();
}

TEST(CastTest, SameTypeAliasesAndEmptyAndScalar) {
  Tensor x = MakeTensor<float>({2}, {1, 2});
  KernelTester t("Cast", 21);
  t.Input(x).Attr("to", int64_t{1});
  auto r = t.Run(1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).tensor().raw_data(), x.raw_data());

  Tensor empty = CastAllCounts(MakeTensor<float>({0, 3}, {}), DataType::kFloat16);
  EXPECT_EQ(empty.shape(), Shape({0, 3}));
  Tensor scalar = CastAllCounts(MakeTensor<double>({}, {2.5}), DataType::kInt32);
  EXPECT_EQ(scalar.shape(), Shape({}));
  EXPECT_EQ(ToVector<int32_t>(scalar), std::vector<int32_t>{2});
}

TEST(CastTest, OpsetRulesForTargetsAndCast1Names) {
  KernelTester old("Cast", 13);
  old.Input(MakeTensor<float>({1}, {1.0f})).Attr("to", static_cast<int64_t>(DataType::kFloat8E4M3FN));
  auto r = old.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("float8e4m3fn"), std::string::npos) << r.status().message();

  KernelTester bogus("Cast", 21);
  bogus.Input(MakeTensor<float>({1}, {1.0f})).Attr("to", int64_t{99});
  EXPECT_FALSE(bogus.Run(1).ok());

  KernelTester v1("Cast", 1);
  v1.Input(MakeTensor<float>({1}, {1.5f})).Attr("to", std::string("FLOAT16"));
  auto h = v1.Run(1);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(ToVector<Float16>(h->at(0).tensor())[0].bits, 0x3e00);
}

TEST(CastLikeTest, TakesTheTargetTypeFromInputOne) {
  KernelTester t("CastLike", 21);
  std::vector<float> x(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 2500.5f;
  t.Input(MakeTensor<float>({5000}, x))
      .Input(MakeTensor<int32_t>({0}, {}))
      .Tuning(param::kMinimumElements, int64_t{1})
      .Tuning(param::kBlockElements, int64_t{256});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  ASSERT_FALSE(serial.empty());
  const auto y = ToVector<int32_t>(serial.at(0).tensor());
  EXPECT_EQ(y[0], -2500);
  EXPECT_EQ(y[4999], 2498);
}

}  // namespace
}  // namespace onnx_light
