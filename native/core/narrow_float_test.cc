// Narrow float conversions. float16 and bfloat16 are checked exhaustively: every bit
// pattern decodes to the value the IEEE definition gives, and every float rounds to the
// nearest representable value with ties to even (checked at every midpoint and on both
// sides of it), for the fast paths and the generic codec alike.
#include "native/core/narrow_float.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

float FromBits32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Reference decode straight from the IEEE binary16 definition.
double ReferenceHalf(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : (sign ? -INFINITY : INFINITY);
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else
    v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

TEST(Float16, DecodeEveryBitPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double expected = ReferenceHalf(static_cast<uint16_t>(h));
    const float fast = HalfBitsToFloat(static_cast<uint16_t>(h));
    const double generic = NarrowFloatToDouble(h, formats::kFloat16);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(fast)) << h;
      EXPECT_TRUE(std::isnan(generic)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(fast), expected) << "bits " << h;
      ASSERT_EQ(generic, expected) << "bits " << h;
      ASSERT_EQ(std::signbit(fast), std::signbit(expected)) << h;
    }
  }
}

TEST(Float16, EncodeRoundTripsEveryValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(f))));
      continue;
    }
    ASSERT_EQ(FloatToHalfBits(f), h) << "fast path, bits " << h;
    ASSERT_EQ(DoubleToNarrowFloat(f, formats::kFloat16, false), h) << "generic, bits " << h;
  }
}

// Between consecutive positive finite halves a < b: the midpoint goes to the even one;
// the floats just below and above it go to a and b. Covers subnormals and the top binade.
TEST(Float16, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint16_t a = 0; a < 0x7bff; ++a) {
    const uint16_t b = a + 1;
    const double mid = (ReferenceHalf(a) + ReferenceHalf(b)) / 2;  // exact in double and float
    const float m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid);
    const uint16_t even = (a & 1) ? b : a;
    ASSERT_EQ(FloatToHalfBits(m), even) << "tie between " << a << " and " << b;
    ASSERT_EQ(DoubleToNarrowFloat(mid, formats::kFloat16, false), even);
    const float below = std::nextafter(m, 0.0f), above = std::nextafter(m, INFINITY);
    ASSERT_EQ(FloatToHalfBits(below), a);
    ASSERT_EQ(FloatToHalfBits(above), b);
    ASSERT_EQ(FloatToHalfBits(-above), b | 0x8000);
  }
}

TEST(Float16, Overflow) {
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65519.99f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // tie with 65536 rounds to even: inf
  EXPECT_EQ(FloatToHalfBits(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(INFINITY), 0x7c00);
  EXPECT_EQ(DoubleToNarrowFloat(1e10, formats::kFloat16, /*saturate=*/true), 0x7bffu);
}

TEST(BFloat16, DecodeAndRoundTripEveryBitPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = BFloat16BitsToFloat(static_cast<uint16_t>(h));
    const double generic = NarrowFloatToDouble(h, formats::kBFloat16);
    ASSERT_EQ(FromBits32(h << 16) == f || std::isnan(f), true);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(generic));
      ASSERT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(f))));
      continue;
    }
    ASSERT_EQ(generic, static_cast<double>(f)) << h;
    ASSERT_EQ(FloatToBFloat16Bits(f), h) << h;
    ASSERT_EQ(DoubleToNarrowFloat(f, formats::kBFloat16, false), h) << h;
  }
}

TEST(BFloat16, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t a = 0; a < 0x7f7f; ++a) {
    const uint32_t b = a + 1;
    const uint32_t mid_bits = (a << 16) | 0x8000u;  // exactly halfway in float
    const float m = FromBits32(mid_bits);
    const uint16_t even = (a & 1) ? b : a;
    ASSERT_EQ(FloatToBFloat16Bits(m), even) << a;
    ASSERT_EQ(DoubleToNarrowFloat(m, formats::kBFloat16, false), even) << a;
    ASSERT_EQ(FloatToBFloat16Bits(FromBits32(mid_bits - 1)), a);
    ASSERT_EQ(FloatToBFloat16Bits(FromBits32(mid_bits + 1)), b);
  }
}

// Spot values from the OCP 8-bit float specification.
TEST(Float8, KnownValues) {
  EXPECT_EQ(Float8E4M3FN::FromDouble(448.0).bits, 0x7e);
  EXPECT_EQ(Float8E4M3FN::FromDouble(1e6, /*saturate=*/true).bits, 0x7e);
  EXPECT_EQ(Float8E4M3FN::FromDouble(1e6, /*saturate=*/false).bits, 0x7f);  // NaN
  EXPECT_TRUE(std::isnan(Float8E4M3FN::FromBits(0x7f).ToDouble()));
  EXPECT_EQ(Float8E4M3FN::FromBits(0x01).ToDouble(), std::ldexp(1.0, -9));
  EXPECT_EQ(Float8E5M2::FromDouble(57344.0).bits, 0x7b);
  EXPECT_EQ(Float8E5M2::FromDouble(1e6, false).bits, 0x7c);  // inf
  EXPECT_EQ(Float8E4M3FNUZ::FromDouble(240.0).bits, 0x7f);
  EXPECT_EQ(Float8E4M3FNUZ::FromDouble(-0.0).bits, 0x00);  // no negative zero
  EXPECT_TRUE(std::isnan(Float8E4M3FNUZ::FromBits(0x80).ToDouble()));
  EXPECT_EQ(Float8E5M2FNUZ::FromDouble(57344.0).bits, 0x7f);
  EXPECT_EQ(Float4E2M1::FromDouble(6.0).bits, 0x7);
  EXPECT_EQ(Float4E2M1::FromDouble(100.0).bits, 0x7);  // clamps: no inf, no NaN
  EXPECT_EQ(Float4E2M1::FromDouble(-0.5).bits, 0x9);
  EXPECT_EQ(Float8E8M0::FromBits(127).ToDouble(), 1.0);
  EXPECT_EQ(Float6E2M3::FromDouble(7.5).bits, 0x1f);
  EXPECT_EQ(Float6E3M2::FromDouble(28.0).bits, 0x1f);
}

// Every narrow format: decoding then encoding each finite pattern returns it (except the
// negative zero that fnuz formats do not have).
TEST(NarrowFloat, EveryFormatRoundTrips) {
  const NarrowFloatFormat all[] = {formats::kFloat8E4M3FN,   formats::kFloat8E4M3FNUZ, formats::kFloat8E5M2,
                                   formats::kFloat8E5M2FNUZ, formats::kFloat8E8M0,     formats::kFloat4E2M1,
                                   formats::kFloat6E2M3,     formats::kFloat6E3M2};
  for (const auto& f : all) {
    for (uint32_t bits = 0; bits < (1u << f.total_bits()); ++bits) {
      const double v = NarrowFloatToDouble(bits, f);
      if (std::isnan(v) || std::isinf(v)) continue;
      ASSERT_EQ(DoubleToNarrowFloat(v, f, false), bits)
          << "format e" << f.exponent_bits << "m" << f.mantissa_bits << " bits " << bits;
    }
  }
}

}  // namespace
}  // namespace onnx_light
