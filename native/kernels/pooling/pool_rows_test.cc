// The 2-D row-interior path (pool_rows.cc) against the generic N-d path (pool_ops.cc):
// the same pool as a 3-D one with a trailing size-1 dimension, and MaxPool with its
// Indices output, both take the generic path and must give bit-identical values, on
// inputs with ties, signed zeros, infinities and NaNs.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/pooling/pool_rows.h"
#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

const std::vector<std::pair<std::string, ParamValue>> kForceParallel = {
    {param::kMinimumElements, int64_t{1}},
    {param::kBlockElements, int64_t{1}},
};
const std::vector<std::pair<std::string, ParamValue>> kForceParallelWindow = {
    {param::kMinimumElements, int64_t{1}},
    {param::kMinimumRowReads, int64_t{1}},
    {param::kBlockElements, int64_t{1}},
};

struct Geometry {
  std::vector<int64_t> kernel, strides, pads, dilations;  // 2-D, pads as [h0, w0, h1, w1]
  int64_t ceil_mode = 0;
  int64_t height = 0, width = 0;
};

const Geometry kGeometries[] = {
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 17, 23},  // ResNet stem
    {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0, 12, 12},
    {{3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 9, 30},
    {{3, 2}, {2, 3}, {2, 1, 0, 1}, {1, 1}, 1, 11, 20},  // ceil_mode, asymmetric pads
    {{2, 3}, {1, 2}, {1, 2, 1, 2}, {2, 2}, 1, 10, 19},  // dilation
    {{5, 5}, {3, 3}, {2, 2, 2, 2}, {1, 1}, 0, 4, 4},    // window wider than the input: no interior
    {{3, 3}, {1, 4}, {2, 2, 2, 2}, {1, 1}, 0, 8, 33},   // stride > 2
    // Interior widths 49, 42 and 32: a 32-column block, then 3, 2 and no remaining blocks.
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 5, 101},
    {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 4, 43},
    {{3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 3, 34},
    // Byte rows (32 columns a register): interior widths 64, then 95 and 81 (a last block
    // overlapping its neighbour) at strides 2 and 1, with dilation.
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 5, 130},
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 4, 192},
    {{2, 3}, {1, 1}, {0, 2, 1, 2}, {2, 2}, 1, 6, 85},
    // Byte rows of 16 columns a register (NEON): interior widths 16 (one block) and 19 at
    // stride 2 (a last block overlapping its neighbour).
    {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 3, 17},
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 5, 40},
};

// Few distinct values so that windows tie; signed zeros, infinities and NaNs in between.
// For the byte types: the type's extremes (its minimum is the padding's identity) among
// few other values, so that windows tie and all-minimum windows occur.
template <typename T>
std::vector<T> SpecialValues(int64_t n, uint32_t seed) {
  if constexpr (std::is_integral_v<T>) {
    const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    const T specials[] = {lo, hi, T(lo + 1), T(hi - 1), T(0)};
    std::mt19937 rng(seed);
    std::vector<T> v(n);
    for (auto& e : v) {
      const uint32_t r = rng() % 40;
      e = r < 5 ? specials[r] : r < 12 ? lo : static_cast<T>(lo + static_cast<int>(rng() % 256));
    }
    return v;
  }
  const T specials[] = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN()};
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (auto& e : v) {
    const uint32_t r = rng() % 40;
    e = r < 5 ? specials[r] : static_cast<T>(static_cast<int>(r % 7) - 3) * T(0.5);
  }
  return v;
}

std::vector<int64_t> Widen3d(const std::vector<int64_t>& v, int64_t last) {
  std::vector<int64_t> out = v;
  if (v.size() == 4) return {v[0], v[1], 0, v[2], v[3], 0};  // pads
  out.push_back(last);
  return out;
}

void SetAttributes(KernelTester& t, const Geometry& g, bool as_3d, const std::string& op, int64_t option) {
  t.Attr("kernel_shape", as_3d ? Widen3d(g.kernel, 1) : g.kernel);
  t.Attr("strides", as_3d ? Widen3d(g.strides, 1) : g.strides);
  t.Attr("pads", as_3d ? Widen3d(g.pads, 0) : g.pads);
  t.Attr("dilations", as_3d ? Widen3d(g.dilations, 1) : g.dilations);
  t.Attr("ceil_mode", g.ceil_mode);
  if (op == "AveragePool") t.Attr("count_include_pad", option);
  if (op == "LpPool") t.Attr("p", option);
}

// Same bits (so -0 and +0 differ), except that any two NaNs match: a sum's NaN payload and
// sign depend on operand order, which the compiler may swap (IEEE addition commutes).
template <typename T>
void ExpectBitIdentical(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.num_elements(), b.num_elements()) << what;
  const std::vector<T> va = ToVector<T>(a), vb = ToVector<T>(b);
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) && std::isnan(vb[i])) continue;
    ASSERT_EQ(std::memcmp(&va[i], &vb[i], sizeof(T)), 0)
        << what << ": element " << i << " " << +va[i] << " vs " << +vb[i];
  }
}

template <typename T>
void CompareWithGenericPath(const std::string& op, int opset, int64_t option) {
  uint32_t seed = 1;
  for (const Geometry& g : kGeometries) {
    const std::string what = op + " kernel " + std::to_string(g.kernel[0]) + "x" + std::to_string(g.kernel[1]) +
                             " on " + std::to_string(g.height) + "x" + std::to_string(g.width) + " option " +
                             std::to_string(option);
    const std::vector<T> x = SpecialValues<T>(2 * 3 * g.height * g.width, seed++);
    KernelTester fast(op, opset);
    fast.Input(MakeTensor<T>({2, 3, g.height, g.width}, x));
    SetAttributes(fast, g, false, op, option);
    const std::vector<Value> fast_out = RunAllCounts(fast, kForceParallelWindow);
    ASSERT_EQ(fast_out.size(), 1u) << what;

    KernelTester generic(op, opset);
    generic.Input(MakeTensor<T>({2, 3, g.height, g.width, 1}, x));
    SetAttributes(generic, g, true, op, option);
    const std::vector<Value> generic_out = RunAllCounts(generic, kForceParallelWindow);
    ASSERT_EQ(generic_out.size(), 1u) << what;
    ExpectBitIdentical<T>(fast_out[0].tensor(), generic_out[0].tensor(), what + " vs 3-D");

    if (op == "MaxPool") {  // with Indices, the 2-D pool itself takes the generic path
      KernelTester indexed(op, opset);
      indexed.Input(MakeTensor<T>({2, 3, g.height, g.width}, x)).Outputs(2);
      SetAttributes(indexed, g, false, op, option);
      const std::vector<Value> indexed_out = RunAllCounts(indexed, kForceParallelWindow);
      ASSERT_EQ(indexed_out.size(), 2u) << what;
      ExpectBitIdentical<T>(fast_out[0].tensor(), indexed_out[0].tensor(), what + " vs with Indices");
    }
  }
}

// Every interior-row variant (pool_rows.h) against the portable one, directly on the
// row function over every geometry above, bit for bit (any two NaNs match); variants this
// CPU cannot run, or the ISA cap excludes, are skipped by name.
template <PoolKind K, typename T>
void CompareVariantWithPortable(Isa variant, const PoolOptions& opt, const std::string& what) {
  uint32_t seed = 100;
  for (const Geometry& geometry : kGeometries) {
    PoolAttributes attrs;
    attrs.kernel = geometry.kernel;
    attrs.strides = geometry.strides;
    attrs.pads = geometry.pads;
    attrs.dilations = geometry.dilations;
    attrs.ceil_mode = geometry.ceil_mode != 0;
    const StatusOr<PoolGeometry> g = MakePoolGeometry(attrs, Shape({2, 3, geometry.height, geometry.width}), what);
    ASSERT_TRUE(g.ok()) << what;
    const std::vector<T> x = SpecialValues<T>(2 * 3 * geometry.height * geometry.width, seed++);
    const int64_t rows = g->planes * g->out[0];
    std::vector<T> got(g->planes * g->out_plane), want(got.size());
    PoolRows2dVariant<K, T>(variant, *g, opt, x.data(), got.data(), 0, rows);
    PoolRows2dVariant<K, T>(Isa::kPortable, *g, opt, x.data(), want.data(), 0, rows);
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(got[i]) && std::isnan(want[i])) continue;
      ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(T)), 0)
          << what << " kernel " << geometry.kernel[0] << "x" << geometry.kernel[1] << " on " << geometry.height << "x"
          << geometry.width << ": element " << i << " " << +got[i] << " vs " << +want[i];
    }
  }
}

class PoolRowsVariantTest : public ::testing::TestWithParam<IsaVariant<Isa>> {};

TEST_P(PoolRowsVariantTest, MatchesPortableBitForBit) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const Isa v = GetParam().impl;
  PoolOptions opt;
  CompareVariantWithPortable<PoolKind::kMax, float>(v, opt, "max float");
  CompareVariantWithPortable<PoolKind::kMax, double>(v, opt, "max double");
  CompareVariantWithPortable<PoolKind::kMax, int8_t>(v, opt, "max int8");
  CompareVariantWithPortable<PoolKind::kMax, uint8_t>(v, opt, "max uint8");
  for (bool include_pad : {false, true}) {
    opt.count_include_pad = include_pad;
    CompareVariantWithPortable<PoolKind::kAverage, float>(v, opt, "average float");
    CompareVariantWithPortable<PoolKind::kAverage, double>(v, opt, "average double");
  }
  for (int64_t p : {1, 2, 3}) {
    opt.p = p;
    CompareVariantWithPortable<PoolKind::kLp, float>(v, opt, "lp float");
    CompareVariantWithPortable<PoolKind::kLp, double>(v, opt, "lp double");
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, PoolRowsVariantTest, ::testing::ValuesIn(PoolRowsVariants()), IsaVariantTestName<Isa>);

TEST(PoolRows, MaxPoolMatchesGenericPath) {
  CompareWithGenericPath<float>("MaxPool", 12, 0);
  CompareWithGenericPath<double>("MaxPool", 12, 0);
  CompareWithGenericPath<int8_t>("MaxPool", 12, 0);
  CompareWithGenericPath<uint8_t>("MaxPool", 22, 0);
}

TEST(PoolRows, AveragePoolMatchesGenericPath) {
  for (int64_t include_pad : {0, 1}) {
    CompareWithGenericPath<float>("AveragePool", 19, include_pad);
    CompareWithGenericPath<double>("AveragePool", 19, include_pad);
  }
}

TEST(PoolRows, LpPoolMatchesGenericPath) {
  for (int64_t p : {1, 2, 3}) CompareWithGenericPath<float>("LpPool", 18, p);
}

// Global pools fold 8 planes interleaved: each must equal the window pool whose kernel
// covers the plane (same fold order; no NaNs, since GlobalMaxPool skips them and MaxPool
// keeps a leading one). 2 x 11 planes: blocks of 8 and a remainder.
TEST(PoolRows, GlobalPoolsMatchWholePlaneWindows) {
  std::vector<float> x = SpecialValues<float>(2 * 11 * 3 * 5, 99);
  for (float& v : x) v = std::isnan(v) ? 1.25f : v;
  for (const auto& [global, window] : {std::pair<std::string, std::string>{"GlobalAveragePool", "AveragePool"},
                                       std::pair<std::string, std::string>{"GlobalMaxPool", "MaxPool"}}) {
    KernelTester g(global, 22);
    g.Input(MakeTensor<float>({2, 11, 3, 5}, x));
    const std::vector<Value> g_out = RunAllCounts(g, kForceParallel);
    KernelTester w(window, 22);
    w.Input(MakeTensor<float>({2, 11, 3, 5}, x)).Attr("kernel_shape", std::vector<int64_t>{3, 5});
    const std::vector<Value> w_out = RunAllCounts(w, kForceParallelWindow);
    ASSERT_EQ(g_out.size(), 1u);
    ASSERT_EQ(w_out.size(), 1u);
    ExpectBitIdentical<float>(g_out[0].tensor(), w_out[0].tensor(), global + " vs " + window);
  }
}

// A value check independent of both paths: the stem pool of a ramp picks each window's
// bottom-right in-bounds element.
TEST(PoolRows, StemMaxPoolOfRamp) {
  const int64_t h = 6, w = 7;
  std::vector<float> x(h * w);
  for (int64_t i = 0; i < h * w; ++i) x[i] = static_cast<float>(i);
  KernelTester t("MaxPool", 12);
  t.Input(MakeTensor<float>({1, 1, h, w}, x));
  t.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("strides", std::vector<int64_t>{2, 2});
  t.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  const std::vector<Value> out = RunAllCounts(t, kForceParallelWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), Shape({1, 1, 3, 4}));
  std::vector<float> expected;
  for (int64_t oh = 0; oh < 3; ++oh) {
    for (int64_t ow = 0; ow < 4; ++ow) {
      expected.push_back(static_cast<float>(std::min(2 * oh + 1, h - 1) * w + std::min(2 * ow + 1, w - 1)));
    }
  }
  EXPECT_EQ(ToVector<float>(out[0].tensor()), expected);
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
