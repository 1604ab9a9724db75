// Gemm and MatMul through the kernel registry: values against a naive double-precision
// reference, bit-identical results for 1, 2, 4 and 8 participants, errors on bad input.
#include <algorithm>
#include <cmath>
#include <random>
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

std::vector<float> Random(int64_t n, uint32_t seed) { return testing::RandomFloats(n, seed); }

// The serial outputs, after the determinism check with the parallel path forced.
std::vector<Value> RunAllCounts(KernelTester& t) {
  t.Tuning(param::kMinimumTasks, int64_t{1});
  return testing::DeterministicOutputs(t);
}

// Y = alpha * op(A) op(B) + beta * C in double, C given as a function of (i, j).
template <typename CFn>
std::vector<double> Reference(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n, int64_t k,
                              bool ta, bool tb, double alpha, double beta, CFn c) {
  std::vector<double> y(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        s += double(ta ? a[kk * m + i] : a[i * k + kk]) * (tb ? b[j * k + kk] : b[kk * n + j]);
      y[i * n + j] = alpha * s + beta * c(i, j);
    }
  }
  return y;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

TEST(Gemm, HandComputedWithBroadcastRowC) {
  KernelTester t("Gemm", 13);
  // A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]], C = [10, 20]; Y = 2 AB + 0.5 C.
  t.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(MakeTensor<float>({3, 2}, {1, 0, 0, 1, 1, 1}))
      .Input(MakeTensor<float>({2}, {10, 20}))
      .Attr("alpha", 2.0f)
      .Attr("beta", 0.5f);
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{2 * 4 + 5, 2 * 5 + 10, 2 * 10 + 5, 2 * 11 + 10}));
}

TEST(Gemm, RandomShapesTransposesAndCBroadcasts) {
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
    std::vector<int64_t> c_shape;
  };
  const std::vector<Case> cases = {{1, 1, 1, false, false, {}},          {7, 5, 3, true, false, {5}},
                                   {33, 65, 17, false, true, {33, 1}},   {64, 96, 300, true, true, {64, 96}},
                                   {130, 70, 50, false, false, {1, 70}}, {1, 300, 257, false, true, {300}},
                                   {200, 1, 90, true, false, {200, 1}},  {50, 50, 0, false, false, {1}}};
  for (const Case& c : cases) {
    const auto a = Random(c.m * c.k, 1), b = Random(c.k * c.n, 2);
    const int64_t c_count = Shape(c.c_shape).num_elements();
    const auto cv = Random(c_count, 3);
    KernelTester t("Gemm", 13);
    t.Input(MakeTensor<float>(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, a))
        .Input(MakeTensor<float>(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, b))
        .Input(MakeTensor<float>(Shape(c.c_shape), cv))
        .Attr("transA", int64_t{c.ta})
        .Attr("transB", int64_t{c.tb})
        .Attr("alpha", 0.75f)
        .Attr("beta", -1.25f);
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    const auto rows = c.c_shape.size() == 2 ? c.c_shape[0] : 1;
    const auto cols = c.c_shape.empty() ? 1 : c.c_shape.back();
    ExpectNear(ToVector<float>(out[0].tensor()),
               Reference(a, b, c.m, c.n, c.k, c.ta, c.tb, 0.75, -1.25, [&](int64_t i, int64_t j) {
                 return double(cv[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)]);
               }));
  }
}

TEST(Gemm, OptionalCAndIntegerTypes) {
  KernelTester t("Gemm", 13);
  t.Input(MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int32_t>({2, 2}, {5, 6, 7, 8}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<int32_t>(out[0].tensor()), (std::vector<int32_t>{19, 22, 43, 50}));
}

TEST(Gemm, BadShapesAreInvalidArgument) {
  KernelTester inner("Gemm", 13);
  inner.Input(MakeTensor<float>({2, 3}, std::vector<float>(6))).Input(MakeTensor<float>({2, 2}, std::vector<float>(4)));
  EXPECT_EQ(inner.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester c("Gemm", 13);
  c.Input(MakeTensor<float>({2, 2}, std::vector<float>(4)))
      .Input(MakeTensor<float>({2, 2}, std::vector<float>(4)))
      .Input(MakeTensor<float>({3}, std::vector<float>(3)));
  EXPECT_EQ(c.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester rank("Gemm", 13);
  rank.Input(MakeTensor<float>({4}, std::vector<float>(4))).Input(MakeTensor<float>({2, 2}, std::vector<float>(4)));
  EXPECT_EQ(rank.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(MatMul, BroadcastBatchesAndVectors) {
  struct Case {
    std::vector<int64_t> a, b, y;
  };
  const std::vector<Case> cases = {
      {{4}, {4}, {}},                           // dot product
      {{3}, {2, 3, 5}, {2, 5}},                 // vector x batched matrices
      {{2, 6, 3}, {3}, {2, 6}},                 // batched matrices x vector
      {{2, 1, 5, 7}, {3, 7, 4}, {2, 3, 5, 4}},  // broadcast batch dims
      {{3, 40, 64}, {64, 33}, {3, 40, 33}},     // shared B: folded into one product
      {{6, 1, 9}, {6, 9, 1}, {6, 1, 1}},        // many GEMV-sized products
      {{5, 70, 0}, {5, 0, 8}, {5, 70, 8}},      // K == 0: zeros
      {{0, 3, 4}, {4, 2}, {0, 3, 2}},           // empty batch
  };
  for (const Case& c : cases) {
    const Shape as(c.a), bs(c.b);
    SCOPED_TRACE(as.ToString() + " x " + bs.ToString());
    const auto a = Random(as.num_elements(), 4), b = Random(bs.num_elements(), 5);
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<float>(as, a)).Input(MakeTensor<float>(bs, b));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].tensor().shape(), Shape(c.y));
    // Reference: numpy matmul by explicit index arithmetic on the padded shapes.
    std::vector<int64_t> ad = c.a, bd = c.b;
    if (ad.size() == 1) ad.insert(ad.begin(), 1);
    if (bd.size() == 1) bd.push_back(1);
    const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
    const size_t rank = std::max(ad.size(), bd.size());
    while (ad.size() < rank) ad.insert(ad.begin(), 1);
    while (bd.size() < rank) bd.insert(bd.begin(), 1);
    std::vector<int64_t> yb(rank - 2);
    int64_t batches = 1;
    for (size_t d = 0; d + 2 < rank; ++d) batches *= (yb[d] = ad[d] == 1 ? bd[d] : ad[d]);
    std::vector<double> want;
    for (int64_t t_ = 0; t_ < batches; ++t_) {
      int64_t rem = t_, ao = 0, bo = 0, as_ = m * k, bs_ = k * n;
      for (size_t d = rank - 2; d-- > 0;) {
        const int64_t idx = rem % yb[d];
        rem /= yb[d];
        ao += (ad[d] == 1 ? 0 : idx) * as_;
        bo += (bd[d] == 1 ? 0 : idx) * bs_;
        as_ *= ad[d];
        bs_ *= bd[d];
      }
      const std::vector<float> sa(a.begin() + ao, a.begin() + ao + m * k), sb(b.begin() + bo, b.begin() + bo + k * n);
      const auto r = Reference(sa, sb, m, n, k, false, false, 1.0, 0.0, [](int64_t, int64_t) { return 0.0; });
      want.insert(want.end(), r.begin(), r.end());
    }
    ExpectNear(ToVector<float>(out[0].tensor()), want);
  }
}

TEST(MatMul, ScratchDoesNotGrowWithM) {
  // The packing scratch of an 8-participant run depends on the blocking, not on M.
  int64_t peaks[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t m = 512 << i, k = 96, n = 80;
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<float>({m, k}, Random(m * k, 1))).Input(MakeTensor<float>({k, n}, Random(k * n, 2)));
    t.Tuning(param::kMinimumTasks, int64_t{1});
    auto run = t.RunWithDetails(8);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    peaks[i] = run->peak_scratch;
    EXPECT_LE(run->allocation.peak_bytes, m * n * 4 + run->peak_scratch);
  }
  EXPECT_GT(peaks[0], 0);
  EXPECT_EQ(peaks[0], peaks[1]);
}

TEST(Gemm, ClassifierGemvSplitsAcrossParticipantsAtThePortableDefaults) {
  // A fully connected layer at batch 1 (MobileNetV3's 576 -> 1024, weights [N, K] as
  // PyTorch exports them): a GEMV over 2^19+ weight floats, split over N even at the
  // portable parallel.minimum_tasks; a 64 x 64 one stays on the calling thread.
  for (const int64_t k : {int64_t{64}, int64_t{576}}) {
    const int64_t n = k == 64 ? 64 : 1024;
    KernelTester t("Gemm", 13);
    t.Input(MakeTensor<float>({1, k}, Random(k, 1))).ConstantInput(MakeTensor<float>({n, k}, Random(n * k, 2)));
    t.Attr("transB", int64_t{1}).PortableDefaults();
    auto serial = t.RunWithDetails(1);
    auto two = t.RunWithDetails(2);
    ASSERT_TRUE(serial.ok() && two.ok()) << serial.status().ToString() << two.status().ToString();
    ExpectIdentical(serial->outputs.at(0), two->outputs.at(0));
    if (k == 64) {
      EXPECT_TRUE(two->regions.empty());
    } else {
      ASSERT_EQ(two->regions.size(), 1u);
      EXPECT_STREQ(two->regions[0].label, "gemm.gemv_columns");
      EXPECT_EQ(two->regions[0].admitted_participants, 2);
    }
  }
}

// Attention's batched MatMuls (12 heads, BERT's 128 and ViT-B/16's 197 tokens, head size
// 64) at the portable defaults: each product is below parallel.minimum_tasks, so the heads
// are spread over the participants (matmul.batches), whose own runs hold at most
// ceil(12 / participants) heads each (BERT's 4-unit heads used to go 8 + 4 over 2), with
// the serial run's bits and the reference's values.
TEST(MatMul, AttentionHeadsSplitEvenlyAcrossParticipants) {
  constexpr int64_t kHeads = 12;
  for (const int64_t tokens : {int64_t{128}, int64_t{197}}) {
    for (const bool scores : {true, false}) {  // Q K^T (k = 64) and scores V (n = 64)
      const int64_t m = tokens, k = scores ? 64 : tokens, n = scores ? tokens : 64;
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
      const auto a = Random(kHeads * m * k, 7), b = Random(kHeads * k * n, 8);
      KernelTester t("MatMul", 13);
      t.Input(MakeTensor<float>({1, kHeads, m, k}, a)).Input(MakeTensor<float>({1, kHeads, k, n}, b));
      t.PortableDefaults();
      auto serial = t.RunWithDetails(1);
      ASSERT_TRUE(serial.ok()) << serial.status().ToString();
      std::vector<double> want;
      for (int64_t h = 0; h < kHeads; ++h) {
        const std::vector<float> ha(a.begin() + h * m * k, a.begin() + (h + 1) * m * k),
            hb(b.begin() + h * k * n, b.begin() + (h + 1) * k * n);
        const auto r = Reference(ha, hb, m, n, k, false, false, 1.0, 0.0, [](int64_t, int64_t) { return 0.0; });
        want.insert(want.end(), r.begin(), r.end());
      }
      ExpectNear(ToVector<float>(serial->outputs.at(0).tensor()), want);
      for (const int participants : {2, 3, 4, 8}) {
        SCOPED_TRACE(participants);
        auto run = t.RunWithDetails(participants);
        ASSERT_TRUE(run.ok()) << run.status().ToString();
        ExpectIdentical(serial->outputs.at(0), run->outputs.at(0));
        ASSERT_EQ(run->regions.size(), 1u);
        const RegionEvent& region = run->regions[0];
        EXPECT_STREQ(region.label, "matmul.batches");
        ASSERT_EQ(region.total, kHeads);
        const Partition part = ComputePartition(region.total, region.grain, region.requested_participants);
        int64_t longest = 0;
        for (int p = 0; p < part.participants; ++p) {
          longest = std::max(
              longest, std::min(kHeads, part.LastBlock(p) * part.block_size) - part.FirstBlock(p) * part.block_size);
        }
        EXPECT_EQ(longest, (kHeads + participants - 1) / participants) << "grain " << region.grain;
      }
    }
  }
}

TEST(MatMul, NonFloatTypes) {
  {
    // int32 wraps around like numpy: 65536 * 65536 = 2^32 -> 0.
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<int32_t>({1, 2}, {65536, 3})).Input(MakeTensor<int32_t>({2, 1}, {65536, -4}));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<int32_t>(out[0].tensor()), (std::vector<int32_t>{-12}));
  }
  {
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<double>({2, 2}, {1.5, 2, 3, 4})).Input(MakeTensor<double>({2}, {2, 0.25}));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<double>(out[0].tensor()), (std::vector<double>{3.5, 7.0}));
  }
  {
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<uint64_t>({1, 3}, {1, 2, 3})).Input(MakeTensor<uint64_t>({3, 1}, {4, 5, 6}));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<uint64_t>(out[0].tensor()), (std::vector<uint64_t>{32}));
  }
  {
    // float16: exact small integers survive the float accumulation and rounding back.
    std::vector<Float16> a, b;
    for (float v : {1.f, 2.f, 3.f, 4.f}) a.push_back(Float16::FromFloat(v));
    for (float v : {0.5f, -1.f, 2.f, 8.f}) b.push_back(Float16::FromFloat(v));
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<Float16>({2, 2}, a)).Input(MakeTensor<Float16>({2, 2}, b));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> got;
    for (Float16 h : ToVector<Float16>(out[0].tensor())) got.push_back(h.ToFloat());
    EXPECT_EQ(got, (std::vector<float>{4.5f, 15.f, 9.5f, 29.f}));
  }
  {
    std::vector<BFloat16> a, b;
    for (float v : {1.f, 2.f}) a.push_back(BFloat16::FromFloat(v));
    for (float v : {3.f, 0.5f}) b.push_back(BFloat16::FromFloat(v));
    KernelTester t("MatMul", 13);
    t.Input(MakeTensor<BFloat16>({2}, a)).Input(MakeTensor<BFloat16>({2}, b));
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].tensor().data<BFloat16>()[0].ToFloat(), 4.0f);
  }
}

// A constant B (an initializer) is packed once at kernel creation; the product must be
// bit-identical to packing a fed B on every run, on shapes spanning several K blocks and
// tiles, for every participant count and for the GEMV path.
TEST(ConstantB, PrepackedWeightsGiveTheSameBitsAsFedWeights) {
  struct Case {
    int64_t m, n, k;
    bool trans_b;
  };
  for (const Case& c : {Case{64, 200, 700, false}, Case{37, 129, 513, true}, Case{1, 300, 257, false},
                        Case{5, 1, 64, true}, Case{48, 1040, 96, false}}) {
    const std::vector<float> a = Random(c.m * c.k, 1), b = Random(c.k * c.n, 2);
    const Shape b_shape = c.trans_b ? Shape({c.n, c.k}) : Shape({c.k, c.n});
    for (bool gemm : {true, false}) {
      if (!gemm && c.trans_b) continue;  // MatMul has no transposed operand
      SCOPED_TRACE((gemm ? "Gemm " : "MatMul ") + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                   std::to_string(c.k));
      KernelTester fed(gemm ? "Gemm" : "MatMul", 13), constant(gemm ? "Gemm" : "MatMul", 13);
      fed.Input(MakeTensor<float>({c.m, c.k}, a)).Input(MakeTensor<float>(b_shape, b));
      constant.Input(MakeTensor<float>({c.m, c.k}, a)).ConstantInput(MakeTensor<float>(b_shape, b));
      if (gemm) {
        fed.Attr("transB", int64_t{c.trans_b}).Attr("alpha", 0.5f);
        constant.Attr("transB", int64_t{c.trans_b}).Attr("alpha", 0.5f);
      }
      const std::vector<Value> want = RunAllCounts(fed);
      const std::vector<Value> got = RunAllCounts(constant);
      ASSERT_FALSE(want.empty() || got.empty());
      ExpectIdentical(want[0], got[0], "constant vs fed B");
    }
  }
}

// MatMul with 1..8 rows against a constant (prepacked, untransposed) B, as a transformer's
// projections run at batch 1 or a few tokens: the rows-form GEMV on the panels in place
// (M = 1, K across several K blocks) and the partial tiles of M < mr (N of 49 and 1000: a
// partial column tile too), against the double-precision reference and bit for bit
// against a fed B, for every participant count.
TEST(ConstantB, SmallMMatMulMatchesTheReference) {
  for (const int64_t m : {1, 2, 3, 5, 8}) {
    for (const int64_t n : {49, 1000}) {
      const int64_t k = 600;
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
      const std::vector<float> a = Random(m * k, 5), b = Random(k * n, 6);
      KernelTester fed("MatMul", 13), constant("MatMul", 13);
      fed.Input(MakeTensor<float>({m, k}, a)).Input(MakeTensor<float>({k, n}, b));
      constant.Input(MakeTensor<float>({m, k}, a)).ConstantInput(MakeTensor<float>({k, n}, b));
      const std::vector<Value> want = RunAllCounts(fed);
      const std::vector<Value> got = RunAllCounts(constant);
      ASSERT_FALSE(want.empty() || got.empty());
      ExpectIdentical(want[0], got[0], "constant vs fed B");
      ExpectNear(ToVector<float>(got[0].tensor()),
                 Reference(a, b, m, n, k, false, false, 1.0, 0.0, [](int64_t, int64_t) { return 0.0; }));
    }
  }
}

TEST(MatMul, BadInputsAreInvalidArgument) {
  KernelTester inner("MatMul", 13);
  inner.Input(MakeTensor<float>({2, 3}, std::vector<float>(6))).Input(MakeTensor<float>({2, 2}, std::vector<float>(4)));
  EXPECT_EQ(inner.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester batch("MatMul", 13);
  batch.Input(MakeTensor<float>({2, 1, 1}, std::vector<float>(2)))
      .Input(MakeTensor<float>({3, 1, 1}, std::vector<float>(3)));
  EXPECT_EQ(batch.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester scalar("MatMul", 13);
  scalar.Input(MakeTensor<float>({}, {1.0f})).Input(MakeTensor<float>({1}, {1.0f}));
  EXPECT_EQ(scalar.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester types("MatMul", 13);
  types.Input(MakeTensor<float>({1}, {1.0f})).Input(MakeTensor<double>({1}, {1.0}));
  EXPECT_EQ(types.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// The parallel decision (not timing). Below parallel.minimum_tasks work units (64^3
// multiply-adds each; portable default 16) a product runs on the calling thread: each of
// 2 participants would get under 8 units (~40 us of one core at the a1e3fc3 report's
// 128^3 serial time), too little to cover a region's wake-up and join plus the second
// packing of B (benchmarks/parallel_for_overhead measures the region). The report's
// crossover size, 128^3 = 8 units, is below it: its 0.92x "loss" at a1e3fc3 opened no
// region in either policy (the same serial code timed one run after the other).
struct MatMulDecisionCase {
  int64_t m, n, k;
  bool parallel;  // a region with more than one participant
};

class MatMulDecision : public ::testing::TestWithParam<MatMulDecisionCase> {};

TEST_P(MatMulDecision, SplitsOnlyFromTheMinimumWork) {
  const MatMulDecisionCase c = GetParam();
  KernelTester t("MatMul", 13);
  t.Input(MakeTensor<float>({c.m, c.k}, Random(c.m * c.k, 1)))
      .Input(MakeTensor<float>({c.k, c.n}, Random(c.k * c.n, 2)))
      .PortableDefaults();  // the decision under test, also in the forced-parallel mode
  for (int participants : {2, 8}) {
    auto run = t.RunWithDetails(participants);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    bool split = false;
    for (const auto& r : run->regions) split = split || r.admitted_participants > 1;
    EXPECT_EQ(split, c.parallel) << c.m << "x" << c.n << "x" << c.k << " with " << participants;
  }
}

INSTANTIATE_TEST_SUITE_P(DefaultTuning, MatMulDecision,
                         ::testing::Values(MatMulDecisionCase{64, 64, 64, false},      // 1 unit: corpus small
                                           MatMulDecisionCase{128, 128, 128, false},   // 8: corpus crossover
                                           MatMulDecisionCase{128, 128, 240, false},   // 15: just below
                                           MatMulDecisionCase{128, 128, 256, true},    // 16: the minimum
                                           MatMulDecisionCase{512, 512, 512, true}));  // 512: corpus large

}  // namespace
}  // namespace onnx_light
