// Narrow floating-point element types (float16, bfloat16, the float8/float6/float4 family)
// and their exact conversions. Conversions from float or double round to nearest, ties to
// even, in a single step (no double rounding through float). In memory each value is
// stored in its own byte(s), as numpy/ml_dtypes store them; sub-byte packing only
// exists in serialized ONNX tensors.
#pragma once

#include <cstdint>
#include <cstring>

namespace onnx_light {

// Describes a sign/exponent/mantissa format narrower than float.
struct NarrowFloatFormat {
  enum class Specials : uint8_t {
    kIeee,             // infinities and NaNs as IEEE 754 (float16, bfloat16, float8e5m2)
    kFiniteNan,        // "fn": no infinities, NaN = all exponent and mantissa bits set
    kUnsignedZeroNan,  // "fnuz": no infinities, no -0, NaN = sign bit alone (0x80)
    kFinite,           // no infinities, no NaN (float4e2m1, float6)
    kExponentOnly,     // float8e8m0: unsigned, exponent only, 0xFF = NaN
  };
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;

  int total_bits() const;
};

// Rounding used by the exponent-only format (ONNX Cast's round_mode for float8e8m0).
enum class ExponentRounding : uint8_t { kUp, kDown, kNearest };

// Exact decode of `bits` (low total_bits() bits) to double.
double NarrowFloatToDouble(uint32_t bits, const NarrowFloatFormat& format);

// Encodes `value` with round-to-nearest-even. Out-of-range values become infinity (IEEE
// formats) or NaN (fn/fnuz formats) unless `saturate`, which clamps to the largest finite
// value; formats without infinity and NaN always clamp. NaN maps to the format's NaN (or
// to the largest value for kFinite formats, which have none).
uint32_t DoubleToNarrowFloat(double value, const NarrowFloatFormat& format, bool saturate,
                             ExponentRounding exponent_rounding = ExponentRounding::kUp);

namespace formats {
inline constexpr NarrowFloatFormat kFloat16{5, 10, 15, NarrowFloatFormat::Specials::kIeee};
inline constexpr NarrowFloatFormat kBFloat16{8, 7, 127, NarrowFloatFormat::Specials::kIeee};
inline constexpr NarrowFloatFormat kFloat8E4M3FN{4, 3, 7, NarrowFloatFormat::Specials::kFiniteNan};
inline constexpr NarrowFloatFormat kFloat8E4M3FNUZ{4, 3, 8, NarrowFloatFormat::Specials::kUnsignedZeroNan};
inline constexpr NarrowFloatFormat kFloat8E5M2{5, 2, 15, NarrowFloatFormat::Specials::kIeee};
inline constexpr NarrowFloatFormat kFloat8E5M2FNUZ{5, 2, 16, NarrowFloatFormat::Specials::kUnsignedZeroNan};
inline constexpr NarrowFloatFormat kFloat8E8M0{8, 0, 127, NarrowFloatFormat::Specials::kExponentOnly};
inline constexpr NarrowFloatFormat kFloat4E2M1{2, 1, 1, NarrowFloatFormat::Specials::kFinite};
inline constexpr NarrowFloatFormat kFloat6E2M3{2, 3, 1, NarrowFloatFormat::Specials::kFinite};
inline constexpr NarrowFloatFormat kFloat6E3M2{3, 2, 3, NarrowFloatFormat::Specials::kFinite};
}  // namespace formats

enum class DataType : int32_t;  // data_type.h (which includes this header)

// The format of a float8, float6 or float4 element type (stored one element per byte);
// null for every other type (float16 and bfloat16 have codecs of their own).
const NarrowFloatFormat* SmallFloatFormat(DataType type);

// float16 and bfloat16 have dedicated fast conversions (used by kernels' hot loops); they
// are checked exhaustively against the generic codec in the tests.
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);

inline uint16_t FloatToBFloat16Bits(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even; overflow carries into inf
  return static_cast<uint16_t>(u >> 16);
}
inline float BFloat16BitsToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Value types. Each is trivially copyable, sized as numpy/ml_dtypes store it.
#define OL_DEFINE_NARROW_FLOAT(Name, Storage, Format)                                  \
  struct Name {                                                                        \
    Storage bits = 0;                                                                  \
    static constexpr const NarrowFloatFormat& format() { return Format; }              \
    static Name FromBits(Storage b) {                                                  \
      Name n;                                                                          \
      n.bits = b;                                                                      \
      return n;                                                                        \
    }                                                                                  \
    static Name FromDouble(double v, bool saturate = true) {                           \
      return FromBits(static_cast<Storage>(DoubleToNarrowFloat(v, Format, saturate))); \
    }                                                                                  \
    double ToDouble() const { return NarrowFloatToDouble(bits, Format); }              \
    float ToFloat() const { return static_cast<float>(ToDouble()); }                   \
  };

OL_DEFINE_NARROW_FLOAT(Float8E4M3FN, uint8_t, formats::kFloat8E4M3FN)
OL_DEFINE_NARROW_FLOAT(Float8E4M3FNUZ, uint8_t, formats::kFloat8E4M3FNUZ)
OL_DEFINE_NARROW_FLOAT(Float8E5M2, uint8_t, formats::kFloat8E5M2)
OL_DEFINE_NARROW_FLOAT(Float8E5M2FNUZ, uint8_t, formats::kFloat8E5M2FNUZ)
OL_DEFINE_NARROW_FLOAT(Float8E8M0, uint8_t, formats::kFloat8E8M0)
OL_DEFINE_NARROW_FLOAT(Float4E2M1, uint8_t, formats::kFloat4E2M1)
OL_DEFINE_NARROW_FLOAT(Float6E2M3, uint8_t, formats::kFloat6E2M3)
OL_DEFINE_NARROW_FLOAT(Float6E3M2, uint8_t, formats::kFloat6E3M2)
#undef OL_DEFINE_NARROW_FLOAT

struct Float16 {
  uint16_t bits = 0;
  static constexpr const NarrowFloatFormat& format() { return formats::kFloat16; }
  static Float16 FromBits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  static Float16 FromFloat(float v) { return FromBits(FloatToHalfBits(v)); }
  static Float16 FromDouble(double v, bool saturate = false) {
    return FromBits(static_cast<uint16_t>(DoubleToNarrowFloat(v, formats::kFloat16, saturate)));
  }
  float ToFloat() const { return HalfBitsToFloat(bits); }
  double ToDouble() const { return ToFloat(); }
};

struct BFloat16 {
  uint16_t bits = 0;
  static constexpr const NarrowFloatFormat& format() { return formats::kBFloat16; }
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  static BFloat16 FromFloat(float v) { return FromBits(FloatToBFloat16Bits(v)); }
  static BFloat16 FromDouble(double v, bool saturate = false) {
    return FromBits(static_cast<uint16_t>(DoubleToNarrowFloat(v, formats::kBFloat16, saturate)));
  }
  float ToFloat() const { return BFloat16BitsToFloat(bits); }
  double ToDouble() const { return ToFloat(); }
};

// Sub-byte integers, one per byte in memory (sign-extended / zero-extended value).
struct Int4 {
  int8_t value = 0;
};
struct UInt4 {
  uint8_t value = 0;
};
struct Int2 {
  int8_t value = 0;
};
struct UInt2 {
  uint8_t value = 0;
};

}  // namespace onnx_light
