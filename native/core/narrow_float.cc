#include "native/core/narrow_float.h"

#include <cmath>
#include <limits>

#include "native/core/data_type.h"

namespace onnx_light {
namespace {

using Specials = NarrowFloatFormat::Specials;

bool HasSign(const NarrowFloatFormat& f) { return f.specials != Specials::kExponentOnly; }

uint32_t MaxExponentField(const NarrowFloatFormat& f) { return (1u << f.exponent_bits) - 1; }
uint32_t MantissaMask(const NarrowFloatFormat& f) { return (1u << f.mantissa_bits) - 1; }

// Bit pattern (without sign) of the largest finite value.
uint32_t MaxFiniteMagnitude(const NarrowFloatFormat& f) {
  const uint32_t all = (MaxExponentField(f) << f.mantissa_bits) | MantissaMask(f);
  switch (f.specials) {
    case Specials::kIeee:
      return ((MaxExponentField(f) - 1) << f.mantissa_bits) | MantissaMask(f);
    case Specials::kFiniteNan:
      return all - 1;
    case Specials::kUnsignedZeroNan:
      return all;
    case Specials::kFinite:
      return all;
    case Specials::kExponentOnly:
      return all - 1;
  }
  return all;
}

uint32_t NanBits(const NarrowFloatFormat& f) {
  const uint32_t all = (MaxExponentField(f) << f.mantissa_bits) | MantissaMask(f);
  switch (f.specials) {
    case Specials::kIeee:
      return (MaxExponentField(f) << f.mantissa_bits) | (1u << (f.mantissa_bits - 1));
    case Specials::kFiniteNan:
      return all;
    case Specials::kUnsignedZeroNan:
      return 1u << (f.total_bits() - 1);
    case Specials::kFinite:
      return all;  // no NaN: largest magnitude
    case Specials::kExponentOnly:
      return 0xffu;
  }
  return all;
}

}  // namespace

int NarrowFloatFormat::total_bits() const {
  return (specials == Specials::kExponentOnly ? 0 : 1) + exponent_bits + mantissa_bits;
}

double NarrowFloatToDouble(uint32_t bits, const NarrowFloatFormat& f) {
  const int mbits = f.mantissa_bits;
  const uint32_t mant = bits & MantissaMask(f);
  const uint32_t exp = (bits >> mbits) & MaxExponentField(f);
  const bool negative = HasSign(f) && ((bits >> (f.exponent_bits + mbits)) & 1u);
  const double sign = negative ? -1.0 : 1.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.specials) {
    case Specials::kIeee:
      if (exp == MaxExponentField(f)) return mant ? nan : sign * std::numeric_limits<double>::infinity();
      break;
    case Specials::kFiniteNan:
      if (exp == MaxExponentField(f) && mant == MantissaMask(f)) return nan;
      break;
    case Specials::kUnsignedZeroNan:
      if (negative && exp == 0 && mant == 0) return nan;
      break;
    case Specials::kFinite:
      break;
    case Specials::kExponentOnly:
      if (exp == 0xffu) return nan;
      return std::ldexp(1.0, static_cast<int>(exp) - f.bias);
  }
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), 1 - f.bias - mbits);
  return sign * std::ldexp(static_cast<double>(mant | (1u << mbits)), static_cast<int>(exp) - f.bias - mbits);
}

uint32_t DoubleToNarrowFloat(double value, const NarrowFloatFormat& f, bool saturate,
                             ExponentRounding exponent_rounding) {
  const int mbits = f.mantissa_bits;
  const uint32_t sign_bit = HasSign(f) ? 1u << (f.exponent_bits + mbits) : 0u;
  const uint32_t max_finite = MaxFiniteMagnitude(f);
  const bool clamps = saturate || f.specials == Specials::kFinite;

  if (std::isnan(value)) return NanBits(f);

  if (f.specials == Specials::kExponentOnly) {
    // Positive powers of two only; sign is dropped as ONNX's reference does.
    const double a = std::fabs(value);
    if (std::isinf(a)) return saturate ? max_finite : NanBits(f);
    if (a == 0.0) return 0;  // smallest representable: 2^-127
    int e2;
    const double m = std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
    int e = e2 - 1;                       // a = (2m) * 2^e, 2m in [1, 2)
    const bool exact = (m == 0.5);
    if (!exact) {
      if (exponent_rounding == ExponentRounding::kUp) {
        e += 1;
      } else if (exponent_rounding == ExponentRounding::kNearest) {
        // Round the significand 2m in [1,2) to 1 or 2; ties (1.5) go up as ONNX does.
        if (2.0 * m >= 1.5) e += 1;
      }
    }
    long biased = static_cast<long>(e) + f.bias;
    if (biased < 0) return 0;
    if (biased > static_cast<long>(max_finite)) return saturate ? max_finite : NanBits(f);
    return static_cast<uint32_t>(biased);
  }

  const bool negative = std::signbit(value);
  const uint32_t sign = negative ? sign_bit : 0u;
  const double a = std::fabs(value);
  const uint32_t overflow =
      clamps ? max_finite : (f.specials == Specials::kIeee ? (MaxExponentField(f) << mbits) : NanBits(f));
  // fnuz has no negative zero and its NaN is the sign bit alone: never add a sign there.
  const auto with_sign = [&](uint32_t magnitude) -> uint32_t {
    if (f.specials == Specials::kUnsignedZeroNan && (magnitude == 0 || magnitude == NanBits(f))) return magnitude;
    return magnitude | sign;
  };

  if (std::isinf(a)) return with_sign(overflow);
  if (a == 0.0) return with_sign(0);

  const int min_normal_exp = 1 - f.bias;
  int e2;
  std::frexp(a, &e2);
  int e = e2 - 1;  // a in [2^e, 2^(e+1))
  uint32_t magnitude;
  if (e < min_normal_exp) {
    // Subnormal: count of 2^(min_normal_exp - mbits) units, rounded to nearest even.
    const double units = std::nearbyint(std::ldexp(a, mbits - min_normal_exp));
    magnitude = static_cast<uint32_t>(units);  // may carry into the smallest normal
  } else {
    double significand = std::nearbyint(std::ldexp(a, mbits - e));  // in [2^m, 2^(m+1)]
    if (significand >= std::ldexp(1.0, mbits + 1)) {
      significand = std::ldexp(1.0, mbits);
      ++e;
    }
    const long biased = static_cast<long>(e) + f.bias;
    if (biased > static_cast<long>(MaxExponentField(f))) return with_sign(overflow);
    magnitude = (static_cast<uint32_t>(biased) << mbits) | (static_cast<uint32_t>(significand) & MantissaMask(f));
  }
  if (magnitude > max_finite) return with_sign(overflow);
  return with_sign(magnitude);
}

uint16_t FloatToHalfBits(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): add 0.5 as a float so the FPU rounds to even for us.
    float f;
    std::memcpy(&f, &abs, sizeof f);
    f += 0.5f;  // 2^-1 places half's subnormal unit (2^-24) at the float's last bit
    uint32_t r;
    std::memcpy(&r, &f, sizeof r);
    return static_cast<uint16_t>(sign | (r - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to even.
  uint32_t h = abs - ((127u - 15u) << 23);
  h += 0xfffu + ((h >> 13) & 1u);
  return static_cast<uint16_t>(sign | (h >> 13));
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t u;
  if (exp == 0x1fu) {
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else {
    float f = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    std::memcpy(&u, &f, sizeof u);
    u |= sign;
  }
  float out;
  std::memcpy(&out, &u, sizeof out);
  return out;
}

const NarrowFloatFormat* SmallFloatFormat(DataType type) {
  switch (type) {
    case DataType::kFloat8E4M3FN:
      return &formats::kFloat8E4M3FN;
    case DataType::kFloat8E4M3FNUZ:
      return &formats::kFloat8E4M3FNUZ;
    case DataType::kFloat8E5M2:
      return &formats::kFloat8E5M2;
    case DataType::kFloat8E5M2FNUZ:
      return &formats::kFloat8E5M2FNUZ;
    case DataType::kFloat8E8M0:
      return &formats::kFloat8E8M0;
    case DataType::kFloat4E2M1:
      return &formats::kFloat4E2M1;
    case DataType::kFloat6E2M3:
      return &formats::kFloat6E2M3;
    case DataType::kFloat6E3M2:
      return &formats::kFloat6E3M2;
    default:
      return nullptr;
  }
}

}  // namespace onnx_light
