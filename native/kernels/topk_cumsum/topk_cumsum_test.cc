#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {param::kMinimumElements, int64_t{1}},
    {param::kBlockElements, int64_t{1}},
};

TEST(TopK, LargestAndSmallestWithTiesByLowerIndex) {
  KernelTester t("TopK", 11);
  t.Input(MakeTensor<float>({2, 5}, {3, 1, 3, 2, 5, /**/ 0, 0, -1, 7, 0}))
      .Input(MakeTensor<int64_t>({1}, {3}))
      .Outputs(2);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({2, 3}));
  EXPECT_EQ(ToVector<float>(out[0].tensor()), (std::vector<float>{5, 3, 3, 7, 0, 0}));
  EXPECT_EQ(ToVector<int64_t>(out[1].tensor()), (std::vector<int64_t>{4, 0, 2, 3, 0, 1}));

  KernelTester s("TopK", 11);
  s.Input(MakeTensor<int32_t>({2, 5}, {3, 1, 3, 2, 5, /**/ 0, 0, -1, 7, 0})).Input(MakeTensor<int64_t>({1}, {2}));
  s.Attr("largest", int64_t{0}).Outputs(2);
  auto small = RunAllCounts(s, kForceParallel);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(ToVector<int32_t>(small[0].tensor()), (std::vector<int32_t>{1, 2, -1, 0}));
  EXPECT_EQ(ToVector<int64_t>(small[1].tensor()), (std::vector<int64_t>{1, 3, 2, 0}));
}

TEST(TopK, StridedAxisNanAndAttributeK) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelTester t("TopK", 1);  // k as an attribute, axis 0 of [3, 2]
  t.Input(MakeTensor<float>({3, 2}, {1, 4, nan, 6, 2, 5})).Attr("k", int64_t{2}).Attr("axis", int64_t{0}).Outputs(2);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({2, 2}));
  const auto v = ToVector<float>(out[0].tensor());
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 6);
  EXPECT_EQ(v[2], 2);
  EXPECT_EQ(v[3], 5);
  EXPECT_EQ(ToVector<int64_t>(out[1].tensor()), (std::vector<int64_t>{1, 1, 2, 2}));
}

TEST(TopK, LargeLanesAreDeterministic) {
  std::vector<float> x(64 * 1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::round(std::sin(0.1f * i) * 50);  // many ties
  KernelTester t("TopK", 11);
  t.Input(MakeTensor<float>({64, 1000}, x)).Input(MakeTensor<int64_t>({1}, {10})).Outputs(2);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 2u);
  const float* v = out[0].tensor().data<float>();
  const int64_t* idx = out[1].tensor().data<int64_t>();
  for (int r = 0; r < 64; ++r) {
    for (int j = 0; j < 10; ++j) {
      ASSERT_EQ(v[r * 10 + j], x[r * 1000 + idx[r * 10 + j]]);
      if (j > 0) {
        ASSERT_TRUE(v[r * 10 + j - 1] > v[r * 10 + j] ||
                    (v[r * 10 + j - 1] == v[r * 10 + j] && idx[r * 10 + j - 1] < idx[r * 10 + j]));
      }
    }
  }
}

// Every lane against a full stable sort of its indices (the specification: value order,
// the lower index first among equal values), on both selection paths -- the bounded heap
// (k <= 64 and 8k <= length) and gather + nth_element -- for largest and smallest, sorted
// 1 (best first) and 0 (the same k elements, in index order).
TEST(TopK, SelectionMatchesFullStableSortOnBothPaths) {
  const int64_t rows = 5, length = 300;
  std::vector<float> x(rows * length);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::round(std::sin(0.37f * i) * 20);  // many ties
  for (int64_t k : {1, 5, 37, 64, 200, 300}) {
    for (int64_t largest : {0, 1}) {
      for (int64_t sorted : {0, 1}) {
        KernelTester t("TopK", 11);
        t.Input(MakeTensor<float>({rows, length}, x)).Input(MakeTensor<int64_t>({1}, {k})).Outputs(2);
        t.Attr("largest", largest).Attr("sorted", sorted);
        auto out = RunAllCounts(t, kForceParallel);
        ASSERT_EQ(out.size(), 2u);
        const std::vector<float> v = ToVector<float>(out[0].tensor());
        const std::vector<int64_t> idx = ToVector<int64_t>(out[1].tensor());
        for (int64_t r = 0; r < rows; ++r) {
          const float* lane = x.data() + r * length;
          std::vector<int64_t> order(length);
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t a, int64_t b) { return largest ? lane[a] > lane[b] : lane[a] < lane[b]; });
          order.resize(k);
          if (!sorted) std::sort(order.begin(), order.end());
          for (int64_t j = 0; j < k; ++j) {
            ASSERT_EQ(idx[r * k + j], order[j])
                << "k=" << k << " largest=" << largest << " sorted=" << sorted << " row " << r << " rank " << j;
            ASSERT_EQ(v[r * k + j], lane[order[j]]);
          }
        }
      }
    }
  }
}

TEST(TopK, NanRanksAboveEveryNumberOnTheHeapPath) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i % 5);
  x[9] = nan;
  x[17] = nan;
  KernelTester t("TopK", 11);  // k = 3 of 24: the bounded heap
  t.Input(MakeTensor<float>({1, 24}, x)).Input(MakeTensor<int64_t>({1}, {3})).Outputs(2);
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 2u);
  const auto v = ToVector<float>(out[0].tensor());
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_EQ(v[2], 4);
  EXPECT_EQ(ToVector<int64_t>(out[1].tensor()), (std::vector<int64_t>{9, 17, 4}));

  KernelTester s("TopK", 11);  // smallest: NaN last, never among the 3 smallest here
  s.Input(MakeTensor<float>({1, 24}, x)).Input(MakeTensor<int64_t>({1}, {3})).Attr("largest", int64_t{0}).Outputs(2);
  auto small = RunAllCounts(s, kForceParallel);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(ToVector<float>(small[0].tensor()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(ToVector<int64_t>(small[1].tensor()), (std::vector<int64_t>{0, 5, 10}));
}

// Long contiguous lanes take the heap path's block prefilter (blocks of 16 past the first
// k): NaNs inside blocks (two in one block, one in the last whole block), the worst of the
// k best itself NaN (k = 2 of three NaNs), smallest, and double. Expected from the rule
// (NaN above every number, the lower index first), worked out by hand.
TEST(TopK, NanInsideScannedBlocksOfLongLanes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x(250);
  for (int i = 0; i < 250; ++i) x[i] = static_cast<double>((i * 37) % 101);  // 0..100, each 2-3 times
  x[40] = nan;
  x[41] = nan;
  x[199] = nan;
  // 37 i = v (mod 101): 100 at i = 30, 131, 232; 0 at i = 0, 101, 202; 1 at i = 71, 172.
  auto run = [&](DataType type, int64_t k, int64_t largest) {
    KernelTester t("TopK", 11);
    Tensor in = type == DataType::kDouble ? MakeTensor<double>({1, 250}, x)
                                          : MakeTensor<float>({1, 250}, std::vector<float>(x.begin(), x.end()));
    t.Input(in).Input(MakeTensor<int64_t>({1}, {k})).Attr("largest", largest).Outputs(2);
    auto out = RunAllCounts(t, kForceParallel);
    EXPECT_EQ(out.size(), 2u);
    return out.size() == 2u ? ToVector<int64_t>(out[1].tensor()) : std::vector<int64_t>{};
  };
  for (DataType type : {DataType::kFloat, DataType::kDouble}) {
    EXPECT_EQ(run(type, 6, 1), (std::vector<int64_t>{40, 41, 199, 30, 131, 232})) << DataTypeName(type);
    EXPECT_EQ(run(type, 2, 1), (std::vector<int64_t>{40, 41})) << DataTypeName(type);
    EXPECT_EQ(run(type, 4, 0), (std::vector<int64_t>{0, 101, 202, 71})) << DataTypeName(type);
  }
}

// Every selection path against a full stable sort of each lane's indices (value order, the
// lower index first among equal values) for float, double and the integers (the vector
// prefilter at every vector width: 2, 4 and 16 lanes), on contiguous and strided lanes
// (blocks copied together): k = 1, 5 and 16 keep a sorted list, 17 and 37 a heap
// (8k <= 300), 64 and 200 gather. Lanes of 300 (blocks of 32 and a tail): many ties,
// ascending (for largest every element enters) and descending (none after the first k);
// the byte types take a third of each value (more ties), uint8 shifted up by 20.
template <typename T>
class TopKPathsTest : public ::testing::Test {};
using TopKPathTypes = ::testing::Types<float, double, int32_t, int64_t, int8_t, uint8_t>;
TYPED_TEST_SUITE(TopKPathsTest, TopKPathTypes);

TYPED_TEST(TopKPathsTest, EveryPathMatchesFullStableSort) {
  using T = TypeParam;
  const int64_t lanes = 3, length = 300;
  std::vector<T> lane_major(lanes * length);
  auto fit = [](double v) { return static_cast<T>(sizeof(T) == 1 ? std::floor(v / 3) : v); };
  for (int64_t i = 0; i < length; ++i) {
    lane_major[i] = fit(std::round(std::sin(0.37 * i) * 20) + (std::is_unsigned_v<T> ? 20 : 0));
    lane_major[length + i] = fit(static_cast<double>(i / 2));
    lane_major[2 * length + i] = fit(static_cast<double>(length - i / 3));
  }
  for (int64_t inner : {1, 2}) {
    // Shape [lanes, length, inner], axis 1: lane l of copy c at x[(l * length + i) * inner + c].
    std::vector<T> x(lane_major.size() * inner);
    for (int64_t l = 0; l < lanes; ++l) {
      for (int64_t i = 0; i < length; ++i) {
        for (int64_t c = 0; c < inner; ++c) {
          x[(l * length + i) * inner + c] = lane_major[l * length + (c == 0 ? i : length - 1 - i)];
        }
      }
    }
    for (int64_t k : {1, 5, 16, 17, 37, 64, 200}) {
      for (int64_t largest : {0, 1}) {
        for (int64_t sorted : {0, 1}) {
          KernelTester t("TopK", 11);
          t.Input(MakeTensor<T>({lanes, length, inner}, x)).Input(MakeTensor<int64_t>({1}, {k})).Outputs(2);
          t.Attr("axis", int64_t{1}).Attr("largest", largest).Attr("sorted", sorted);
          auto out = RunAllCounts(t, kForceParallel);
          ASSERT_EQ(out.size(), 2u);
          const std::vector<T> v = ToVector<T>(out[0].tensor());
          const std::vector<int64_t> idx = ToVector<int64_t>(out[1].tensor());
          for (int64_t l = 0; l < lanes; ++l) {
            for (int64_t c = 0; c < inner; ++c) {
              auto at = [&](int64_t i) { return x[(l * length + i) * inner + c]; };
              std::vector<int64_t> order(length);
              std::iota(order.begin(), order.end(), 0);
              std::stable_sort(order.begin(), order.end(),
                               [&](int64_t a, int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
              order.resize(k);
              if (!sorted) std::sort(order.begin(), order.end());
              for (int64_t j = 0; j < k; ++j) {
                const int64_t o = (l * k + j) * inner + c;
                ASSERT_EQ(idx[o], order[j]) << "inner=" << inner << " k=" << k << " largest=" << largest
                                            << " sorted=" << sorted << " lane " << l << "." << c << " rank " << j;
                ASSERT_EQ(v[o], at(order[j]));
              }
            }
          }
        }
      }
    }
  }
}

// The parallel decision at the portable defaults weighs a lane by its method (no timing:
// whether a region opens, and its grain). 16 lanes of 1000 are 16000 elements, above the
// minimum of 8192 gathered elements: with k = 500 they are gathered and take a region;
// with k = 5 they are scanned on vectors at 1/16 of that cost each (1000 units) and stay
// serial. 512 scanned lanes (issue 17's TopK) are 32000 units: a region with a grain of
// 1024 / 62 = 16 lanes (kTopKBlock), so that the executor's 4 blocks per participant fit
// (8 blocks of 64 lanes at 2 participants; at a grain of 16384 units there were 2 blocks
// of 264 and 248 lanes, one per participant).
TEST(TopK, ParallelDecisionWeighsLanesByMethod) {
  auto regions = [](int64_t lanes, int64_t k) {
    std::vector<float> x(lanes * 1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * i);
    KernelTester t("TopK", 11);
    t.PortableDefaults().Input(MakeTensor<float>({lanes, 1000}, x)).Input(MakeTensor<int64_t>({1}, {k})).Outputs(2);
    auto run = t.RunWithDetails(2);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? run->regions : std::vector<RegionEvent>{};
  };
  EXPECT_EQ(regions(16, 500).size(), 1u);
  EXPECT_TRUE(regions(16, 5).empty());
  const std::vector<RegionEvent> topk5 = regions(512, 5);
  ASSERT_EQ(topk5.size(), 1u);
  EXPECT_EQ(topk5[0].total, 512);
  EXPECT_EQ(topk5[0].grain, 16);
  EXPECT_EQ(topk5[0].admitted_participants, 2);
}

// Integer lanes take the vector prefilter like float ones: 512 int32 or int8 lanes of 1000
// at k = 5 weigh 62 units each as float's do (a region, grain 16), where offered one by one
// they weighed 250 (grain 4). Strided lanes (the same 512 lanes as [64, 1000, 8], axis 1)
// copy each block together first: 1000 / 8 = 125 units each (grain 8); strided 64-bit
// integers are offered one by one (250 units, grain 4).
TEST(TopK, ParallelDecisionWeighsIntegerAndStridedLanesAsScanned) {
  auto region = [](auto tag, int64_t inner) {
    using T = decltype(tag);
    std::vector<T> x(512 * 1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i * 7919 % 101);
    KernelTester t("TopK", 11);
    t.PortableDefaults()
        .Input(MakeTensor<T>({512 / inner, 1000, inner}, x))
        .Input(MakeTensor<int64_t>({1}, {5}))
        .Attr("axis", int64_t{1})
        .Outputs(2);
    auto run = t.RunWithDetails(2);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() && run->regions.size() == 1 ? run->regions[0] : RegionEvent{};
  };
  EXPECT_EQ(region(int32_t{}, 1).grain, 16);
  EXPECT_EQ(region(int8_t{}, 1).grain, 16);
  EXPECT_EQ(region(float{}, 8).grain, 8);
  EXPECT_EQ(region(int64_t{}, 8).grain, 4);
}

TEST(TopK, KOutOfRangeIsInvalidArgument) {
  KernelTester t("TopK", 11);
  t.NodeName("top").Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<int64_t>({1}, {4}));
  auto s = t.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
}

TEST(CumSum, InclusiveExclusiveReverseAndStridedAxis) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [2, 3]
  struct Case {
    int64_t axis, exclusive, reverse;
    std::vector<float> expected;
  };
  for (const Case& c :
       {Case{1, 0, 0, {1, 3, 6, 4, 9, 15}}, Case{1, 1, 0, {0, 1, 3, 0, 4, 9}}, Case{1, 0, 1, {6, 5, 3, 15, 11, 6}},
        Case{1, 1, 1, {5, 3, 0, 11, 6, 0}}, Case{0, 0, 0, {1, 2, 3, 5, 7, 9}}, Case{-2, 1, 1, {4, 5, 6, 0, 0, 0}}}) {
    KernelTester t("CumSum", 14);
    t.Input(MakeTensor<float>({2, 3}, x)).Input(MakeTensor<int32_t>(Shape(), {static_cast<int32_t>(c.axis)}));
    t.Attr("exclusive", c.exclusive).Attr("reverse", c.reverse);
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<float>(out[0].tensor()), c.expected) << c.axis << c.exclusive << c.reverse;
  }
}

TEST(CumSum, LowPrecisionRunsInFloatAndIntegers) {
  std::vector<Float16> h(3000, Float16::FromFloat(1.0f));
  KernelTester t("CumSum", 14);
  t.Input(MakeTensor<Float16>({3000}, h)).Input(MakeTensor<int64_t>({1}, {0}));
  auto out = RunAllCounts(t, kForceParallel);
  ASSERT_EQ(out.size(), 1u);
  // 2049 is not a float16 value: the stored result rounds, but the float running sum does not stall at 2048.
  EXPECT_EQ(out[0].tensor().data<Float16>()[2999].ToFloat(), 3000.0f);

  KernelTester i("CumSum", 11);
  i.Input(MakeTensor<int64_t>({4}, {1, -2, 3, -4})).Input(MakeTensor<int64_t>(Shape(), {0}));
  auto o = RunAllCounts(i, kForceParallel);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(ToVector<int64_t>(o[0].tensor()), (std::vector<int64_t>{1, -1, 2, -2}));

  KernelTester bad("CumSum", 14);
  bad.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({1}, {1}));
  EXPECT_EQ(bad.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(CumProd, InclusiveExclusiveReverseStridedAxisAndWrappingIntegers) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [2, 3]
  struct Case {
    int64_t axis, exclusive, reverse;
    std::vector<float> expected;
  };
  for (const Case& c :
       {Case{1, 0, 0, {1, 2, 6, 4, 20, 120}}, Case{1, 1, 0, {1, 1, 2, 1, 4, 20}}, Case{1, 0, 1, {6, 6, 3, 120, 30, 6}},
        Case{1, 1, 1, {6, 3, 1, 30, 6, 1}}, Case{0, 0, 0, {1, 2, 3, 4, 10, 18}}, Case{-2, 1, 1, {4, 5, 6, 1, 1, 1}}}) {
    KernelTester t("CumProd", 26);
    t.Input(MakeTensor<float>({2, 3}, x)).Input(MakeTensor<int64_t>(Shape(), {c.axis}));
    t.Attr("exclusive", c.exclusive).Attr("reverse", c.reverse);
    auto out = RunAllCounts(t, kForceParallel);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<float>(out[0].tensor()), c.expected) << c.axis << c.exclusive << c.reverse;
  }
  // 2^31 overflows int32 and wraps (two's complement), as unsigned arithmetic would.
  KernelTester i("CumProd", 26);
  i.Input(MakeTensor<int32_t>({3}, {65536, 32768, 2})).Input(MakeTensor<int32_t>(Shape(), {0}));
  auto o = RunAllCounts(i, kForceParallel);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(ToVector<int32_t>(o[0].tensor()), (std::vector<int32_t>{65536, INT32_MIN, 0}));
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
