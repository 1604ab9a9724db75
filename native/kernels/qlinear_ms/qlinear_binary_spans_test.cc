// Every variant of qlinear_binary_spans.h (each one run on this CPU, the others skipped by
// name) against a scalar oracle written from qlinear_util.h's Dequantize/Quantize: every
// pair of byte values, every step pattern (same shape, either operand broadcast, both),
// lengths 0..3 vectors + odd tails, uint8 and int8, Add and Mul, scales that make ties,
// saturation, infinities and NaN. Bit for bit: the variants promise the same bytes.
#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

template <typename Q>
Q Oracle(Q a, Q b, const QLinearBinaryParams& p) {
  const float x = Dequantize(a, {p.sa, p.za}), y = Dequantize(b, {p.sb, p.zb});
  return Quantize<Q>(p.mul ? x * y : x + y, {p.sc, p.zc});
}

template <typename Q>
QLinearBinarySpanFn<Q> SpanOf(const QLinearBinarySpans& spans) {
  if constexpr (std::is_same_v<Q, uint8_t>) {
    return spans.u8;
  } else {
    return spans.s8;
  }
}

// Zero points inside Q's range for either signedness, given as uint8 values.
template <typename Q>
int32_t Zp(int unsigned_value) {
  return std::is_signed_v<Q> ? unsigned_value - 128 : unsigned_value;
}

// (sa, sb, sc, za, zb, zc) as uint8 zero points; the first makes ties (x.5 steps of C).
struct Scales {
  float sa, sb, sc;
  int za, zb, zc;
};
const Scales kScales[] = {
    {0.5f, 0.25f, 0.5f, 100, 140, 128},        // Add ties, saturation
    {0.5f, 0.25f, 4.0f, 100, 140, 128},        // Mul ties
    {0.0123f, 0.0377f, 0.0291f, 3, 250, 131},  // typical CNN scales
    {7.1e-3f, 2.9e-5f, 1.3e-2f, 128, 0, 255},  // unequal magnitudes
    {3e38f, 3e38f, 1.0f, 0, 255, 128},         // infinities (and inf - inf = NaN in Add)
    {1e-30f, 1e-30f, 1e-38f, 17, 201, 64},     // tiny (subnormal C scale)
};

class QLinearBinarySpansTest : public ::testing::TestWithParam<IsaVariant<QLinearBinarySpans>> {
 protected:
  template <typename Q>
  void EveryPairEveryPattern() {
    const QLinearBinarySpanFn<Q> span = SpanOf<Q>(GetParam().impl);
    std::vector<Q> a(65536), b(65536), c(65536 + 1);
    for (int i = 0; i < 65536; ++i) {
      a[i] = static_cast<Q>(std::numeric_limits<Q>::min() + i / 256);
      b[i] = static_cast<Q>(std::numeric_limits<Q>::min() + i % 256);
    }
    for (const Scales& s : kScales) {
      for (const bool mul : {false, true}) {
        const QLinearBinaryParams p{s.sa, s.sb, s.sc, Zp<Q>(s.za), Zp<Q>(s.zb), Zp<Q>(s.zc), mul};
        for (const int a_step : {1, 0}) {
          for (const int b_step : {1, 0}) {
            // The broadcast operand takes each of a few values (its first element).
            for (const int first : {0, 77, 255}) {
              const Q* pa = a_step != 0 ? a.data() : &a[first * 256];
              const Q* pb = b_step != 0 ? b.data() : &b[first];
              c[65536] = Q{42};  // must stay untouched
              span(pa, a_step, pb, b_step, c.data(), 65536, p);
              ASSERT_EQ(c[65536], Q{42}) << "wrote past n";
              for (int e = 0; e < 65536; ++e) {
                ASSERT_EQ(static_cast<int>(c[e]), static_cast<int>(Oracle<Q>(pa[e * a_step], pb[e * b_step], p)))
                    << GetParam().name << (mul ? " Mul" : " Add") << " scales " << s.sa << "," << s.sb << "," << s.sc
                    << " steps " << a_step << b_step << " at " << e;
              }
              if (a_step != 0 && b_step != 0) break;  // `first` applies to broadcasts only
            }
          }
        }
      }
    }
  }

  // Lengths 0..139 at odd offsets: the padded tail and the full vectors around it, nothing
  // written past n.
  template <typename Q>
  void OddLengthsAndOffsets() {
    const QLinearBinarySpanFn<Q> span = SpanOf<Q>(GetParam().impl);
    std::mt19937 rng(108);
    std::uniform_int_distribution<int> d(std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max());
    std::vector<Q> a(144), b(144);
    for (auto& v : a) v = static_cast<Q>(d(rng));
    for (auto& v : b) v = static_cast<Q>(d(rng));
    const QLinearBinaryParams p{0.05f, 0.02f, 0.04f, Zp<Q>(120), Zp<Q>(133), Zp<Q>(128), false};
    for (const bool mul : {false, true}) {
      QLinearBinaryParams q = p;
      q.mul = mul;
      for (int n = 0; n < 140; ++n) {
        for (const int offset : {0, 3}) {
          for (const int a_step : {1, 0}) {
            for (const int b_step : {1, 0}) {
              std::vector<Q> c(n + 8, Q{7});
              span(a.data() + offset, a_step, b.data() + offset, b_step, c.data() + 1, n, q);
              ASSERT_EQ(c[0], Q{7});
              for (int e = 0; e < n; ++e) {
                ASSERT_EQ(c[1 + e], Oracle<Q>(a[offset + e * a_step], b[offset + e * b_step], q))
                    << GetParam().name << " n " << n << " steps " << a_step << b_step << " at " << e;
              }
              for (int e = n + 1; e < n + 8; ++e) ASSERT_EQ(c[e], Q{7}) << "wrote past n = " << n;
            }
          }
        }
      }
    }
  }
};

TEST_P(QLinearBinarySpansTest, EveryUint8PairInEveryStepPatternMatchesTheOracle) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  EveryPairEveryPattern<uint8_t>();
}

TEST_P(QLinearBinarySpansTest, EveryInt8PairInEveryStepPatternMatchesTheOracle) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  EveryPairEveryPattern<int8_t>();
}

TEST_P(QLinearBinarySpansTest, OddLengthsAndOffsetsMatchTheOracleAndStayInBounds) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  OddLengthsAndOffsets<uint8_t>();
  OddLengthsAndOffsets<int8_t>();
}

// x86-64: AVX-512, AVX2, SSE2 and scalar; AArch64: NEON and scalar; elsewhere scalar.
TEST(QLinearBinarySpans, TheListIsTheArchitecturesVariantsEndingWithPortable) {
  std::vector<std::string> names;
  for (const auto& v : QLinearBinarySpanVariants()) names.push_back(v.name);
#if defined(__x86_64__)
  const std::vector<std::string> expected = {"avx512", "avx2", "sse2", "portable"};
#elif defined(__aarch64__)
  const std::vector<std::string> expected = {"neon", "portable"};
#else
  const std::vector<std::string> expected = {"portable"};
#endif
  EXPECT_EQ(names, expected);
  EXPECT_EQ(PortableVariant(QLinearBinarySpanVariants()).isa, Isa::kPortable);
}

INSTANTIATE_TEST_SUITE_P(Isa, QLinearBinarySpansTest, ::testing::ValuesIn(QLinearBinarySpanVariants()),
                         IsaVariantTestName<QLinearBinarySpans>);

}  // namespace
}  // namespace qlinear_ms
}  // namespace onnx_light
