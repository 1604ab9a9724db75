// The GEMM engine against a double-accumulation reference, for every microkernel this CPU
// supports, every transpose combination, odd shapes and several participant counts.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

#include "native/kernels/gemm/engine.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/packing.h"

namespace onnx_light {
namespace gemm {
namespace {

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

std::vector<float> Random(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Operands stored with padded leading dimensions, so strides differ from widths.
struct Operands {
  Case c;
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c0;
  explicit Operands(const Case& cs) : c(cs) {
    const int64_t a_rows = cs.ta ? cs.k : cs.m, a_cols = cs.ta ? cs.m : cs.k;
    const int64_t b_rows = cs.tb ? cs.n : cs.k, b_cols = cs.tb ? cs.k : cs.n;
    lda = a_cols + 3;
    ldb = b_cols + 5;
    ldc = cs.n + 2;
    a = Random(a_rows * lda, 1);
    b = Random(b_rows * ldb, 2);
    c0 = Random(cs.m * ldc, 3);
  }
  float A(int64_t i, int64_t k) const { return c.ta ? a[k * lda + i] : a[i * lda + k]; }
  float B(int64_t k, int64_t j) const { return c.tb ? b[j * ldb + k] : b[k * ldb + j]; }
  GemmProblem Problem(float* out) const {
    return GemmProblem{c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, out, ldc};
  }
};

void ExpectNearReference(const Operands& op, const std::vector<float>& out, const char* kernel) {
  const Case& c = op.c;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        sum += static_cast<double>(op.A(i, k)) * op.B(k, j);
        magnitude += std::fabs(static_cast<double>(op.A(i, k)) * op.B(k, j));
      }
      const double c_in = op.c0[i * op.ldc + j];
      const double expected = c.alpha * sum + (c.beta == 0.0f ? 0.0 : c.beta * c_in);
      const double tolerance = 1e-6 * (c.k + 4) * (std::fabs(c.alpha) * magnitude + std::fabs(c.beta * c_in)) + 1e-30;
      ASSERT_NEAR(out[i * op.ldc + j], expected, tolerance)
          << kernel << " at (" << i << "," << j << ") of " << c.m << "x" << c.n << "x" << c.k << " ta=" << c.ta
          << " tb=" << c.tb;
    }
    // Padding between rows of C is never written.
    for (int64_t j = c.n; j < op.ldc && i + 1 < c.m; ++j) ASSERT_EQ(out[i * op.ldc + j], op.c0[i * op.ldc + j]);
  }
}

class Runner {
 public:
  explicit Runner(int threads) {
    if (threads > 1) {
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      executor_ = *CpuExecutor::Create(policy);
      parallel_.executor = executor_.get();
    }
    tuning_.parallel_minimum_tasks = 1;  // smallest parallel threshold: force the parallel path
  }
  std::vector<float> Run(const MicroKernel& kernel, const Operands& op, GemmStats* stats = nullptr) {
    std::vector<float> out = op.c0;
    const Status s = SgemmWith(kernel, parallel_, &allocator_, tuning_, op.Problem(out.data()), stats);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  // The same product through SgemmPrepackedB (best kernel), the dense B overwritten with
  // NaN once packed: a prepacked B never reads it again.
  std::vector<float> RunPrepacked(const Operands& op) {
    std::vector<float> b = op.b;
    auto packed = PrepackedB::Create(&allocator_, op.c.tb, op.c.k, op.c.n, b.data(), op.ldb);
    EXPECT_TRUE(packed.ok()) << packed.status().ToString();
    if (!packed.ok()) return {};
    std::fill(b.begin(), b.end(), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> out = op.c0;
    const Status s = SgemmPrepackedB(parallel_, &allocator_, tuning_, op.c.ta, op.c.m, op.c.alpha, op.a.data(), op.lda,
                                     **packed, op.c.beta, out.data(), op.ldc);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  Allocator& allocator() { return allocator_; }

 private:
  std::shared_ptr<CpuExecutor> executor_;
  ParallelContext parallel_;
  Allocator allocator_;
  GemmTuning tuning_;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const int64_t shapes[][3] = {{1, 1, 1},   {1, 1, 7},   {1, 37, 19},  {29, 1, 23}, {2, 3, 1},     {13, 17, 19},
                               {12, 32, 5}, {24, 64, 9}, {61, 67, 71}, {5, 130, 3}, {131, 7, 401}, {97, 700, 33}};
  for (const auto& s : shapes) {
    for (int t = 0; t < 4; ++t) cases.push_back({s[0], s[1], s[2], (t & 1) != 0, (t & 2) != 0, 1.0f, 0.0f});
    cases.push_back({s[0], s[1], s[2], false, false, 0.5f, -2.0f});
    cases.push_back({s[0], s[1], s[2], true, true, -1.5f, 1.0f});
  }
  return cases;
}

// One test per microkernel compiled for this architecture: those the CPU cannot run, or
// the ISA cap excludes, are skipped by name (the other tests iterate SupportedKernels()).
class GemmKernelVariantTest : public ::testing::TestWithParam<IsaVariant<const MicroKernel* (*)()>> {};

TEST_P(GemmKernelVariantTest, MatchesReference) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const MicroKernel* kernel = GetParam().impl();
  ASSERT_NE(kernel, nullptr) << GetParam().name << " is enabled but its getter returned null";
  EXPECT_STREQ(kernel->name, GetParam().name);
  const std::vector<const MicroKernel*> supported = SupportedKernels();
  EXPECT_NE(std::find(supported.begin(), supported.end(), kernel), supported.end());
  Runner serial(1);
  for (const Case& c : Cases()) {
    const Operands op(c);
    ExpectNearReference(op, serial.Run(*kernel, op), kernel->name);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmKernelVariantTest, ::testing::ValuesIn(KernelVariants()),
                         IsaVariantTestName<const MicroKernel* (*)()>);

// The SIMD tiles' summation order, bit for bit: each element of C is one fused
// multiply-add per k in k order from zero (alpha 1, beta 0: C is that sum exactly),
// whatever the kernel's K unrolling, for K below, at and between multiples of its step.
// The scalar kernel multiplies and adds separately (no FMA in its portable build).
TEST_P(GemmKernelVariantTest, TileSumsEachElementInKOrderWithFusedMultiplyAdds) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const MicroKernel* kernel = GetParam().impl();
  ASSERT_NE(kernel, nullptr);
  if (kernel == &ScalarKernel()) GTEST_SKIP() << "the scalar kernel does not fuse";
  const int mr = kernel->mr, nr = kernel->nr;
  for (const int64_t kc : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{8}, int64_t{37}, int64_t{256}}) {
    const std::vector<float> a = Random(kc * mr, 31), b = Random(kc * nr, 32);
    const int64_t ldc = nr + 5;
    std::vector<float> c(mr * ldc, std::numeric_limits<float>::quiet_NaN());
    kernel->tile(kc, a.data(), b.data(), c.data(), ldc, 1.0f, 0.0f);
    for (int i = 0; i < mr; ++i) {
      for (int j = 0; j < nr; ++j) {
        float sum = 0.0f;
        for (int64_t k = 0; k < kc; ++k) sum = std::fma(a[k * mr + i], b[k * nr + j], sum);
        ASSERT_EQ(c[i * ldc + j], sum) << kernel->name << " kc=" << kc << " at (" << i << "," << j << ")";
      }
    }
  }
}

// Every partial tile of every microkernel (rows 1..mr x columns 1..nr, not both full: the
// masked vectors, the column form for each count of columns past the last whole vector, and
// the rows below mr) against a double-precision oracle, and bit for bit against the full
// tile run on a copy of C (what the engine did before it had partial tiles); C around the
// tile (the rows and columns past it, up to the full tile and beyond) is never written.
// K of 1, 4 (the tiles' unrolled K step, no remainder), an odd 37 and 300 (past every
// kernel's K block), beta 0 (C NaN: never read) and
// beta 1.5 (C read), alpha 0.75.
class GemmEdgeTileVariantTest : public ::testing::TestWithParam<IsaVariant<const MicroKernel* (*)()>> {};

TEST_P(GemmEdgeTileVariantTest, WritesOnlyItsRowsAndColumnsWithTheFullTilesBits) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const MicroKernel* kernel = GetParam().impl();
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(kernel->edge, nullptr) << kernel->name;
  const int mr = kernel->mr, nr = kernel->nr;
  const float alpha = 0.75f;
  for (const int64_t kc : {int64_t{1}, int64_t{4}, int64_t{37}, int64_t{300}}) {
    const std::vector<float> a = Random(kc * mr, 21), b = Random(kc * nr, 22);
    for (const float beta : {0.0f, 1.5f}) {
      for (int rows = 1; rows <= mr; ++rows) {
        for (int cols = 1; cols <= nr; ++cols) {
          if (rows == mr && cols == nr) continue;
          SCOPED_TRACE(std::string(kernel->name) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                       " kc=" + std::to_string(kc) + " beta=" + std::to_string(beta));
          // The panels as the engine packs them: A zero past `rows`, B zero past `cols`.
          std::vector<float> a_panel = a, b_panel = b;
          for (int64_t k = 0; k < kc; ++k) {
            std::fill(a_panel.begin() + k * mr + rows, a_panel.begin() + (k + 1) * mr, 0.0f);
            std::fill(b_panel.begin() + k * nr + cols, b_panel.begin() + (k + 1) * nr, 0.0f);
          }
          const int64_t ldc = nr + 3;
          std::vector<float> c0 = Random((mr + 2) * ldc, 23);
          if (beta == 0.0f) {
            for (int i = 0; i < rows; ++i) {
              std::fill(c0.begin() + i * ldc, c0.begin() + i * ldc + cols, std::numeric_limits<float>::quiet_NaN());
            }
          }
          std::vector<float> got = c0;
          kernel->edge(kc, a_panel.data(), b_panel.data(), rows, cols, got.data(), ldc, alpha, beta);
          std::vector<float> full(mr * nr, 0.0f);
          for (int i = 0; i < rows; ++i) std::copy(&c0[i * ldc], &c0[i * ldc] + cols, &full[i * nr]);
          kernel->tile(kc, a_panel.data(), b_panel.data(), full.data(), nr, alpha, beta);
          for (int i = 0; i < mr + 2; ++i) {
            for (int j = 0; j < ldc; ++j) {
              const float value = got[i * ldc + j];
              if (i >= rows || j >= cols) {
                ASSERT_EQ(value, c0[i * ldc + j]) << "written outside the tile at (" << i << "," << j << ")";
                continue;
              }
              ASSERT_EQ(value, full[i * nr + j]) << "not the full tile's bits at (" << i << "," << j << ")";
              double sum = 0, magnitude = 0;
              for (int64_t k = 0; k < kc; ++k) {
                sum += static_cast<double>(a[k * mr + i]) * b[k * nr + j];
                magnitude += std::fabs(static_cast<double>(a[k * mr + i]) * b[k * nr + j]);
              }
              const double c_in = beta == 0.0f ? 0.0 : c0[i * ldc + j];
              ASSERT_NEAR(value, alpha * sum + beta * c_in,
                          1e-6 * (kc + 4) * (alpha * magnitude + std::fabs(beta * c_in)) + 1e-30)
                  << "at (" << i << "," << j << ")";
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmEdgeTileVariantTest, ::testing::ValuesIn(KernelVariants()),
                         IsaVariantTestName<const MicroKernel* (*)()>);

// The accumulating rows form of every microkernel, over K split at several points (K blocks
// of a packed B, ends inside and outside its 8-row passes), gives the bits of the rows form
// over the whole K, and a double-precision oracle within float tolerance; N around the
// vector widths.
class GemvRowsAddVariantTest : public ::testing::TestWithParam<IsaVariant<const MicroKernel* (*)()>> {};

TEST_P(GemvRowsAddVariantTest, SplitAnywhereGivesTheRowsFormsBits) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const MicroKernel* kernel = GetParam().impl();
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(kernel->gemv_rows_add, nullptr) << kernel->name;
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{17}, int64_t{32}, int64_t{49}}) {
    const int64_t k = 300, ld = n + 5;
    const std::vector<float> m = Random(k * ld, 31), x = Random(k, 32);
    std::vector<float> whole(n, -1.0f);
    kernel->gemv_rows(k, n, x.data(), m.data(), ld, whole.data());
    for (const int64_t split : {int64_t{0}, int64_t{3}, int64_t{8}, int64_t{256}, int64_t{299}}) {
      std::vector<float> y(n, 0.0f);
      kernel->gemv_rows_add(split, n, x.data(), m.data(), ld, y.data());
      kernel->gemv_rows_add(k - split, n, x.data() + split, m.data() + split * ld, ld, y.data());
      EXPECT_EQ(y, whole) << kernel->name << " n=" << n << " split at " << split;
    }
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        sum += static_cast<double>(x[kk]) * m[kk * ld + j];
        magnitude += std::fabs(static_cast<double>(x[kk]) * m[kk * ld + j]);
      }
      EXPECT_NEAR(whole[j], sum, 1e-6 * (k + 4) * magnitude + 1e-30) << kernel->name << " column " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemvRowsAddVariantTest, ::testing::ValuesIn(KernelVariants()),
                         IsaVariantTestName<const MicroKernel* (*)()>);

// Ragged products through the engine with every microkernel: N of 49 and 196 (a late 1x1
// convolution's output positions) and around nr, M of 2..8 (small-M MatMul) and around mr,
// K across two K blocks (the partial tiles' beta = 1 pass), serial and 3 participants (bit
// for bit), against the double-precision oracle.
TEST(GemmEngine, RaggedEdgesMatchReferenceForEveryKernel) {
  Runner one(1), three(3);
  for (const MicroKernel* kernel : SupportedKernels()) {
    const int64_t mr = kernel->mr, nr = kernel->nr;
    for (const int64_t m : {int64_t{2}, int64_t{5}, int64_t{8}, mr + 1, 2 * mr - 1}) {
      for (const int64_t n : {nr - 1, nr + 1, int64_t{49}, int64_t{196}}) {
        for (const int64_t k : {int64_t{19}, int64_t{300}}) {
          const Operands op(Case{m, n, k, false, k > 100, 1.0f, k > 100 ? 0.5f : 0.0f});
          const std::vector<float> serial = one.Run(*kernel, op);
          ExpectNearReference(op, serial, kernel->name);
          ASSERT_EQ(serial, three.Run(*kernel, op)) << kernel->name << " " << m << "x" << n << "x" << k;
        }
      }
    }
  }
}

// The dots-form GEMV of every microkernel over the interleaved layout (DotsLayout, as
// PrepackedB's GEMV copy holds a transposed B) gives the bits it gives over dense K-vectors,
// and a double-accumulated reference within float tolerance; the layout's padding (NaN
// here) is never read. K around the kernels' dots blocks (16, 32) and the prefetch distance,
// N around the group of 4, a call starting at a later group.
class GemvDotsVariantTest : public ::testing::TestWithParam<IsaVariant<const MicroKernel* (*)()>> {};

TEST_P(GemvDotsVariantTest, InterleavedLayoutGivesTheDenseBitsAndMatchesReference) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const MicroKernel* kernel = GetParam().impl();
  ASSERT_NE(kernel, nullptr);
  const int64_t block = kernel->dots_block;
  const int64_t shapes[][2] = {{1, 1}, {3, 5}, {4, 16}, {5, 33}, {8, 31}, {9, 100}, {13, 300}, {37, 1029}};
  for (const auto& s : shapes) {
    const int64_t n = s[0], k = s[1], ld = k + 3;
    SCOPED_TRACE(std::string(kernel->name) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
    const std::vector<float> dense = Random(n * ld, 7), x = Random(k, 8);
    const DotsLayout dense_layout{ld, block, kDotsGroup * ld};
    const int64_t k_padded = (k + block - 1) / block * block;
    const DotsLayout interleaved_layout{block, kDotsGroup * block, kDotsGroup * k_padded};
    const int64_t groups = (n + kDotsGroup - 1) / kDotsGroup;
    std::vector<float> interleaved(groups * interleaved_layout.group, std::numeric_limits<float>::quiet_NaN());
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        interleaved[j / 4 * interleaved_layout.group + j % 4 * block + kk / block * interleaved_layout.block +
                    kk % block] = dense[j * ld + kk];
      }
    }
    std::vector<float> from_dense(n, -1.0f), from_interleaved(n, -2.0f);
    kernel->gemv_dots(k, n, x.data(), dense.data(), dense_layout, from_dense.data());
    kernel->gemv_dots(k, n, x.data(), interleaved.data(), interleaved_layout, from_interleaved.data());
    EXPECT_EQ(from_interleaved, from_dense);
    if (n > kDotsGroup) {  // from the second group on: the same bits as in the whole call
      std::vector<float> tail(n - kDotsGroup, -3.0f);
      kernel->gemv_dots(k, n - kDotsGroup, x.data(), interleaved.data() + interleaved_layout.group, interleaved_layout,
                        tail.data());
      EXPECT_EQ(tail, std::vector<float>(from_dense.begin() + kDotsGroup, from_dense.end()));
    }
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        sum += static_cast<double>(x[kk]) * dense[j * ld + kk];
        magnitude += std::fabs(static_cast<double>(x[kk]) * dense[j * ld + kk]);
      }
      EXPECT_NEAR(from_interleaved[j], sum, 1e-6 * (k + 4) * magnitude + 1e-30) << "column " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemvDotsVariantTest, ::testing::ValuesIn(KernelVariants()),
                         IsaVariantTestName<const MicroKernel* (*)()>);

TEST(GemmEngine, KBlockingMatchesReference) {
  // K larger than every kernel's KC, N larger than NC: several blocks in both loops.
  Runner serial(1);
  for (const MicroKernel* kernel : SupportedKernels()) {
    const Operands op(Case{37, 1100, 900, false, true, 1.0f, 0.5f});
    ExpectNearReference(op, serial.Run(*kernel, op), kernel->name);
  }
}

TEST(GemmEngine, BitIdenticalForEveryParticipantCount) {
  Runner one(1), two(2), four(4), eight(8);
  std::vector<Case> cases = Cases();
  cases.push_back({200, 300, 500, false, false, 1.0f, 0.0f});
  cases.push_back({1, 5000, 300, false, false, 1.0f, 1.0f});
  cases.push_back({3000, 1, 200, true, false, 2.0f, 0.0f});
  for (const MicroKernel* kernel : SupportedKernels()) {
    for (const Case& c : cases) {
      const Operands op(c);
      const std::vector<float> expected = one.Run(*kernel, op);
      for (Runner* r : {&two, &four, &eight}) {
        ASSERT_EQ(expected, r->Run(*kernel, op)) << kernel->name << " " << c.m << "x" << c.n << "x" << c.k;
      }
    }
  }
}

// Transformer token counts (BERT's 128, ViT-B/16's 197 = 16 row panels of 12 + 5) against
// the widths of their linear layers (768, the fused QKV's 2304): the 2-participant grid
// splits N into halves of whole panels, 3 participants leave a ragged last tile; the bits
// are the serial run's for every kernel, dense and prepacked B alike. K of 40 and across a
// K block (300): the grid does not depend on K.
TEST(GemmEngine, TransformerShapesAreBitIdenticalForEveryParticipantCount) {
  Runner one(1), two(2), three(3);
  for (const int64_t m : {int64_t{128}, int64_t{197}}) {
    for (const int64_t n : {int64_t{768}, int64_t{2304}}) {
      for (const int64_t k : {int64_t{40}, int64_t{300}}) {
        const Operands op(Case{m, n, k, false, k > 100, 1.0f, 0.0f});
        for (const MicroKernel* kernel : SupportedKernels()) {
          const std::vector<float> serial = one.Run(*kernel, op);
          if (k == 40 && n == 768) ExpectNearReference(op, serial, kernel->name);
          for (Runner* r : {&two, &three}) {
            GemmStats stats;
            ASSERT_EQ(serial, r->Run(*kernel, op, &stats)) << kernel->name << " " << m << "x" << n << "x" << k;
            EXPECT_GT(stats.participants, 1);
          }
        }
        const std::vector<float> prepacked = one.RunPrepacked(op);
        ASSERT_EQ(prepacked, one.Run(BestKernel(), op)) << m << "x" << n << "x" << k;
        for (Runner* r : {&two, &three}) ASSERT_EQ(prepacked, r->RunPrepacked(op)) << m << "x" << n << "x" << k;
      }
    }
  }
}

TEST(GemmEngine, GemvMatchesReferenceAndIsParticipantInvariant) {
  // M == 1 and N == 1 in both storage orders (rows form and dots form), strided vectors
  // (transposed A or B: the vector is copied), K = 1, N = 1, prime sizes around the
  // 8-row passes, the vector widths and the 4096-column chunk; padded strides everywhere.
  const int64_t shapes[][3] = {{1, 1, 1},    {1, 1, 13}, {1, 17, 1},    {1, 29, 31},  {1, 4099, 13},
                               {1, 131, 67}, {23, 1, 1}, {101, 1, 257}, {4099, 1, 3}, {37, 1, 33}};
  Runner one(1), two(2), four(4);
  for (const MicroKernel* kernel : SupportedKernels()) {
    for (const auto& s : shapes) {
      for (int t = 0; t < 4; ++t) {
        const Operands op(
            Case{s[0], s[1], s[2], (t & 1) != 0, (t & 2) != 0, t == 3 ? -0.5f : 1.0f, t == 1 ? 2.0f : 0.0f});
        const std::vector<float> serial = one.Run(*kernel, op);
        ExpectNearReference(op, serial, kernel->name);
        for (Runner* r : {&two, &four}) {
          ASSERT_EQ(serial, r->Run(*kernel, op)) << kernel->name << " " << s[0] << "x" << s[1] << "x" << s[2];
        }
      }
    }
  }
}

TEST(GemmEngine, SerialEntryPointMatchesParallel) {
  Runner four(4);
  for (const MicroKernel* kernel : SupportedKernels()) {
    for (const Case& c : Cases()) {
      const Operands op(c);
      std::vector<float> serial = op.c0;
      std::vector<float> scratch(SerialScratchBytesWith(*kernel, c.m, c.n, c.k) / sizeof(float) + 16);
      float* aligned = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
      SgemmSerialWith(*kernel, op.Problem(serial.data()), aligned);
      ASSERT_EQ(serial, four.Run(*kernel, op)) << kernel->name << " " << c.m << "x" << c.n << "x" << c.k;
    }
  }
}

TEST(GemmEngine, PrepackedAMatchesSgemmBitwise) {
  // The public prepacked-A entry point (best kernel) against the parallel engine.
  Runner two(2);
  for (const Case& c : {Case{37, 100, 900, false, false, 1.0f, 0.0f}, Case{13, 65, 17, true, true, 0.5f, 2.0f},
                        Case{2, 3, 1, false, true, 1.0f, 1.0f}}) {
    const Operands op(c);
    std::vector<float> packed(PrepackedASize(c.m, c.k) + 16), scratch(SgemmSerialScratchBytes(c.m, c.n, c.k) / 4 + 16);
    const auto align = [](std::vector<float>& v) {
      return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t{63});
    };
    PrepackA(c.ta, c.m, c.k, op.a.data(), op.lda, align(packed));
    std::vector<float> out = op.c0;
    SgemmSerialPrepackedA(align(packed), c.m, c.n, c.k, c.alpha, DenseBSource(c.tb, op.b.data(), op.ldb), c.beta,
                          out.data(), op.ldc, align(scratch));
    ASSERT_EQ(out, two.Run(BestKernel(), op)) << c.m << "x" << c.n << "x" << c.k;
  }
}

// A convolution's bias, residual and activation fused into the block writes of row ranges
// of one product (K across two K blocks of every kernel, rows not a multiple of mr, C part
// of a larger output at an offset): against a double reference, and bit for bit against
// the same product followed by a second pass doing the same.
TEST(GemmEngine, PrepackedARowsFuseTheRowBiasAndEpilogueIntoTheBlockWrites) {
  const Case c{37, 100, 600, false, false, 1.0f, 0.0f};
  const Operands op(c);
  const int64_t offset = 11;
  const std::vector<float> bias = Random(c.m, 4), residual = Random(offset + c.m * op.ldc, 5);
  const Epilogue relu{Activation::kRelu, 0.0f, 0.0f, residual.data()};
  std::vector<float> packed(PrepackedASize(c.m, c.k) + 16), scratch(SgemmSerialScratchBytes(c.m, c.n, c.k) / 4 + 16);
  const auto align = [](std::vector<float>& v) {
    return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t{63});
  };
  PrepackA(c.ta, c.m, c.k, op.a.data(), op.lda, align(packed));
  const DenseBSource b(c.tb, op.b.data(), op.ldb);
  const int64_t split = 2 * PreferredBlocking().mr;  // row ranges start at multiples of mr
  std::vector<float> fused = op.c0;
  for (const auto& [m0, m1] : {std::pair<int64_t, int64_t>{0, split}, {split, c.m}}) {
    SgemmSerialPrepackedARows(align(packed), c.m, m0, m1, c.n, c.k, c.alpha, b, c.beta, fused.data(), op.ldc,
                              align(scratch), bias.data(), &relu, offset);
  }
  std::vector<float> second_pass = op.c0;
  SgemmSerialPrepackedA(align(packed), c.m, c.n, c.k, c.alpha, b, c.beta, second_pass.data(), op.ldc, align(scratch));
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) second_pass[i * op.ldc + j] += bias[i];
  }
  relu.Apply(second_pass.data(), offset, c.m, c.n, op.ldc);
  EXPECT_EQ(fused, second_pass);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        sum += static_cast<double>(op.A(i, k)) * op.B(k, j);
        magnitude += std::fabs(static_cast<double>(op.A(i, k)) * op.B(k, j));
      }
      const double expected = std::max(0.0, sum + bias[i] + residual[offset + i * op.ldc + j]);
      ASSERT_NEAR(fused[i * op.ldc + j], expected, 1e-6 * (c.k + 4) * (magnitude + 2)) << i << "," << j;
    }
  }
}

// GEMV shapes (m == 1 runs the rows form on the panels in place, K blocks past the first
// included; n == 1 unpacks the vector) and the tiled path (small M included), every
// transpose combination, serial and parallel: bit-identical to the dense engine.
TEST(GemmEngine, PrepackedBMatchesTheDenseBBitwiseWithoutReadingIt) {
  for (int threads : {1, 2, 3}) {
    Runner runner(threads);
    for (const Case& c : {Case{1, 300, 257, false, false, 1.0f, 0.0f}, Case{1, 130, 70, true, true, 0.5f, 2.0f},
                          Case{1, 1000, 33, false, true, 1.0f, 1.0f}, Case{1, 1, 7, true, false, 1.0f, 0.0f},
                          Case{5, 1, 64, false, true, 2.0f, 0.5f}, Case{29, 1, 23, true, false, 1.0f, 0.0f},
                          Case{37, 100, 900, false, false, 1.0f, 0.0f}, Case{13, 65, 17, true, true, 0.5f, 2.0f},
                          Case{1, 1003, 1029, false, true, 1.0f, 0.0f}, Case{1, 7, 40, true, true, 1.0f, 0.0f},
                          Case{1, 2, 3, false, true, 1.0f, 0.0f}, Case{1, 1000, 600, false, false, 1.0f, 0.0f},
                          Case{1, 49, 531, true, false, 0.5f, 2.0f}, Case{2, 1000, 300, false, false, 1.0f, 0.0f},
                          Case{4, 49, 600, true, false, 1.0f, 0.0f}, Case{8, 196, 70, false, true, 1.0f, 0.5f}}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                   std::to_string(c.k) + (c.ta ? " ta" : "") + (c.tb ? " tb" : ""));
      const Operands op(c);
      EXPECT_EQ(runner.RunPrepacked(op), runner.Run(BestKernel(), op));
    }
  }
}

// A caller packing in another blocking (another nr, K blocks across the packed ones, kc
// within the engine's blocks) gets
// from the prepacked B exactly what packing the dense B gives.
TEST(GemmEngine, PrepackedBRepacksOtherBlockingsAsTheDenseB) {
  Allocator allocator;
  for (bool tb : {false, true}) {
    const Case c{1, 70, 600, false, tb, 1.0f, 0.0f};
    const Operands op(c);
    auto packed = PrepackedB::Create(&allocator, tb, c.k, c.n, op.b.data(), op.ldb);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    const DenseBSource dense(tb, op.b.data(), op.ldb);
    // {k0, kc, n0, nc, nr}
    const std::vector<std::array<int64_t, 5>> blockings = {
        {0, 256, 0, 70, 8}, {100, 200, 5, 41, 16}, {590, 10, 64, 6, 4}};
    for (const auto& blocking : blockings) {
      const int64_t k0 = blocking[0], kc = blocking[1], n0 = blocking[2], nc = blocking[3];
      const int nr = static_cast<int>(blocking[4]);
      const size_t size = static_cast<size_t>(kc * ((nc + nr - 1) / nr * nr));
      std::vector<float> want(size, -1.0f), got(size, -2.0f);
      dense.Pack(k0, kc, n0, nc, nr, want.data());
      (*packed)->Pack(k0, kc, n0, nc, nr, got.data());
      EXPECT_EQ(got, want) << "tb " << tb << " k0 " << k0 << " kc " << kc << " n0 " << n0 << " nc " << nc;
    }
  }
}

// PrepackedB::Create's rows_read promise: rows it reported read are never read again (they
// are poisoned with NaN as soon as reported here), every row is reported by the end, and
// the packed form is the one packing without the callback gives.
TEST(GemmEngine, PrepackedBNeverReadsRowsItReportedRead) {
  Allocator allocator;
  const int nr = BestKernel().nr;
  for (bool tb : {false, true}) {
    for (const Case& c :
         {Case{1, 70, 600, false, tb, 1, 0}, Case{1, 2048, 300, false, tb, 1, 0}, Case{1, 5, 20000, false, tb, 1, 0},
          Case{1, 1, 1, false, tb, 1, 0}, Case{1, 300, 3, false, tb, 1, 0}}) {
      SCOPED_TRACE(std::string(tb ? "tb " : "") + "n " + std::to_string(c.n) + " k " + std::to_string(c.k));
      const Operands op(c);
      auto want = PrepackedB::Create(&allocator, tb, c.k, c.n, op.b.data(), op.ldb);
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      std::vector<float> b = op.b;
      const int64_t stored_rows = tb ? c.n : c.k;
      int64_t reported = 0, calls = 0;
      bool monotone = true;
      auto got = PrepackedB::Create(&allocator, tb, c.k, c.n, b.data(), op.ldb, [&](int64_t rows) {
        monotone = monotone && rows >= reported && rows <= stored_rows;
        for (int64_t r = reported; r < rows; ++r) {
          std::fill(b.begin() + r * op.ldb, b.begin() + (r + 1) * op.ldb, std::numeric_limits<float>::quiet_NaN());
        }
        reported = std::max(reported, rows);
        ++calls;
      });
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_TRUE(monotone);
      EXPECT_EQ(reported, stored_rows);
      if (stored_rows > 2 * BestKernel().kc) EXPECT_GT(calls, 2);  // released as it goes, not at the end only
      for (int64_t n0 = 0; n0 < c.n; n0 += nr) {
        std::vector<float> w(static_cast<size_t>(c.k * nr)), g(w.size());
        (*want)->UnpackPanel(n0, false, w.data());
        (*got)->UnpackPanel(n0, false, g.data());
        ASSERT_EQ(std::memcmp(w.data(), g.data(), w.size() * sizeof(float)), 0) << "panel at column " << n0;
      }
    }
  }
}

// PrepackA's rows_read promise, as PrepackedB::Create's: rows of A as stored that it
// reported read are never read again (poisoned with NaN as soon as reported), every row is
// reported by the end, an untransposed A once per MR-row panel, and the packed bytes are
// the ones packing without the callback gives.
TEST(GemmEngine, PrepackANeverReadsRowsItReportedRead) {
  const MicroKernel& kernel = BestKernel();
  for (bool ta : {false, true}) {
    for (const Case& c : {Case{70, 1, 600, ta, false, 1, 0}, Case{2048, 1, 300, ta, false, 1, 0},
                          Case{5, 1, 2000, ta, false, 1, 0}, Case{1, 1, 1, ta, false, 1, 0}}) {
      SCOPED_TRACE(std::string(ta ? "ta " : "") + "m " + std::to_string(c.m) + " k " + std::to_string(c.k));
      const Operands op(c);
      std::vector<float> want(PrepackedASize(c.m, c.k)), got(want.size());
      PrepackA(ta, c.m, c.k, op.a.data(), op.lda, want.data());
      std::vector<float> a = op.a;
      const int64_t stored_rows = ta ? c.k : c.m;
      int64_t reported = 0, calls = 0;
      bool monotone = true;
      PrepackA(ta, c.m, c.k, a.data(), op.lda, got.data(), [&](int64_t rows) {
        monotone = monotone && rows >= reported && rows <= stored_rows;
        for (int64_t r = reported; r < rows; ++r) {
          std::fill(a.begin() + r * op.lda, a.begin() + (r + 1) * op.lda, std::numeric_limits<float>::quiet_NaN());
        }
        reported = std::max(reported, rows);
        ++calls;
      });
      EXPECT_TRUE(monotone);
      EXPECT_EQ(reported, stored_rows);
      EXPECT_EQ(calls, ta ? (c.k + kernel.kc - 1) / kernel.kc : (c.m + kernel.mr - 1) / kernel.mr);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);
    }
  }
}

TEST(GemmEngine, ScratchIsBoundedByBlockingNotByMatrices) {
  Runner eight(8);
  const MicroKernel& kernel = BestKernel();
  const size_t per_participant = SerialScratchBytesWith(kernel, 1 << 20, 1 << 20, 1 << 20);
  for (const Case& c : {Case{2000, 40, 700, false, false, 1, 0}, Case{40, 2000, 700, false, true, 1, 0}}) {
    const Operands op(c);
    GemmStats stats;
    eight.allocator().ResetPeak();
    eight.Run(kernel, op, &stats);
    EXPECT_GT(stats.participants, 1);
    EXPECT_LE(stats.scratch_bytes, static_cast<int64_t>(per_participant) * stats.participants);
    EXPECT_LE(eight.allocator().stats().peak_bytes, stats.scratch_bytes);
    // Far less than one copy of the operands per participant.
    EXPECT_LT(stats.scratch_bytes, static_cast<int64_t>(sizeof(float)) * (c.m + c.n) * c.k);
  }
}

TEST(GemmEngine, BetaZeroIgnoresNanInC) {
  Runner serial(1);
  for (const MicroKernel* kernel : SupportedKernels()) {
    Operands op(Case{13, 35, 8, false, false, 1.0f, 0.0f});
    for (auto& v : op.c0) v = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> out = serial.Run(*kernel, op);
    for (int64_t i = 0; i < 13; ++i) {
      for (int64_t j = 0; j < 35; ++j) ASSERT_FALSE(std::isnan(out[i * op.ldc + j])) << kernel->name;
    }
  }
}

// Every packing variant writes the portable packer's bytes: A panels (rows < mr padded,
// both layouts) and B blocks (both layouts, partial last panel, nr of 16, 32, 48 and 8);
// variants this CPU cannot run, or the ISA cap excludes, are skipped by name.
class PackingVariantTest : public ::testing::TestWithParam<IsaVariant<Packing>> {};

TEST_P(PackingVariantTest, WritesWhatThePortablePackerWrites) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const Packing& packing = GetParam().impl;
  const Packing& reference = PortableVariant(PackingVariants()).impl;
  const std::vector<float> src = Random(120 * 101, 11);  // covers every read below
  for (bool trans : {false, true}) {
    for (int mr : {6, 8, 12}) {
      for (int rows : {1, mr - 1, mr}) {
        for (int64_t kc : {int64_t{1}, int64_t{17}, int64_t{40}}) {
          std::vector<float> got(kc * mr, -1.0f), want(kc * mr, -1.0f);
          packing.pack_a(trans, src.data(), 90, 3, rows, 5, kc, mr, got.data());
          reference.pack_a(trans, src.data(), 90, 3, rows, 5, kc, mr, want.data());
          ASSERT_EQ(got, want) << GetParam().name << " A trans=" << trans << " mr=" << mr << " rows=" << rows
                               << " kc=" << kc;
        }
      }
    }
    for (int nr : {8, 16, 32, 48}) {
      for (int64_t nc : {int64_t{nr}, int64_t{2 * nr + 3}, int64_t{5}}) {
        for (int64_t kc : {int64_t{1}, int64_t{19}}) {
          const int64_t panels = (nc + nr - 1) / nr;
          std::vector<float> got(panels * kc * nr, -1.0f), want(got.size(), -1.0f);
          packing.pack_b(trans, src.data(), 101, 4, kc, 2, nc, nr, got.data());
          reference.pack_b(trans, src.data(), 101, 4, kc, 2, nc, nr, want.data());
          ASSERT_EQ(got, want) << GetParam().name << " B trans=" << trans << " nr=" << nr << " nc=" << nc
                               << " kc=" << kc;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, PackingVariantTest, ::testing::ValuesIn(PackingVariants()), IsaVariantTestName<Packing>);

TEST(GemmEngine, EmptyProducts) {
  Runner serial(1);
  // K == 0: C = beta * C.
  Operands op(Case{3, 4, 0, false, false, 1.0f, 2.0f});
  std::vector<float> out = serial.Run(BestKernel(), op);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(out[i * op.ldc + j], 2.0f * op.c0[i * op.ldc + j]);
  }
  // M == 0 or N == 0: nothing is touched.
  for (const Case& c : {Case{0, 5, 3, false, false, 1, 1}, Case{4, 0, 3, false, false, 1, 1}}) {
    Operands empty(c);
    EXPECT_EQ(serial.Run(BestKernel(), empty), empty.c0);
  }
}

TEST(GemmEngine, NegativeShapeIsInvalidArgument) {
  Allocator allocator;
  float x = 0;
  const Status s =
      Sgemm(ParallelContext{}, &allocator, GemmTuning{}, false, false, -1, 2, 2, 1.0f, &x, 2, &x, 2, 0.0f, &x, 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gemm
}  // namespace onnx_light
