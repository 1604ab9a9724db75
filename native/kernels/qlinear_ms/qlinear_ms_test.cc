// The com.microsoft QLinear* kernels against float references written out here (numpy-like
// loops over dequantized values, then round-half-to-even and saturation), uint8 and int8,
// every parallel path forced and checked bit for bit across participant counts.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::DeterministicOutputs;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

constexpr char kMs[] = "com.microsoft";

template <typename Q>
std::vector<Q> RandomQ(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max());
  std::vector<Q> v(n);
  for (auto& x : v) x = static_cast<Q>(d(rng));
  return v;
}

// The reference quantization: saturate(round_half_to_even(v / scale) + zero_point).
template <typename Q>
Q RefQuantize(float v, float scale, int zp) {
  const float r = std::nearbyint(v / scale) + static_cast<float>(zp);
  const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(r < lo ? lo : (r > hi ? hi : r));
}

float RefDequantize(int q, float scale, int zp) { return scale * static_cast<float>(q - zp); }

// Serial outputs after the determinism check, the parallel path forced on every kernel.
std::vector<Value> RunForced(KernelTester& t) {
  t.Tuning(param::kMinimumElements, int64_t{1});
  return DeterministicOutputs(t);
}

template <typename Q>
Tensor Scalar(Q v) {
  return MakeTensor<Q>({}, {v});
}

template <typename Q>
class QLinearTyped : public ::testing::Test {};
using EightBitTypes = ::testing::Types<uint8_t, int8_t>;
TYPED_TEST_SUITE(QLinearTyped, EightBitTypes);

// Zero points inside the type's range for either signedness.
template <typename Q>
Q Zp(int unsigned_value) {
  return static_cast<Q>(std::is_signed<Q>::value ? unsigned_value - 128 : unsigned_value);
}

TYPED_TEST(QLinearTyped, AddAndMulBroadcastLikeNumpy) {
  using Q = TypeParam;
  const Shape a_shape{2, 3, 4}, b_shape{3, 1};
  const auto a = RandomQ<Q>(24, 1), b = RandomQ<Q>(3, 2);
  const float sa = 0.05f, sb = 0.11f, sc_add = 0.09f, sc_mul = 0.4f;
  const int za = Zp<Q>(120), zb = Zp<Q>(131), zc = Zp<Q>(127);
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    const bool add = std::string(op) == "QLinearAdd";
    const float sc = add ? sc_add : sc_mul;
    KernelTester t(op, 1, kMs);
    t.Input(MakeTensor<Q>(a_shape, a)).Input(Scalar(sa)).Input(Scalar<Q>(za));
    t.Input(MakeTensor<Q>(b_shape, b)).Input(Scalar(sb)).Input(Scalar<Q>(zb));
    t.Input(Scalar(sc)).Input(Scalar<Q>(zc));
    const auto out = RunForced(t);
    ASSERT_EQ(out.size(), 1u) << op;
    ASSERT_EQ(out[0].tensor().shape(), a_shape);
    const auto got = ToVector<Q>(out[0].tensor());
    int saturated = 0;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          const float x = RefDequantize(a[(n * 3 + i) * 4 + j], sa, za), y = RefDequantize(b[i], sb, zb);
          const Q want = RefQuantize<Q>(add ? x + y : x * y, sc, zc);
          saturated += want == std::numeric_limits<Q>::min() || want == std::numeric_limits<Q>::max();
          ASSERT_EQ(got[(n * 3 + i) * 4 + j], want) << op << " at " << n << "," << i << "," << j;
        }
      }
    }
    EXPECT_LT(saturated, 12) << op << ": the case should exercise more than saturation";
  }
}

TYPED_TEST(QLinearTyped, AbsentZeroPointsAreZero) {
  using Q = TypeParam;
  KernelTester t("QLinearAdd", 1, kMs);
  t.Input(MakeTensor<Q>({3}, {2, 4, 6})).Input(Scalar(0.5f)).MissingInput();
  t.Input(MakeTensor<Q>({1}, {3})).Input(Scalar(1.0f)).MissingInput();
  t.Input(Scalar(0.5f));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  // (1 + 3) / 0.5 = 8, (2 + 3) / 0.5 = 10, (3 + 3) / 0.5 = 12.
  EXPECT_EQ(ToVector<Q>(out[0].tensor()), (std::vector<Q>{8, 10, 12}));
}

TEST(QLinearAdd, RoundsHalfToEvenAndSaturates) {
  KernelTester t("QLinearAdd", 1, kMs);
  // a = 0.5 * {1, 3, 5, 200}; b = 0; c_scale 1: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 100 + 200 -> 255.
  t.Input(MakeTensor<uint8_t>({4}, {1, 3, 5, 200})).Input(Scalar(0.5f)).Input(Scalar<uint8_t>(0));
  t.Input(MakeTensor<uint8_t>({1}, {0})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  t.Input(Scalar(1.0f)).Input(Scalar<uint8_t>(200));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor()), (std::vector<uint8_t>{200, 202, 202, 255}));
}

// Scales so large that dequantized values overflow: +-infinity saturates high / low and
// infinity - infinity (NaN) saturates low, in the 16-lane steps and the scalar tail alike
// (37 elements: two steps and a tail of 5).
TYPED_TEST(QLinearTyped, AddOfInfinitiesSaturatesAndNaNGoesLow) {
  using Q = TypeParam;
  const int64_t n = 37;
  const float s = 1e38f;
  const int z = Zp<Q>(128), zc = Zp<Q>(100);
  std::vector<Q> a(n), b(n);
  for (int64_t e = 0; e < n; ++e) {
    a[e] = static_cast<Q>(z + (e % 3 == 0 ? 100 : (e % 3 == 1 ? -100 : 1)));  // +inf, -inf, 1e38
    b[e] = static_cast<Q>(z + (e % 4 == 0 ? -100 : (e % 4 == 1 ? 100 : 0)));  // -inf, +inf, 0
  }
  KernelTester t("QLinearAdd", 1, kMs);
  t.Input(MakeTensor<Q>({n}, a)).Input(Scalar(s)).Input(Scalar<Q>(static_cast<Q>(z)));
  t.Input(MakeTensor<Q>({n}, b)).Input(Scalar(s)).Input(Scalar<Q>(static_cast<Q>(z)));
  t.Input(Scalar(1.0f)).Input(Scalar<Q>(static_cast<Q>(zc)));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  const auto got = ToVector<Q>(out[0].tensor());
  int nans = 0;
  for (int64_t e = 0; e < n; ++e) {
    const float v = RefDequantize(a[e], s, z) + RefDequantize(b[e], s, z);
    nans += std::isnan(v);
    const Q want = std::isnan(v) ? std::numeric_limits<Q>::min() : RefQuantize<Q>(v, 1.0f, zc);
    ASSERT_EQ(got[e], want) << "at " << e << ": " << v;
  }
  EXPECT_GT(nans, 0);
}

// Every pair of values (a 256 x 256 grid), same shape, row-broadcast B [256], column-
// broadcast B [256, 1] and scalar A [1]: the vectorised loops of each step pattern. Power-of-
// two scales make ties (x.5 steps of C) and saturation common.
TYPED_TEST(QLinearTyped, AddAndMulOverEveryValuePairInEveryBroadcastPattern) {
  using Q = TypeParam;
  std::vector<Q> all(256), grid_a(65536), grid_b(65536);
  for (int v = 0; v < 256; ++v) all[v] = static_cast<Q>(std::numeric_limits<Q>::min() + v);
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 256; ++j) grid_a[i * 256 + j] = all[i], grid_b[i * 256 + j] = all[j];
  }
  const float sa = 0.5f, sb = 0.25f;
  const int za = Zp<Q>(100), zb = Zp<Q>(140), zc = Zp<Q>(128);
  struct Pattern {
    const char* name;
    Shape a_shape, b_shape;
    std::vector<Q> a, b;
    // Element e of the [256, 256] (or [256]) output reads a[ia(e)], b[ib(e)].
    int64_t (*ia)(int64_t), (*ib)(int64_t);
  };
  const std::vector<Pattern> patterns = {
      {"same shape", Shape{256, 256}, Shape{256, 256}, grid_a, grid_b, [](int64_t e) { return e; },
       [](int64_t e) { return e; }},
      {"row broadcast", Shape{256, 256}, Shape{256}, grid_a, all, [](int64_t e) { return e; },
       [](int64_t e) { return e % 256; }},
      {"column broadcast", Shape{256, 256}, Shape{256, 1}, grid_a, all, [](int64_t e) { return e; },
       [](int64_t e) { return e / 256; }},
      {"scalar A", Shape{1}, Shape{256}, std::vector<Q>{all[77]}, all, [](int64_t) { return int64_t{0}; },
       [](int64_t e) { return e; }},
  };
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    const bool add = std::string(op) == "QLinearAdd";
    const float sc = add ? 0.5f : 4.0f;
    for (const Pattern& p : patterns) {
      KernelTester t(op, 1, kMs);
      t.Input(MakeTensor<Q>(p.a_shape, p.a)).Input(Scalar(sa)).Input(Scalar<Q>(static_cast<Q>(za)));
      t.Input(MakeTensor<Q>(p.b_shape, p.b)).Input(Scalar(sb)).Input(Scalar<Q>(static_cast<Q>(zb)));
      t.Input(Scalar(sc)).Input(Scalar<Q>(static_cast<Q>(zc)));
      const auto out = RunForced(t);
      ASSERT_EQ(out.size(), 1u);
      const auto got = ToVector<Q>(out[0].tensor());
      int ties = 0;
      for (int64_t e = 0; e < static_cast<int64_t>(got.size()); ++e) {
        const float x = RefDequantize(p.a[p.ia(e)], sa, za), y = RefDequantize(p.b[p.ib(e)], sb, zb);
        const float v = add ? x + y : x * y;
        ties += std::fabs(v / sc - std::trunc(v / sc)) == 0.5f;
        ASSERT_EQ(got[e], RefQuantize<Q>(v, sc, zc)) << op << " " << p.name << " at " << e;
      }
      EXPECT_GT(ties, 0) << op << " " << p.name << ": the case should round ties";
    }
  }
}

// Every one of the 256 input values through the table; the same with constant
// parameters (table built at creation) and with fed ones (built per run).
TYPED_TEST(QLinearTyped, SigmoidAndLeakyReluOverEveryValue) {
  using Q = TypeParam;
  std::vector<Q> all(256);
  for (int v = 0; v < 256; ++v) all[v] = static_cast<Q>(std::numeric_limits<Q>::min() + v);
  const float sx = 0.0625f, sy_sig = 1.0f / 256.0f, sy_leaky = 0.05f, alpha = 0.1f;
  const int zx = Zp<Q>(128), zy_sig = Zp<Q>(0), zy_leaky = Zp<Q>(200);
  for (const bool constant : {true, false}) {
    for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu"}) {
      const bool sigmoid = std::string(op) == "QLinearSigmoid";
      const float sy = sigmoid ? sy_sig : sy_leaky;
      const int zy = sigmoid ? zy_sig : zy_leaky;
      KernelTester t(op, 1, kMs);
      if (!sigmoid) t.Attr("alpha", alpha);
      t.Input(MakeTensor<Q>({16, 16}, all));
      if (constant) {
        t.ConstantInput(Scalar(sx)).ConstantInput(Scalar<Q>(zx)).ConstantInput(Scalar(sy)).ConstantInput(Scalar<Q>(zy));
      } else {
        t.Input(Scalar(sx)).Input(Scalar<Q>(zx)).Input(Scalar(sy)).Input(Scalar<Q>(zy));
      }
      const auto out = RunForced(t);
      ASSERT_EQ(out.size(), 1u);
      const auto got = ToVector<Q>(out[0].tensor());
      for (int v = 0; v < 256; ++v) {
        const float x = RefDequantize(all[v], sx, zx);
        const float f = sigmoid ? 1.0f / (1.0f + std::exp(-x)) : (x >= 0.0f ? x : alpha * x);
        ASSERT_EQ(got[v], RefQuantize<Q>(f, sy, zy)) << op << " x=" << int(all[v]) << " constant=" << constant;
      }
    }
  }
}

// Reference average pool over NCHW [n, c, h, w] (2-D kernel), values dequantized.
template <typename Q>
std::vector<Q> RefAveragePool(const std::vector<Q>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s,
                              int64_t pad, bool include_pad, int64_t oh, int64_t ow, float sx, int zx, float sy,
                              int zy) {
  std::vector<Q> y;
  for (int64_t b = 0; b < n * c; ++b) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t sum = 0, count = 0;
        for (int64_t di = 0; di < k; ++di) {
          for (int64_t dj = 0; dj < k; ++dj) {
            const int64_t yy = i * s - pad + di, xx = j * s - pad + dj;
            const bool inside = yy >= 0 && yy < h && xx >= 0 && xx < w;
            const bool in_padded = yy < h + pad && xx < w + pad;  // ceil_mode windows may pass the end pad
            if (inside) sum += x[(b * h + yy) * w + xx] - zx;
            count += include_pad ? in_padded : inside;
          }
        }
        y.push_back(RefQuantize<Q>(sx * (static_cast<float>(sum) / static_cast<float>(count)), sy, zy));
      }
    }
  }
  return y;
}

// NCHW [n, c, h, w] -> NHWC.
template <typename Q>
std::vector<Q> ToNhwc(const std::vector<Q>& x, int64_t n, int64_t c, int64_t hw) {
  std::vector<Q> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) y[(b * hw + p) * c + ch] = x[(b * c + ch) * hw + p];
  return y;
}

TYPED_TEST(QLinearTyped, AveragePoolPadsCeilModeAndChannelsLast) {
  using Q = TypeParam;
  const int64_t n = 2, c = 3, h = 7, w = 6, k = 3, s = 2, pad = 1;
  const auto x = RandomQ<Q>(n * c * h * w, 3);
  const float sx = 0.03f, sy = 0.021f;
  const int zx = Zp<Q>(100), zy = Zp<Q>(140);
  for (const bool include_pad : {false, true}) {
    for (const bool ceil : {false, true}) {
      // floor((7 + 2 - 3) / 2) + 1 = 4, ceil: 4; floor((6 + 2 - 3) / 2) + 1 = 3, ceil: 4.
      const int64_t oh = 4, ow = ceil ? 4 : 3;
      const auto want = RefAveragePool(x, n, c, h, w, k, s, pad, include_pad, oh, ow, sx, zx, sy, zy);
      for (const bool channels_last : {false, true}) {
        KernelTester t("QLinearAveragePool", 1, kMs);
        t.Attr("kernel_shape", std::vector<int64_t>{k, k}).Attr("strides", std::vector<int64_t>{s, s});
        t.Attr("pads", std::vector<int64_t>{pad, pad, pad, pad});
        t.Attr("count_include_pad", int64_t{include_pad}).Attr("ceil_mode", int64_t{ceil});
        t.Attr("channels_last", int64_t{channels_last});
        t.Input(channels_last ? MakeTensor<Q>({n, h, w, c}, ToNhwc(x, n, c, h * w)) : MakeTensor<Q>({n, c, h, w}, x));
        t.Input(Scalar(sx)).Input(Scalar<Q>(zx)).Input(Scalar(sy)).Input(Scalar<Q>(zy));
        const auto out = RunForced(t);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].tensor().shape(), channels_last ? Shape({n, oh, ow, c}) : Shape({n, c, oh, ow}));
        EXPECT_EQ(ToVector<Q>(out[0].tensor()), channels_last ? ToNhwc(want, n, c, oh * ow) : want)
            << "include_pad=" << include_pad << " ceil=" << ceil << " channels_last=" << channels_last;
      }
    }
  }
}

TEST(QLinearAveragePool, SameUpperPadsAtTheEndAndRoundsHalfToEven) {
  KernelTester t("QLinearAveragePool", 1, kMs);
  t.Attr("kernel_shape", std::vector<int64_t>{2}).Attr("auto_pad", std::string("SAME_UPPER"));
  t.Input(MakeTensor<uint8_t>({1, 1, 5}, {1, 2, 3, 4, 5})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  t.Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{1, 1, 5}));
  // One pad at the end, not counted: 1.5 -> 2, 2.5 -> 2, 3.5 -> 4, 4.5 -> 4, 5 / 1 -> 5.
  EXPECT_EQ(ToVector<uint8_t>(out[0].tensor()), (std::vector<uint8_t>{2, 2, 4, 4, 5}));
}

// QLinearGlobalAveragePool over [n, c, side, side] in both layouts against the plane sums
// of the NCHW reference; `block_elements` > 0 also sets that tuning value.
template <typename Q>
void CheckGlobalAveragePool(int64_t n, int64_t c, int64_t side, uint32_t seed, float sx, float sy, int zx, int zy,
                            int64_t block_elements = 0) {
  const int64_t hw = side * side;
  const auto x = RandomQ<Q>(n * c * hw, seed);
  std::vector<Q> want;
  for (int64_t b = 0; b < n * c; ++b) {
    int64_t sum = 0;
    for (int64_t p = 0; p < hw; ++p) sum += x[b * hw + p] - zx;
    want.push_back(RefQuantize<Q>(sx * (static_cast<float>(sum) / static_cast<float>(hw)), sy, zy));
  }
  for (const bool channels_last : {false, true}) {
    KernelTester t("QLinearGlobalAveragePool", 1, kMs);
    t.Attr("channels_last", int64_t{channels_last});
    t.Input(channels_last ? MakeTensor<Q>({n, side, side, c}, ToNhwc(x, n, c, hw))
                          : MakeTensor<Q>({n, c, side, side}, x));
    t.Input(Scalar(sx)).Input(Scalar<Q>(zx)).Input(Scalar(sy)).Input(Scalar<Q>(zy));
    if (block_elements > 0) t.Tuning(param::kBlockElements, block_elements);
    const auto out = RunForced(t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].tensor().shape(), channels_last ? Shape({n, 1, 1, c}) : Shape({n, c, 1, 1}));
    EXPECT_EQ(ToVector<Q>(out[0].tensor()), want) << "channels_last=" << channels_last;
  }
}

TYPED_TEST(QLinearTyped, GlobalAveragePoolBothLayouts) {
  using Q = TypeParam;
  CheckGlobalAveragePool<Q>(2, 5, 3, 4, 0.2f, 0.07f, Zp<Q>(90), Zp<Q>(128));
}

// Channels past one block of the channels_last row reduction (256) with a remainder, and a
// 7 x 7 plane: the row sums per channel against the plane sums of the NCHW reference.
TYPED_TEST(QLinearTyped, GlobalAveragePoolChannelsLastSpansChannelBlocks) {
  using Q = TypeParam;
  CheckGlobalAveragePool<Q>(3, 300, 7, 12, 0.3f, 0.05f, Zp<Q>(70), Zp<Q>(140), /*block_elements=*/1);
}

TYPED_TEST(QLinearTyped, ConcatRequantizesEachInputToY) {
  using Q = TypeParam;
  const auto x0 = RandomQ<Q>(2 * 2 * 3, 5), x1 = RandomQ<Q>(2 * 3 * 3, 6);
  const float sy = 0.1f, s1 = 0.13f;
  const int zy = Zp<Q>(128), z1 = Zp<Q>(60);
  KernelTester t("QLinearConcat", 1, kMs);
  t.Attr("axis", int64_t{-2});
  t.Input(Scalar(sy)).Input(Scalar<Q>(zy));
  t.Input(MakeTensor<Q>({2, 2, 3}, x0)).Input(Scalar(sy)).Input(Scalar<Q>(zy));  // Y's parameters: copied
  t.Input(MakeTensor<Q>({2, 3, 3}, x1)).Input(Scalar(s1)).Input(Scalar<Q>(z1));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{2, 5, 3}));
  std::vector<Q> want;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t e = 0; e < 6; ++e) want.push_back(x0[b * 6 + e]);
    for (int64_t e = 0; e < 9; ++e) want.push_back(RefQuantize<Q>(RefDequantize(x1[b * 9 + e], s1, z1), sy, zy));
  }
  EXPECT_EQ(ToVector<Q>(out[0].tensor()), want);
}

// Reference QGemm: the float value alpha * a_scale * b_scale[j] * (sum_k (a - za)(b - zb[j]) + C).
template <typename QA, typename QB>
void CheckQGemm(bool trans_a, bool trans_b, bool float_output, uint32_t seed) {
  const int64_t m = 5, k = 70, n = 9;  // k spans two blocks of the inner loop
  const auto a = RandomQ<QA>(m * k, seed), b = RandomQ<QB>(k * n, seed + 1);
  const auto b_zp = RandomQ<QB>(n, seed + 2);
  std::vector<float> b_scale(n);
  for (int64_t j = 0; j < n; ++j) b_scale[j] = 0.001f * static_cast<float>(j + 3);
  std::vector<int32_t> bias(n);
  for (int64_t j = 0; j < n; ++j) bias[j] = static_cast<int32_t>(j * 997) - 4000;
  const float sa = 0.04f, alpha = 0.5f, sy = 0.3f;
  const int za = Zp<QA>(128);
  const int zy = 17;
  KernelTester t("QGemm", 1, kMs);
  t.Attr("transA", int64_t{trans_a}).Attr("transB", int64_t{trans_b}).Attr("alpha", alpha);
  // A and B are given in the transposed layouts when asked: element (i, k) of A at [k, i].
  std::vector<QA> a_in(a.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) a_in[trans_a ? kk * m + i : i * k + kk] = a[i * k + kk];
  std::vector<QB> b_in(b.size());
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) b_in[trans_b ? j * k + kk : kk * n + j] = b[kk * n + j];
  t.Input(trans_a ? MakeTensor<QA>({k, m}, a_in) : MakeTensor<QA>({m, k}, a_in))
      .Input(Scalar(sa))
      .Input(Scalar<QA>(za));
  t.ConstantInput(trans_b ? MakeTensor<QB>({n, k}, b_in) : MakeTensor<QB>({k, n}, b_in));
  t.Input(MakeTensor<float>({n}, b_scale)).ConstantInput(MakeTensor<QB>({n}, b_zp));
  t.Input(MakeTensor<int32_t>({n}, bias));
  if (!float_output) t.Input(Scalar(sy)).Input(Scalar<uint8_t>(zy));
  t.Tuning(param::kMinimumElements, int64_t{1});
  const auto out = DeterministicOutputs(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{m, n}));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = bias[j];
      for (int64_t kk = 0; kk < k; ++kk) acc += (int64_t{a[i * k + kk]} - za) * (int64_t{b[kk * n + j]} - b_zp[j]);
      const float factor = alpha * sa * b_scale[j];
      if (float_output) {
        ASSERT_EQ(out[0].tensor().data<float>()[i * n + j], static_cast<float>(acc) * factor) << i << "," << j;
      } else {
        const float v = static_cast<float>(acc) * (factor / sy);
        const float r = std::min(255.0f, std::max(0.0f, std::nearbyint(v) + zy));
        ASSERT_EQ(out[0].tensor().data<uint8_t>()[i * n + j], static_cast<uint8_t>(r)) << i << "," << j;
      }
    }
  }
}

TEST(QGemm, PerColumnScalesZeroPointsBiasAndTransposes) {
  CheckQGemm<uint8_t, int8_t>(false, false, false, 10);
  CheckQGemm<uint8_t, int8_t>(true, true, false, 20);
  CheckQGemm<int8_t, int8_t>(false, true, false, 30);
  CheckQGemm<uint8_t, uint8_t>(true, false, false, 40);
}

TEST(QGemm, FloatOutputWithoutYScale) {
  CheckQGemm<uint8_t, int8_t>(false, true, true, 50);
  CheckQGemm<int8_t, int8_t>(true, false, true, 60);
}

// A QGemm case on the engine's scale: M rows, K and N spanning several of its blocks (96
// rows, 256 columns, 512 K values) with remainders no tile divides, B constant (packed at
// creation) or an input (packed per run), b_scale/b_zero_point per tensor or per column, C
// absent, a row [N], a column [M, 1] or a full [M, N] matrix, quantized or float output.
struct QGemmCase {
  int64_t m, k, n;
  bool trans_a, trans_b, constant_b, per_column, float_output;
  enum class Bias { kNone, kRow, kColumn, kMatrix } bias;
};

template <typename QA, typename QB, typename QY>
void CheckLargeQGemm(const QGemmCase& g, uint32_t seed) {
  const int64_t m = g.m, k = g.k, n = g.n;
  const auto a = RandomQ<QA>(m * k, seed), b = RandomQ<QB>(k * n, seed + 1);
  const int64_t zps = g.per_column ? n : 1;
  const auto b_zp = RandomQ<QB>(zps, seed + 2);
  std::vector<float> b_scale(zps);
  for (int64_t j = 0; j < zps; ++j) b_scale[j] = 0.0005f * static_cast<float>(j % 7 + 1);
  int64_t c_rows = 0, c_cols = 0;
  if (g.bias == QGemmCase::Bias::kRow) c_rows = 1, c_cols = n;
  if (g.bias == QGemmCase::Bias::kColumn) c_rows = m, c_cols = 1;
  if (g.bias == QGemmCase::Bias::kMatrix) c_rows = m, c_cols = n;
  std::vector<int32_t> bias(c_rows * c_cols);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<int32_t>(i * 7919 % 20011) - 10000;
  const float sa = 0.02f, alpha = 0.75f, sy = 0.9f;
  const int za = Zp<QA>(131);
  const int zy = Zp<QY>(120);
  KernelTester t("QGemm", 1, kMs);
  t.Attr("transA", int64_t{g.trans_a}).Attr("transB", int64_t{g.trans_b}).Attr("alpha", alpha);
  std::vector<QA> a_in(a.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) a_in[g.trans_a ? kk * m + i : i * k + kk] = a[i * k + kk];
  std::vector<QB> b_in(b.size());
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) b_in[g.trans_b ? j * k + kk : kk * n + j] = b[kk * n + j];
  t.Input(g.trans_a ? MakeTensor<QA>({k, m}, a_in) : MakeTensor<QA>({m, k}, a_in)).Input(Scalar(sa));
  t.Input(Scalar<QA>(za));
  const Tensor b_tensor = g.trans_b ? MakeTensor<QB>({n, k}, b_in) : MakeTensor<QB>({k, n}, b_in);
  const Tensor zp_tensor = g.per_column ? MakeTensor<QB>({n}, b_zp) : Scalar<QB>(b_zp[0]);
  if (g.constant_b) {
    t.ConstantInput(b_tensor);
  } else {
    t.Input(b_tensor);
  }
  t.Input(g.per_column ? MakeTensor<float>({n}, b_scale) : Scalar(b_scale[0]));
  if (g.constant_b) {
    t.ConstantInput(zp_tensor);
  } else {
    t.Input(zp_tensor);
  }
  if (g.bias != QGemmCase::Bias::kNone) {
    t.Input(c_rows == 1 ? MakeTensor<int32_t>({c_cols}, bias) : MakeTensor<int32_t>({c_rows, c_cols}, bias));
  } else if (!g.float_output) {
    t.MissingInput();
  }
  if (!g.float_output) t.Input(Scalar(sy)).Input(Scalar<QY>(zy));
  const auto out = RunForced(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{m, n}));
  // The exact integer sum (int64: no wrapping at these sizes), then the float epilogue.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t zb = b_zp[g.per_column ? j : 0];
      int64_t acc = 0;
      if (!bias.empty()) acc = bias[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
      for (int64_t kk = 0; kk < k; ++kk) acc += (int64_t{a[i * k + kk]} - za) * (int64_t{b[kk * n + j]} - zb);
      const float factor = alpha * sa * b_scale[g.per_column ? j : 0];
      if (g.float_output) {
        ASSERT_EQ(out[0].tensor().data<float>()[i * n + j], static_cast<float>(acc) * factor) << i << "," << j;
      } else {
        const float v = static_cast<float>(acc) * (factor / sy);
        constexpr float lo = std::numeric_limits<QY>::min(), hi = std::numeric_limits<QY>::max();
        const float r = std::min(hi, std::max(lo, std::nearbyint(v) + zy));
        ASSERT_EQ(out[0].tensor().data<QY>()[i * n + j], static_cast<QY>(r)) << i << "," << j;
      }
    }
  }
}

TEST(QGemm, ManyEngineBlocksWithOddRemaindersConstantB) {
  using B = QGemmCase::Bias;
  CheckLargeQGemm<uint8_t, int8_t, uint8_t>({197, 523, 283, false, false, true, true, false, B::kRow}, 70);
  CheckLargeQGemm<uint8_t, int8_t, int8_t>({101, 517, 261, true, true, true, false, false, B::kMatrix}, 80);
  CheckLargeQGemm<int8_t, int8_t, uint8_t>({193, 259, 37, false, true, true, true, false, B::kColumn}, 90);
  CheckLargeQGemm<uint8_t, uint8_t, uint8_t>({99, 515, 269, true, false, true, true, true, B::kNone}, 100);
}

TEST(QGemm, ManyEngineBlocksWithOddRemaindersInputB) {
  using B = QGemmCase::Bias;
  CheckLargeQGemm<uint8_t, int8_t, uint8_t>({131, 521, 263, false, true, false, true, false, B::kMatrix}, 110);
  CheckLargeQGemm<int8_t, uint8_t, int8_t>({97, 129, 257, true, false, false, false, false, B::kNone}, 120);
  CheckLargeQGemm<int8_t, int8_t, uint8_t>({1, 1031, 17, false, false, false, true, true, B::kRow}, 130);
}

// The parallel decision (not timing), at the portable defaults: below 2^20 multiply-adds
// (qgemm.cc says why) QGemm opens no region at all; from there, with at least two of the
// engine's 96-row blocks, it splits over the participants.
struct QGemmDecisionCase {
  int64_t m, k, n;
  bool region;  // opens a region, shared by more than one participant
};

class QGemmDecision : public ::testing::TestWithParam<QGemmDecisionCase> {};

TEST_P(QGemmDecision, OpensARegionOnlyFromTheMinimumWork) {
  const QGemmDecisionCase c = GetParam();
  KernelTester t("QGemm", 1, kMs);
  t.Input(MakeTensor<uint8_t>({c.m, c.k}, RandomQ<uint8_t>(c.m * c.k, 1))).Input(Scalar(0.02f));
  t.Input(Scalar<uint8_t>(128)).Input(MakeTensor<uint8_t>({c.k, c.n}, RandomQ<uint8_t>(c.k * c.n, 2)));
  t.Input(Scalar(0.02f)).Input(Scalar<uint8_t>(128)).MissingInput().Input(Scalar(0.5f)).Input(Scalar<uint8_t>(128));
  t.PortableDefaults();
  for (int participants : {2, 8}) {
    auto run = t.RunWithDetails(participants);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    bool split = false;
    for (const auto& r : run->regions) split = split || r.admitted_participants > 1;
    EXPECT_EQ(split, c.region) << c.m << "x" << c.k << "x" << c.n << " with " << participants;
    if (!c.region) EXPECT_TRUE(run->regions.empty()) << c.m << "x" << c.k << "x" << c.n;
  }
}

INSTANTIATE_TEST_SUITE_P(DefaultTuning, QGemmDecision,
                         ::testing::Values(QGemmDecisionCase{64, 64, 64, false},      // 2^18: corpus small
                                           QGemmDecisionCase{96, 96, 96, false},      // 884,736: below
                                           QGemmDecisionCase{128, 64, 128, true},     // 2^20: the minimum
                                           QGemmDecisionCase{128, 128, 128, true},    // 2^21: corpus crossover
                                           QGemmDecisionCase{512, 512, 512, true}));  // 2^27: corpus large

TEST(QLinearMs, BadInputsAreInvalidArgumentNamingTheNode) {
  KernelTester add("QLinearAdd", 1, kMs);
  add.Input(MakeTensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  add.Input(MakeTensor<uint8_t>({4}, {1, 2, 3, 4})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  add.Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  const auto shapes = add.Run(1);
  EXPECT_EQ(shapes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shapes.status().message().find("QLinearAdd"), std::string::npos) << shapes.status().ToString();
  EXPECT_NE(shapes.status().message().find("not broadcastable"), std::string::npos) << shapes.status().ToString();

  KernelTester scale("QLinearSigmoid", 1, kMs);
  scale.Input(MakeTensor<int8_t>({2}, {1, 2})).Input(MakeTensor<float>({2}, {1.0f, 2.0f})).Input(Scalar<int8_t>(0));
  scale.Input(Scalar(1.0f)).Input(Scalar<int8_t>(0));
  const auto per_axis = scale.Run(1);
  EXPECT_EQ(per_axis.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(per_axis.status().message().find("X_scale"), std::string::npos) << per_axis.status().ToString();

  KernelTester zp("QLinearLeakyRelu", 1, kMs);
  zp.Input(MakeTensor<int8_t>({2}, {1, 2})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  zp.Input(Scalar(1.0f)).Input(Scalar<int8_t>(0));
  EXPECT_EQ(zp.Run(1).status().code(), StatusCode::kInvalidArgument);  // zero point of another type

  KernelTester pool("QLinearAveragePool", 1, kMs);
  pool.Attr("kernel_shape", std::vector<int64_t>{5, 5});
  pool.Input(MakeTensor<uint8_t>({1, 1, 3, 3}, std::vector<uint8_t>(9, 1)))
      .Input(Scalar(1.0f))
      .Input(Scalar<uint8_t>(0));
  pool.Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  const auto big = pool.Run(1);
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("[1,1,3,3]"), std::string::npos) << big.status().ToString();

  KernelTester concat("QLinearConcat", 1, kMs);
  concat.Attr("axis", int64_t{0});
  concat.Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  concat.Input(MakeTensor<uint8_t>({1, 2}, {1, 2})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  concat.Input(MakeTensor<uint8_t>({1, 3}, {1, 2, 3})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  EXPECT_EQ(concat.Run(1).status().code(), StatusCode::kInvalidArgument);

  KernelTester gemm("QGemm", 1, kMs);
  gemm.Input(MakeTensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(Scalar(1.0f)).Input(Scalar<uint8_t>(0));
  gemm.Input(MakeTensor<int8_t>({2, 2}, {1, 2, 3, 4})).Input(Scalar(1.0f)).Input(Scalar<int8_t>(0));
  const auto inner = gemm.Run(1);
  EXPECT_EQ(inner.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(inner.status().message().find("inner dimensions"), std::string::npos) << inner.status().ToString();
}

}  // namespace
}  // namespace onnx_light
