// Every integer microkernel (IgemmKernelVariants) against a direct 64-bit sum of shifted
// products reduced modulo 2^32, over odd shapes, both signednesses of A and B, per-tensor
// and per-row/per-column zero points (a kernel with a byte tile, VNNI's vpdpbusd, runs it for
// every signed B and its pair tile for every unsigned one); every requantiser against the
// double-precision formula of the ONNX reference.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "native/core/allocator.h"
#include "native/executor/cpu_executor.h"
#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/quantized/igemm/igemm.h"
#include "native/kernels/quantized/igemm/igemm_kernel.h"

namespace onnx_light {
namespace igemm {
namespace {

using Variant = IsaVariant<const IgemmKernel* (*)()>;

// Skips a variant whose ISA is off, or whose getter has no kernel on this CPU (VNNI).
#define SKIP_UNLESS_KERNEL(variant, kernel)     \
  OL_SKIP_UNLESS_ISA_ENABLED(variant);          \
  const IgemmKernel* kernel = (variant).impl(); \
  if (kernel == nullptr) GTEST_SKIP() << "ISA variant '" << (variant).name << "' not run: the CPU lacks it"

std::vector<uint8_t> RandomBytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<uint8_t>(d(rng));
  return v;
}

int32_t Value(const std::vector<uint8_t>& bytes, bool is_signed, int64_t e) {
  return is_signed ? static_cast<int32_t>(static_cast<int8_t>(bytes[e])) : static_cast<int32_t>(bytes[e]);
}

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed;
  std::vector<int32_t> azp, bzp;  // size 1 or m / n
};

std::string Describe(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + (c.a_signed ? " s8" : " u8") +
         (c.b_signed ? "s8" : "u8") + " azp[0]=" + std::to_string(c.azp[0]) + " bzp[0]=" + std::to_string(c.bzp[0]) +
         (c.bzp.size() > 1 ? " per-column" : "") + (c.azp.size() > 1 ? " per-row" : "");
}

// C = (A - azp)(B - bzp) by direct 64-bit sums reduced modulo 2^32, row-major m x n.
std::vector<int32_t> DirectProduct(const Case& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<int32_t> out(static_cast<size_t>(c.m * c.n));
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        s += int64_t{Value(a, c.a_signed, i * c.k + kk) - c.azp[c.azp.size() == 1 ? 0 : i]} *
             (Value(b, c.b_signed, kk * c.n + j) - c.bzp[c.bzp.size() == 1 ? 0 : j]);
      }
      out[i * c.n + j] = static_cast<int32_t>(static_cast<uint32_t>(s));
    }
  }
  return out;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = {{1, 1, 1},    {1, 7, 1},     {5, 3, 2},
                                                                     {13, 33, 17}, {7, 65, 64},   {29, 47, 3},
                                                                     {97, 257, 5}, {3, 31, 1025}, {37, 18, 600}};
  int index = 0;
  for (const auto& [m, n, k] : shapes) {
    for (int types = 0; types < 4; ++types) {
      const bool as = (types & 1) != 0, bs = (types & 2) != 0;
      const int32_t zps[3] = {0, 128, 255};
      Case c{m, n, k, as, bs, {as ? zps[index % 3] - 128 : zps[index % 3]}, {}};
      if (index % 3 == 0) {
        c.bzp = {bs ? zps[(index + 1) % 3] - 128 : zps[(index + 1) % 3]};
      } else if (index % 3 == 2) {  // per column on B, one zero point on A
        const auto z = RandomBytes(n, 100 + index);
        for (int64_t j = 0; j < n; ++j) c.bzp.push_back(Value(z, bs, j));
      } else {  // per column, and per row on A
        const auto z = RandomBytes(n, 100 + index);
        for (int64_t j = 0; j < n; ++j) c.bzp.push_back(Value(z, bs, j));
        const auto za = RandomBytes(m, 200 + index);
        c.azp.clear();
        for (int64_t i = 0; i < m; ++i) c.azp.push_back(Value(za, as, i));
      }
      cases.push_back(c);
      ++index;
    }
  }
  return cases;
}

class IgemmVariantTest : public ::testing::TestWithParam<Variant> {};

TEST_P(IgemmVariantTest, MatchesDirectShiftedProductSums) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  int seed = 1;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    const auto a = RandomBytes(c.m * c.k, seed++), b = RandomBytes(c.k * c.n, seed++);
    auto packed = IgemmPackedB::Create(c.k, c.n, IgemmMatrix{b.data(), c.b_signed, c.n, 1}, c.bzp.data(),
                                       static_cast<int64_t>(c.bzp.size()), kernel);
    ASSERT_TRUE(packed.ok());
    std::vector<int32_t> got(static_cast<size_t>(c.m * c.n), 0);
    std::vector<int> seen(got.size(), 0);
    const IgemmA ia{IgemmMatrix{a.data(), c.a_signed, c.k, 1}, c.azp.data(), static_cast<int64_t>(c.azp.size())};
    ASSERT_TRUE(IgemmCompute(ParallelContext{}, Allocator::Default(), 1 << 30, c.m, ia, **packed,
                             [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                               for (int r = 0; r < rows; ++r) {
                                 for (int q = 0; q < cols; ++q) {
                                   got[(i0 + r) * c.n + j0 + q] = acc[r * ld + q];
                                   ++seen[(i0 + r) * c.n + j0 + q];
                                 }
                               }
                             })
                    .ok());
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          s += int64_t{Value(a, c.a_signed, i * c.k + kk) - c.azp[c.azp.size() == 1 ? 0 : i]} *
               (Value(b, c.b_signed, kk * c.n + j) - c.bzp[c.bzp.size() == 1 ? 0 : j]);
        }
        ASSERT_EQ(seen[i * c.n + j], 1) << i << "," << j;
        ASSERT_EQ(got[i * c.n + j], static_cast<int32_t>(static_cast<uint32_t>(s))) << i << "," << j;
      }
    }
  }
}

// Sums past 2^31 wrap exactly as the direct int32 accumulation the ONNX ops define.
TEST_P(IgemmVariantTest, WrapsModulo2To32) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  const int64_t m = 3, n = 5, k = 70000;  // 255 * 255 * 70000 > 2^32
  std::vector<uint8_t> a(m * k, 255), b(k * n, 255);
  const int32_t zero = 0;
  auto packed = IgemmPackedB::Create(k, n, IgemmMatrix{b.data(), false, n, 1}, &zero, 1, kernel);
  ASSERT_TRUE(packed.ok());
  std::vector<int32_t> got(m * n);
  ASSERT_TRUE(IgemmCompute(ParallelContext{}, Allocator::Default(), 1 << 30, m,
                           IgemmA{IgemmMatrix{a.data(), false, k, 1}, &zero, 1}, **packed,
                           [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                             for (int r = 0; r < rows; ++r) {
                               for (int q = 0; q < cols; ++q) got[(i0 + r) * n + j0 + q] = acc[r * ld + q];
                             }
                           })
                  .ok());
  const int32_t expected = static_cast<int32_t>(static_cast<uint32_t>(int64_t{255 * 255} * k));
  for (int32_t v : got) ASSERT_EQ(v, expected);
}

TEST_P(IgemmVariantTest, RequantizeMatchesReferenceFormula) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> acc_dist(-3000000, 3000000);
  std::uniform_real_distribution<float> scale(1e-5f, 2e-2f);
  for (const int64_t n : {1, 7, 8, 15, 16, 17, 40, 133}) {
    for (const bool is_signed : {false, true}) {
      for (const int64_t step : {0, 1}) {
        std::vector<int32_t> acc(n);
        std::vector<float> multiplier(n);
        for (auto& v : acc) v = acc_dist(rng);
        for (auto& v : multiplier) v = scale(rng);
        acc[0] = 2147483000;    // wraps with the bias
        if (n > 3) acc[3] = 5;  // 5 * 0.5 + zp: a half, rounds to even
        if (n > 3) multiplier[3 * step] = step != 0 ? 0.5f : multiplier[0];
        const int32_t bias = 1000, zp = is_signed ? -3 : 120;
        std::vector<uint8_t> got(n);
        kernel->requantize(acc.data(), n, bias, multiplier.data(), step, zp, is_signed, got.data());
        for (int64_t j = 0; j < n; ++j) {
          const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc[j]) + static_cast<uint32_t>(bias));
          volatile double product = static_cast<double>(v) * multiplier[j * step];  // no fused multiply-add
          const double r = std::nearbyint(product + zp);
          const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
          const int expected = static_cast<int>(std::min(hi, std::max(lo, r)));
          const int value = is_signed ? static_cast<int8_t>(got[j]) : got[j];
          ASSERT_EQ(value, expected) << "n=" << n << " j=" << j << " signed=" << is_signed << " step=" << step;
        }
      }
    }
  }
}

// The reference's rounding at and near half steps (where any shortcut through float would
// show first; a float-first requantiser was tried and reverted, see git log): accumulators chosen so
// that y = double(acc + bias) * multiplier + zp lies within a few multipliers of a
// half-integer (exactly on it for the power-of-two multiplier), across the output range,
// with multipliers down to 1e-7 (accumulators near 2^30, where float(acc) is inexact) and a
// zero point beyond the 8-bit range; every lane against the double-precision formula.
TEST_P(IgemmVariantTest, RequantizeMatchesReferenceAtAndNearHalfSteps) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  for (const float multiplier : {0x1p-10f, 0.0123f, 0.3f, 1e-4f, 1.7e-7f, 3.1e-8f}) {
    for (const int32_t zp : {0, 120, -3, 1000}) {
      for (const bool is_signed : {false, true}) {
        const int32_t bias = -77;
        std::vector<int32_t> acc;
        for (int half = -300; half <= 300; ++half) {
          const double target = (half + 0.5 - zp) / static_cast<double>(multiplier);
          if (std::abs(target) > 2.1e9) continue;
          for (int delta = -2; delta <= 2; ++delta) {
            acc.push_back(static_cast<int32_t>(std::llround(target)) + delta - bias);
          }
        }
        const int64_t n = static_cast<int64_t>(acc.size());
        SCOPED_TRACE("multiplier=" + std::to_string(multiplier) + " zp=" + std::to_string(zp) +
                     (is_signed ? " s8" : " u8") + " n=" + std::to_string(n));
        std::vector<uint8_t> got(n);
        kernel->requantize(acc.data(), n, bias, &multiplier, 0, zp, is_signed, got.data());
        for (int64_t j = 0; j < n; ++j) {
          const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc[j]) + static_cast<uint32_t>(bias));
          volatile double product = static_cast<double>(v) * multiplier;  // no fused multiply-add
          const double r = std::nearbyint(product + zp);
          const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
          const int expected = static_cast<int>(std::min(hi, std::max(lo, r)));
          const int value = is_signed ? static_cast<int8_t>(got[j]) : got[j];
          ASSERT_EQ(value, expected) << "j=" << j << " acc=" << acc[j] << " y=" << product + zp;
        }
      }
    }
  }
}

// The zero-point correction of every variant (its own lanes, zero_point_terms.h) against a
// plain uint32 loop: lengths around every lane count, azp 0 (the row term alone), 8-bit
// and full-range azp, column sums and C values across all 32 bits (products and sums that
// wrap); nothing past n written.
TEST_P(IgemmVariantTest, ZeroPointTermsMatchPlainWrappingLoop) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  ASSERT_NE(kernel->add_zero_point_terms, nullptr) << "every kernel lists its correction";
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> any;
  constexpr uint32_t kSentinel = 0xa5a5a5a5u;
  for (const int64_t n : {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 61, 224}) {
    for (const uint32_t azp : {0u, 1u, 128u, 255u, 0xffffff80u, 0x7fffffffu, any(rng)}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " azp=" + std::to_string(azp));
      std::vector<uint32_t> sums(n), row(n + 16, kSentinel);
      for (auto& v : sums) v = any(rng);
      for (int64_t j = 0; j < n; ++j) row[j] = any(rng);
      const uint32_t row_term = any(rng);
      std::vector<uint32_t> want(row);
      for (int64_t j = 0; j < n; ++j) want[j] = want[j] + row_term - azp * sums[j];
      kernel->add_zero_point_terms(row.data(), n, row_term, azp, sums.data());
      for (size_t j = 0; j < row.size(); ++j) ASSERT_EQ(row[j], want[j]) << j;
    }
  }
}

// The transposed arrangement (constant A packed once, B packed per block): every shape of
// Cases() with A's zero points per row, B's one zero point, B read with a row stride wider
// than the block (as a convolution reads its input planes in place), the rows computed in
// two calls split at a multiple of mr; against the direct 64-bit sum reduced modulo 2^32.
TEST_P(IgemmVariantTest, PackedATimesBlocksMatchesDirectShiftedProductSums) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  int seed = 500;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    const int64_t ld = c.n + 3;
    const auto a = RandomBytes(c.m * c.k, seed++), b = RandomBytes(c.k * ld, seed++);
    auto packed = IgemmPackedA::Create(c.m, c.k, IgemmMatrix{a.data(), c.a_signed, c.k, 1}, c.azp.data(),
                                       static_cast<int64_t>(c.azp.size()), kernel);
    ASSERT_TRUE(packed.ok());
    const IgemmPackedA& pa = **packed;
    std::vector<int64_t> panel_storage(IgemmBBlockBytes(pa, c.n) / 8 + 1);
    std::vector<int32_t> column_sums(c.n);
    IgemmBBlock block{panel_storage.data(), column_sums.data(), c.n, c.b_signed, c.bzp[0]};
    IgemmPackBBlock(pa, IgemmMatrix{b.data(), c.b_signed, ld, 1}, &block);
    const int64_t mr = kernel->mr, nr = kernel->nr;
    const int64_t ldc = (c.n + nr - 1) / nr * nr + 5;
    const int64_t split = std::min<int64_t>(c.m, mr * ((c.m / 2) / mr));
    std::vector<int32_t> got((c.m + 2 * mr) * ldc, 0x5a5a5a5a);
    IgemmMultiplyBlock(pa, 0, split, block, got.data(), ldc);
    IgemmMultiplyBlock(pa, split, c.m - split, block, got.data() + split * ldc, ldc);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          s += int64_t{Value(a, c.a_signed, i * c.k + kk) - c.azp[c.azp.size() == 1 ? 0 : i]} *
               (Value(b, c.b_signed, kk * ld + j) - c.bzp[0]);
        }
        ASSERT_EQ(got[i * ldc + j], static_cast<int32_t>(static_cast<uint32_t>(s))) << i << "," << j;
      }
    }
  }
}

// Every edge of a tile through the packed-A arrangement: each row count 1..2 mr and column
// count 1..nr + 9 (a kernel with edge tiles runs one for every partial tile, the others
// pad), K short and past one K block (accumulated edge tiles), both signednesses; the
// results against the direct sums, and nothing stored past the documented room.
TEST_P(IgemmVariantTest, PackedAEveryTileEdgeMatchesDirectSums) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  const int64_t mr = kernel->mr, nr = kernel->nr;
  constexpr int32_t kSentinel = 0x5a5a5a5a;
  int seed = 700;
  for (const int64_t k : {int64_t{37}, int64_t{600}}) {
    for (const bool is_signed : {false, true}) {
      const int64_t m_max = 2 * mr, n_max = nr + 9;
      const auto a = RandomBytes(m_max * k, seed++), b = RandomBytes(k * n_max, seed++);
      const int32_t azp = is_signed ? -3 : 131, bzp = is_signed ? 5 : 120;
      for (int64_t m = 1; m <= m_max; m += (k > 100 ? 5 : 1)) {
        auto packed = IgemmPackedA::Create(m, k, IgemmMatrix{a.data(), is_signed, k, 1}, &azp, 1, kernel);
        ASSERT_TRUE(packed.ok());
        for (int64_t n = 1; n <= n_max; n += (k > 100 ? 3 : 1)) {
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                       (is_signed ? " s8" : " u8"));
          std::vector<int64_t> panel_storage(IgemmBBlockBytes(**packed, n) / 8 + 1);
          std::vector<int32_t> column_sums(n);
          IgemmBBlock block{panel_storage.data(), column_sums.data(), n, is_signed, bzp};
          IgemmPackBBlock(**packed, IgemmMatrix{b.data(), is_signed, n_max, 1}, &block);
          const int64_t rows_room = (m + mr - 1) / mr * mr, ldc = (n + nr - 1) / nr * nr + 3;
          std::vector<int32_t> got((rows_room + 1) * ldc, kSentinel);
          IgemmMultiplyBlock(**packed, 0, m, block, got.data(), ldc);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              int64_t s = 0;
              for (int64_t kk = 0; kk < k; ++kk) {
                s += int64_t{Value(a, is_signed, i * k + kk) - azp} * (Value(b, is_signed, kk * n_max + j) - bzp);
              }
              ASSERT_EQ(got[i * ldc + j], static_cast<int32_t>(static_cast<uint32_t>(s))) << i << "," << j;
            }
          }
          for (int64_t i = 0; i <= rows_room; ++i) {
            for (int64_t j = ldc - 3; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], kSentinel) << i << "," << j;
          }
          for (int64_t j = 0; j < ldc; ++j) ASSERT_EQ(got[rows_room * ldc + j], kSentinel) << j;
        }
      }
    }
  }
}

// The transposed arrangement wraps alike: sums past 2^31 (and column and row sums large
// enough to wrap the zero-point terms) reduce modulo 2^32 as the direct int32 accumulation.
TEST_P(IgemmVariantTest, PackedATimesBlocksWrapsModulo2To32) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  const int64_t m = 3, n = 5, k = 70000;
  for (const bool is_signed : {false, true}) {
    SCOPED_TRACE(is_signed ? "int8" : "uint8");
    const uint8_t byte = is_signed ? 0x80 : 0xff;  // -128 or 255
    const int32_t value = is_signed ? -128 : 255, azp = is_signed ? 127 : 0, bzp = is_signed ? 127 : 0;
    std::vector<uint8_t> a(m * k, byte), b(k * n, byte);
    auto packed = IgemmPackedA::Create(m, k, IgemmMatrix{a.data(), is_signed, k, 1}, &azp, 1, kernel);
    ASSERT_TRUE(packed.ok());
    std::vector<int64_t> panel_storage(IgemmBBlockBytes(**packed, n) / 8 + 1);
    std::vector<int32_t> column_sums(n);
    IgemmBBlock block{panel_storage.data(), column_sums.data(), n, is_signed, bzp};
    IgemmPackBBlock(**packed, IgemmMatrix{b.data(), is_signed, n, 1}, &block);
    const int64_t ldc = (n + kernel->nr - 1) / kernel->nr * kernel->nr;
    std::vector<int32_t> got(((m + kernel->mr - 1) / kernel->mr * kernel->mr) * ldc);
    IgemmMultiplyBlock(**packed, 0, m, block, got.data(), ldc);
    const int32_t expected = static_cast<int32_t>(static_cast<uint32_t>(int64_t{value - azp} * (value - bzp) * k));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(got[i * ldc + j], expected) << i << "," << j;
    }
  }
}

// IgemmComputeSerial on the caller's scratch: the same sums as the direct reference, every
// element delivered once, and a misaligned scratch refused.
TEST_P(IgemmVariantTest, ComputeSerialMatchesDirectSumsOnCallerScratch) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  int seed = 900;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    const auto a = RandomBytes(c.m * c.k, seed++), b = RandomBytes(c.k * c.n, seed++);
    auto packed = IgemmPackedB::Create(c.k, c.n, IgemmMatrix{b.data(), c.b_signed, c.n, 1}, c.bzp.data(),
                                       static_cast<int64_t>(c.bzp.size()), kernel);
    ASSERT_TRUE(packed.ok());
    const size_t bytes = IgemmSerialScratchBytes(c.m, **packed);
    ASSERT_GT(bytes, 0u);
    std::vector<int64_t> storage(bytes / 8 + 16);
    void* scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) / 64 * 64);
    std::vector<int32_t> got(static_cast<size_t>(c.m * c.n), 0);
    std::vector<int> seen(got.size(), 0);
    const IgemmA ia{IgemmMatrix{a.data(), c.a_signed, c.k, 1}, c.azp.data(), static_cast<int64_t>(c.azp.size())};
    const auto sink = [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
      for (int r = 0; r < rows; ++r) {
        for (int q = 0; q < cols; ++q) {
          got[(i0 + r) * c.n + j0 + q] = acc[r * ld + q];
          ++seen[(i0 + r) * c.n + j0 + q];
        }
      }
    };
    ASSERT_TRUE(IgemmComputeSerial(c.m, ia, **packed, sink, scratch).ok());
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          s += int64_t{Value(a, c.a_signed, i * c.k + kk) - c.azp[c.azp.size() == 1 ? 0 : i]} *
               (Value(b, c.b_signed, kk * c.n + j) - c.bzp[c.bzp.size() == 1 ? 0 : j]);
        }
        ASSERT_EQ(seen[i * c.n + j], 1) << i << "," << j;
        ASSERT_EQ(got[i * c.n + j], static_cast<int32_t>(static_cast<uint32_t>(s))) << i << "," << j;
      }
    }
    const Status misaligned = IgemmComputeSerial(c.m, ia, **packed, sink, static_cast<char*>(scratch) + 4);
    EXPECT_EQ(misaligned.code(), StatusCode::kInvalidArgument);
  }
}

// The parallel path (participants split the blocks, a participant keeping its packed rows
// across its blocks and helping with others'): every element exactly once and equal to the
// direct sums for 2, 3 and 4 participants, on shapes whose rows split into several blocks
// (128 rows: two even blocks; 200: three; 97 with a short last panel), A packed once and
// shared, and A too large to share (4096 x 1100: each participant packs its row blocks).
TEST_P(IgemmVariantTest, ParallelComputeMatchesDirectSumsForEveryParticipantCount) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  const std::vector<Case> cases = {
      {128, 300, 77, false, true, {128}, {0}}, {200, 97, 130, true, true, {-3}, {}},
      {97, 513, 33, false, false, {}, {7}},    {128, 64, 200, true, false, {}, {}},
      {4096, 5, 1100, false, true, {9}, {}},
  };
  int seed = 2000;
  for (Case c : cases) {
    if (c.bzp.empty()) {  // per column
      const auto z = RandomBytes(c.n, seed++);
      for (int64_t j = 0; j < c.n; ++j) c.bzp.push_back(Value(z, c.b_signed, j));
    }
    if (c.azp.empty()) {  // per row
      const auto z = RandomBytes(c.m, seed++);
      for (int64_t i = 0; i < c.m; ++i) c.azp.push_back(Value(z, c.a_signed, i));
    }
    const auto a = RandomBytes(c.m * c.k, seed++), b = RandomBytes(c.k * c.n, seed++);
    const std::vector<int32_t> want = DirectProduct(c, a, b);
    auto packed = IgemmPackedB::Create(c.k, c.n, IgemmMatrix{b.data(), c.b_signed, c.n, 1}, c.bzp.data(),
                                       static_cast<int64_t>(c.bzp.size()), kernel);
    ASSERT_TRUE(packed.ok());
    const IgemmA ia{IgemmMatrix{a.data(), c.a_signed, c.k, 1}, c.azp.data(), static_cast<int64_t>(c.azp.size())};
    for (int threads : {2, 3, 4}) {
      SCOPED_TRACE(Describe(c) + " threads=" + std::to_string(threads));
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      auto executor = CpuExecutor::Create(policy);
      ASSERT_TRUE(executor.ok());
      ParallelContext parallel;
      parallel.executor = executor->get();
      std::vector<int32_t> got(want.size(), 0);
      std::vector<std::atomic<int>> seen(want.size());
      ASSERT_TRUE(IgemmCompute(parallel, Allocator::Default(), /*parallel_minimum_units=*/0, c.m, ia, **packed,
                               [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                                 for (int r = 0; r < rows; ++r) {
                                   for (int q = 0; q < cols; ++q) {
                                     got[(i0 + r) * c.n + j0 + q] = acc[r * ld + q];
                                     ++seen[(i0 + r) * c.n + j0 + q];
                                   }
                                 }
                               })
                      .ok());
      for (size_t e = 0; e < want.size(); ++e) {
        ASSERT_EQ(seen[e].load(), 1) << e;
        ASSERT_EQ(got[e], want[e]) << e;
      }
    }
  }
}

// Indirect rows (IgemmComputeIndirect): row i of A is `taps` spans of `segment` values at
// rows[i] + offsets[t] of one buffer (overlapping windows, as a convolution's are; bytes
// for VNNI's byte tile, int16 for AVX2's pairs), read in place by the kernel's indirect tile; C = column offsets (for
// the odd row counts, near the int32 limits) + A x B with no zero points, against direct 64-bit sums reduced modulo
// 2^32. Every row count 1..12 of a tile and column edges of 8..32 (and several row and column blocks), serially and
// with 2 and 3 participants. A kernel without indirect tiles must refuse the call.
TEST_P(IgemmVariantTest, IndirectRowsMatchDirectSumsForEveryTileEdgeAndParticipantCount) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  struct Shape {
    int64_t m, n, taps, segment;
  };
  const std::vector<Shape> shapes = {{1, 8, 1, 4},    {5, 20, 3, 8},   {12, 32, 9, 4},    {13, 45, 9, 12},
                                     {49, 64, 9, 64}, {7, 24, 2, 132}, {200, 300, 4, 16}, {11, 16, 1, 1024}};
  int seed = 3000;
  for (const Shape& sh : shapes) {
    const int64_t k = sh.taps * sh.segment, span = (sh.m + 3) * 4 + (sh.taps + 1) * sh.segment;
    const auto x = RandomBytes(span + k, seed++), b = RandomBytes(k * sh.n, seed++);
    auto packed = IgemmPackedB::Create(k, sh.n, IgemmMatrix{b.data(), true, sh.n, 1}, nullptr, 1, kernel);
    ASSERT_TRUE(packed.ok());
    // A's values: bytes (uint8) for a byte tile; int16 for pairs, the odd shapes' negative
    // (x as int8) as a convolution's int8 input is.
    const int e = IgemmIndirectElementBytes(**packed);
    const bool negative = e == 2 && sh.m % 2 == 1;
    const auto value = [&](int64_t pos) { return negative ? int64_t{static_cast<int8_t>(x[pos])} : int64_t{x[pos]}; };
    std::vector<uint8_t> data(x.size() * e);
    for (size_t pos = 0; pos < x.size(); ++pos) {
      if (e == 1) {
        data[pos] = x[pos];
      } else {
        const auto v = static_cast<int16_t>(value(static_cast<int64_t>(pos)));
        std::memcpy(data.data() + 2 * pos, &v, sizeof(v));
      }
    }
    std::vector<int64_t> origin(static_cast<size_t>(sh.m)), tap(static_cast<size_t>(sh.taps));
    std::vector<const uint8_t*> rows(static_cast<size_t>(sh.m));
    std::vector<int64_t> offsets(static_cast<size_t>(sh.taps));
    for (int64_t i = 0; i < sh.m; ++i) {
      origin[i] = (i * 4 + (i % 3)) % span;  // any alignment
      rows[i] = data.data() + origin[i] * e;
    }
    for (int64_t t = 0; t < sh.taps; ++t) {
      tap[t] = t * sh.segment + (t % 2) * 3;
      offsets[t] = tap[t] * e;
    }
    // Column offsets for the odd row counts (none for the even ones), near the int32 limits.
    std::vector<int32_t> column_offsets(static_cast<size_t>(sh.n), 0);
    if (sh.m % 2 == 1) {
      for (int64_t j = 0; j < sh.n; ++j)
        column_offsets[j] = (j % 2 ? 2147480000 : -2147480000) + static_cast<int32_t>(j);
    }
    const bool with_offsets = sh.m % 2 == 1;
    std::vector<int32_t> want(static_cast<size_t>(sh.m * sh.n));
    for (int64_t i = 0; i < sh.m; ++i) {
      for (int64_t j = 0; j < sh.n; ++j) {
        int64_t sum = 0;
        for (int64_t t = 0; t < sh.taps; ++t) {
          for (int64_t cc = 0; cc < sh.segment; ++cc) {
            sum += value(origin[i] + tap[t] + cc) * Value(b, true, (t * sh.segment + cc) * sh.n + j);
          }
        }
        want[i * sh.n + j] =
            static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(column_offsets[j]));
      }
    }
    const IgemmIndirectA a{rows.data(), offsets.data(), sh.taps, sh.segment,
                           with_offsets ? column_offsets.data() : nullptr};
    const auto none = [](int64_t, int, int64_t, int, const int32_t*, int64_t) {};
    if ((e == 1 ? kernel->indirect_tile_u8s8 == nullptr : kernel->indirect_tile_pairs == nullptr)) {
      EXPECT_FALSE(IgemmIndirectSupported(**packed, sh.segment));
      EXPECT_FALSE(IgemmComputeIndirect(ParallelContext{}, Allocator::Default(), 0, sh.m, a, **packed, none).ok());
      continue;
    }
    ASSERT_TRUE(IgemmIndirectSupported(**packed, sh.segment));
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.n) + " taps=" + std::to_string(sh.taps) +
                   " segment=" + std::to_string(sh.segment) + " threads=" + std::to_string(threads));
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      auto executor = CpuExecutor::Create(policy);
      ASSERT_TRUE(executor.ok());
      ParallelContext parallel;
      parallel.executor = executor->get();
      std::vector<int32_t> got(want.size(), 0);
      std::vector<std::atomic<int>> seen(want.size());
      ASSERT_TRUE(
          IgemmComputeIndirect(parallel, Allocator::Default(), /*parallel_minimum_units=*/0, sh.m, a, **packed,
                               [&](int64_t i0, int count, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
                                 for (int r = 0; r < count; ++r) {
                                   for (int q = 0; q < cols; ++q) {
                                     got[(i0 + r) * sh.n + j0 + q] = acc[r * ld + q];
                                     ++seen[(i0 + r) * sh.n + j0 + q];
                                   }
                                 }
                               })
              .ok());
      for (size_t e = 0; e < want.size(); ++e) {
        ASSERT_EQ(seen[e].load(), 1) << e;
        ASSERT_EQ(got[e], want[e]) << e;
      }
    }
  }
  // Spans that are not whole K groups are refused.
  auto packed = IgemmPackedB::Create(6, 8, IgemmMatrix{RandomBytes(48, 1).data(), true, 8, 1}, nullptr, 1, kernel);
  ASSERT_TRUE(packed.ok());
  EXPECT_FALSE(IgemmIndirectSupported(**packed, 3));
}

// C written in place (whole tiles accumulated in C, edge tiles through scratch): equal to
// the direct sums with 1 and 2 participants, the padding past n in each row of C untouched.
TEST_P(IgemmVariantTest, ComputeIntoMatchesDirectSumsAndLeavesRowPaddingAlone) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  std::vector<Case> cases = Cases();
  cases.push_back({128, 300, 77, false, true, {128}, {0}});  // two row blocks, shared A
  cases.push_back({24, 64, 40, true, true, {-1}, {2}});      // whole tiles only
  int seed = 3000;
  constexpr int32_t kSentinel = 0x5a5a5a5a;
  for (const Case& c : cases) {
    const auto a = RandomBytes(c.m * c.k, seed++), b = RandomBytes(c.k * c.n, seed++);
    const std::vector<int32_t> want = DirectProduct(c, a, b);
    auto packed = IgemmPackedB::Create(c.k, c.n, IgemmMatrix{b.data(), c.b_signed, c.n, 1}, c.bzp.data(),
                                       static_cast<int64_t>(c.bzp.size()), kernel);
    ASSERT_TRUE(packed.ok());
    const IgemmA ia{IgemmMatrix{a.data(), c.a_signed, c.k, 1}, c.azp.data(), static_cast<int64_t>(c.azp.size())};
    for (int threads : {1, 2}) {
      SCOPED_TRACE(Describe(c) + " threads=" + std::to_string(threads));
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      auto executor = CpuExecutor::Create(policy);
      ASSERT_TRUE(executor.ok());
      ParallelContext parallel;
      parallel.executor = executor->get();
      const int64_t ldc = c.n + 3;
      std::vector<int32_t> got(static_cast<size_t>(c.m * ldc), kSentinel);
      ASSERT_TRUE(IgemmComputeInto(parallel, Allocator::Default(), /*parallel_minimum_units=*/0, c.m, ia, **packed,
                                   got.data(), ldc)
                      .ok());
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) ASSERT_EQ(got[i * ldc + j], want[i * c.n + j]) << i << "," << j;
        for (int64_t j = c.n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], kSentinel) << i << "," << j;
      }
    }
  }
}

TEST_P(IgemmVariantTest, ComputeIntoRejectsARowStrideShorterThanN) {
  SKIP_UNLESS_KERNEL(GetParam(), kernel);
  const std::vector<uint8_t> b(6, 1), a(6, 1);
  const int32_t zero = 0;
  auto packed = IgemmPackedB::Create(2, 3, IgemmMatrix{b.data(), false, 3, 1}, &zero, 1, kernel);
  ASSERT_TRUE(packed.ok());
  std::vector<int32_t> c(8);
  const IgemmA ia{IgemmMatrix{a.data(), false, 2, 1}, &zero, 1};
  EXPECT_EQ(IgemmComputeInto(ParallelContext{}, Allocator::Default(), 1, 3, ia, **packed, c.data(), 2).code(),
            StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Isa, IgemmVariantTest, ::testing::ValuesIn(IgemmKernelVariants()),
                         IsaVariantTestName<const IgemmKernel* (*)()>);

}  // namespace
}  // namespace igemm
}  // namespace onnx_light
