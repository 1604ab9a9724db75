#include "native/kernels/tensor/cast_convert.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

namespace onnx_light {
namespace {

using cast_internal::FloatToHalfFast;
using cast_internal::HalfToFloatFast;

// Conversions run through stack blocks of this many elements when a source needs decoding
// first (narrow floats, strings): small enough for L1, large enough to amortise dispatch.
constexpr int64_t kBlock = 512;

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>) for the C++ arithmetic types that ONNX types map to directly; as targets,
// sub-byte integers are written sign/zero-extended into their byte (int8/uint8).
template <typename F>
bool VisitArithmetic(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat:
      f(Tag<float>{});
      return true;
    case DataType::kDouble:
      f(Tag<double>{});
      return true;
    case DataType::kInt8:
    case DataType::kInt4:
    case DataType::kInt2:
      f(Tag<int8_t>{});
      return true;
    case DataType::kUint8:
    case DataType::kUint4:
    case DataType::kUint2:
      f(Tag<uint8_t>{});
      return true;
    case DataType::kInt16:
      f(Tag<int16_t>{});
      return true;
    case DataType::kUint16:
      f(Tag<uint16_t>{});
      return true;
    case DataType::kInt32:
      f(Tag<int32_t>{});
      return true;
    case DataType::kUint32:
      f(Tag<uint32_t>{});
      return true;
    case DataType::kInt64:
      f(Tag<int64_t>{});
      return true;
    case DataType::kUint64:
      f(Tag<uint64_t>{});
      return true;
    case DataType::kBool:
      f(Tag<bool>{});
      return true;
    default:
      return false;
  }
}

bool IsSubByteInteger(DataType t) {
  return t == DataType::kInt4 || t == DataType::kUint4 || t == DataType::kInt2 || t == DataType::kUint2;
}

// Every code of a format of at most 8 bits, decoded once (exact: each fits a float).
struct SmallFloatTable {
  std::array<float, 256> values;
  explicit SmallFloatTable(const NarrowFloatFormat& f) {
    for (uint32_t b = 0; b < 256; ++b) {
      values[b] = b < (1u << f.total_bits()) ? static_cast<float>(NarrowFloatToDouble(b, f)) : 0.0f;
    }
  }
};
const std::array<float, 256>& DecodeTable(DataType t) {
  static const SmallFloatTable e4m3fn(formats::kFloat8E4M3FN), e4m3fnuz(formats::kFloat8E4M3FNUZ),
      e5m2(formats::kFloat8E5M2), e5m2fnuz(formats::kFloat8E5M2FNUZ), e8m0(formats::kFloat8E8M0),
      e2m1(formats::kFloat4E2M1), e2m3(formats::kFloat6E2M3), e3m2(formats::kFloat6E3M2);
  switch (t) {
    case DataType::kFloat8E4M3FN:
      return e4m3fn.values;
    case DataType::kFloat8E4M3FNUZ:
      return e4m3fnuz.values;
    case DataType::kFloat8E5M2:
      return e5m2.values;
    case DataType::kFloat8E5M2FNUZ:
      return e5m2fnuz.values;
    case DataType::kFloat8E8M0:
      return e8m0.values;
    case DataType::kFloat4E2M1:
      return e2m1.values;
    case DataType::kFloat6E2M3:
      return e2m3.values;
    default:
      return e3m2.values;
  }
}

// ------------------------------------------------------------------- scalar conversions

// Float -> integer where ONNX leaves out-of-range undefined: saturate to 64 bits (NaN -> 0),
// then narrow like an integer (wrap), which matches numpy for values within int64.
template <typename D, typename S>
D FloatToInteger(S s) {
  if (std::isnan(s)) return D(0);
  if constexpr (std::is_unsigned_v<D>) {
    if (s >= S(0)) {
      if (s >= S(18446744073709551616.0)) return static_cast<D>(std::numeric_limits<uint64_t>::max());
      return static_cast<D>(static_cast<uint64_t>(s));
    }
  }
  if (s >= S(9223372036854775808.0)) return static_cast<D>(std::numeric_limits<int64_t>::max());
  if (s < S(-9223372036854775808.0)) return static_cast<D>(std::numeric_limits<int64_t>::min());
  return static_cast<D>(static_cast<int64_t>(s));
}

template <typename D, typename S>
D ArithmeticCast(S s) {
  if constexpr (std::is_same_v<D, bool>) {
    return s != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    return FloatToInteger<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

// The value as a double that rounds to the same narrow float as the value itself. Integers
// beyond 2^53 do not fit; a sticky bit below the kept bits stands for the lost ones, and no
// rounding boundary of a format of at most 24 significant bits lies in that gap.
double UnsignedForNarrowing(uint64_t u) {
  if (u < (uint64_t{1} << 53)) return static_cast<double>(u);
  return static_cast<double>(u & ~uint64_t{0xfff}) + ((u & 0xfff) ? 2048.0 : 0.0);
}
template <typename S>
double ForNarrowing(S s) {
  if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, bool>) {
    return static_cast<double>(s);
  } else if constexpr (std::is_unsigned_v<S>) {
    return UnsignedForNarrowing(s);
  } else {
    const int64_t v = s;
    const uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return v < 0 ? -UnsignedForNarrowing(magnitude) : UnsignedForNarrowing(magnitude);
  }
}

template <typename S>
int64_t ToInt64Bits(S s) {
  if constexpr (std::is_floating_point_v<S>)
    return FloatToInteger<int64_t>(s);
  else
    return static_cast<int64_t>(s);
}

// Keeps the low `bits` of v, sign-extended for signed targets (ONNX: discard higher bits).
uint8_t WrapSubByte(int64_t v, int bits, bool is_signed) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t low = static_cast<uint64_t>(v) & mask;
  if (is_signed && (low >> (bits - 1))) low |= ~mask;  // sign-extend into the byte
  return static_cast<uint8_t>(low);
}

// -------------------------------------------------------------------------- strings

std::string FormatFloating(double v, bool single) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // numpy's str(): shortest round-trip digits, positional within [1e-4, 1e16).
  char buf[64];
  const double a = std::fabs(v);
  const bool positional = a == 0.0 || (a >= 1e-4 && a < 1e16);
  const auto format = positional ? std::chars_format::fixed : std::chars_format::scientific;
  auto r = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), format)
                  : std::to_chars(buf, buf + sizeof buf, v, format);
  std::string s(buf, r.ptr);
  if (positional && s.find('.') == std::string::npos) s += ".0";
  return s;
}

template <typename S>
std::string FormatNumber(S s) {
  if constexpr (std::is_same_v<S, bool>)
    return s ? "True" : "False";
  else if constexpr (std::is_floating_point_v<S>)
    return FormatFloating(s, std::is_same_v<S, float>);
  else
    return std::to_string(s);
}

bool EqualsIgnoringCase(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i]; ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return i == a.size() && !b[i];
}

// Parses a whole string as a number: integers exactly (as their 64-bit pattern), anything
// else through strtod (which accepts "inf", "+INF", "NaN", "1e-5", ...).
struct ParsedNumber {
  bool integral = false;
  int64_t integer = 0;
  double floating = 0;
};
bool ParseNumber(const std::string& text, ParsedNumber* out) {
  if (text.empty()) return false;
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  char* stop = nullptr;
  errno = 0;
  const long long i = std::strtoll(begin, &stop, 10);
  if (stop == end && errno == 0) {
    *out = {true, i, static_cast<double>(i)};
    return true;
  }
  if (stop == end && errno == ERANGE && text[0] != '-') {
    errno = 0;
    const unsigned long long u = std::strtoull(begin, &stop, 10);
    if (stop == end && errno == 0) {
      *out = {true, static_cast<int64_t>(u), static_cast<double>(u)};
      return true;
    }
  }
  if (EqualsIgnoringCase(text, "true")) {
    *out = {true, 1, 1.0};
    return true;
  }
  if (EqualsIgnoringCase(text, "false")) {
    *out = {true, 0, 0.0};
    return true;
  }
  const double d = std::strtod(begin, &stop);
  if (stop != end) return false;
  *out = {false, 0, d};
  return true;
}

// ------------------------------------------------------------------- block converters

struct Target {
  DataType type;
  const NarrowFloatFormat* small_format;  // float8/float6/float4 targets
  CastOptions options;
};

uint8_t EncodeSmallFloat(double v, const Target& t) {
  const NarrowFloatFormat& f = *t.small_format;
  if (f.specials == NarrowFloatFormat::Specials::kFinite && std::isnan(v)) {
    return static_cast<uint8_t>(1u << (f.total_bits() - 1));  // -0, as ml_dtypes and ONNX's tests
  }
  // saturate only concerns float8 targets; float4/float6 always clamp (they have no inf/NaN).
  return static_cast<uint8_t>(DoubleToNarrowFloat(v, f, t.options.saturate, t.options.e8m0_rounding));
}

// Converts n arithmetic values into any non-string target.
template <typename S>
void FromArithmetic(const S* src, int64_t n, const Target& t, void* dst) {
  if (VisitArithmetic(t.type, [&](auto tag) {
        using D = typename decltype(tag)::type;
        D* out = static_cast<D*>(dst);
        if (IsSubByteInteger(t.type)) {
          const int bits = GetDataTypeInfo(t.type).bits;
          const bool is_signed = t.type == DataType::kInt4 || t.type == DataType::kInt2;
          for (int64_t i = 0; i < n; ++i) out[i] = static_cast<D>(WrapSubByte(ToInt64Bits(src[i]), bits, is_signed));
        } else {
          for (int64_t i = 0; i < n; ++i) out[i] = ArithmeticCast<D>(src[i]);
        }
      })) {
    return;
  }
  if (t.type == DataType::kFloat16) {
    auto* out = static_cast<uint16_t*>(dst);
    if constexpr (std::is_same_v<S, float>) {
      if (FloatToHalfFast(src, out, n)) return;
      for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(src[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        out[i] = static_cast<uint16_t>(DoubleToNarrowFloat(ForNarrowing(src[i]), formats::kFloat16, false));
      }
    }
  } else if (t.type == DataType::kBFloat16) {
    auto* out = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<S, float>) {
        out[i] = FloatToBFloat16Bits(src[i]);
      } else {
        out[i] = static_cast<uint16_t>(DoubleToNarrowFloat(ForNarrowing(src[i]), formats::kBFloat16, false));
      }
    }
  } else if (t.small_format != nullptr) {
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = EncodeSmallFloat(ForNarrowing(src[i]), t);
  } else if (t.type == DataType::kString) {
    auto* out = static_cast<std::string*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = FormatNumber(src[i]);
  }
}

// Decodes a narrow-float block to float (exact), then converts it.
void FromNarrowFloat(DataType from, const void* src, int64_t n, const Target& t, void* dst) {
  float block[kBlock];
  const size_t out_size = ElementSize(t.type);
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    if (from == DataType::kFloat16) {
      const uint16_t* in = static_cast<const uint16_t*>(src) + start;
      if (t.type == DataType::kFloat) {  // straight into the output: the common widening
        float* out = static_cast<float*>(dst) + start;
        if (!HalfToFloatFast(in, out, m)) {
          for (int64_t i = 0; i < m; ++i) out[i] = HalfBitsToFloat(in[i]);
        }
        continue;
      }
      if (!HalfToFloatFast(in, block, m)) {
        for (int64_t i = 0; i < m; ++i) block[i] = HalfBitsToFloat(in[i]);
      }
    } else if (from == DataType::kBFloat16) {
      const uint16_t* in = static_cast<const uint16_t*>(src) + start;
      for (int64_t i = 0; i < m; ++i) block[i] = BFloat16BitsToFloat(in[i]);
    } else {
      const uint8_t* in = static_cast<const uint8_t*>(src) + start;
      const auto& table = DecodeTable(from);
      for (int64_t i = 0; i < m; ++i) block[i] = table[in[i]];
    }
    FromArithmetic(block, m, t, static_cast<char*>(dst) + start * out_size);
  }
}

// Sub-byte integer sources are read from their low bits only, so that both the canonical
// sign-extended byte and ml_dtypes' masked byte (int4 -1 stored as 0x0F) read correctly.
void FromSubByteInteger(DataType from, const uint8_t* src, int64_t n, const Target& t, void* dst) {
  const int bits = GetDataTypeInfo(from).bits;
  const bool is_signed = from == DataType::kInt4 || from == DataType::kInt2;
  const size_t out_size = ElementSize(t.type);
  int8_t block[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) block[i] = static_cast<int8_t>(WrapSubByte(src[start + i], bits, is_signed));
    void* out = static_cast<char*>(dst) + start * out_size;
    if (is_signed) {
      FromArithmetic(block, m, t, out);
    } else {
      FromArithmetic(reinterpret_cast<const uint8_t*>(block), m, t, out);
    }
  }
}

Status FromString(const std::string* src, int64_t first_index, int64_t n, const Target& t, void* dst) {
  if (t.type == DataType::kString) {
    auto* out = static_cast<std::string*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = src[i];
    return Status::Ok();
  }
  // Integer targets take integral strings exactly (as 64-bit patterns); others via double.
  const bool integer_target = IsInteger(t.type);
  const bool unsigned_target = GetDataTypeInfo(t.type).kind == TypeKind::kUnsignedInt;
  const size_t out_size = ElementSize(t.type);
  int64_t integers[kBlock];
  double floats[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) {
      ParsedNumber p;
      if (!ParseNumber(src[start + i], &p)) {
        return InvalidArgument("string element ", first_index + start + i, " (\"", src[start + i],
                               "\") is not a number");
      }
      floats[i] = p.floating;
      if (p.integral) {
        integers[i] = p.integer;
      } else if (unsigned_target && p.floating >= 0) {
        integers[i] = static_cast<int64_t>(FloatToInteger<uint64_t>(p.floating));
      } else {
        integers[i] = FloatToInteger<int64_t>(p.floating);
      }
    }
    void* out = static_cast<char*>(dst) + start * out_size;
    if (integer_target) {
      FromArithmetic(integers, m, t, out);
    } else {
      FromArithmetic(floats, m, t, out);
    }
  }
  return Status::Ok();
}

bool IsComplex(DataType t) { return t == DataType::kComplex64 || t == DataType::kComplex128; }

}  // namespace

bool CastSupported(DataType from, DataType to) {
  return IsValidDataType(static_cast<int32_t>(from)) && IsValidDataType(static_cast<int32_t>(to)) && !IsComplex(from) &&
         !IsComplex(to);
}

Status CastElements(DataType from, const void* src, DataType to, void* dst, int64_t begin, int64_t end,
                    const CastOptions& options) {
  if (!CastSupported(from, to)) {
    return NotImplemented("no conversion from ", DataTypeName(from), " to ", DataTypeName(to));
  }
  const int64_t n = end - begin;
  if (n <= 0) return Status::Ok();
  const Target target{to, SmallFloatFormat(to), options};
  const void* in = static_cast<const char*>(src) + begin * ElementSize(from);
  void* out = static_cast<char*>(dst) + begin * ElementSize(to);
  if (from == DataType::kString) return FromString(static_cast<const std::string*>(in), begin, n, target, out);
  if (IsSubByteInteger(from)) {
    FromSubByteInteger(from, static_cast<const uint8_t*>(in), n, target, out);
    return Status::Ok();
  }
  const bool visited = VisitArithmetic(from, [&](auto tag) {
    using S = typename decltype(tag)::type;
    FromArithmetic(static_cast<const S*>(in), n, target, out);
  });
  if (!visited) FromNarrowFloat(from, in, n, target, out);
  return Status::Ok();
}

}  // namespace onnx_light
