// Integer matmuls and convolutions against naive references with 64-bit accumulation;
// bit-identical for 1, 2, 4 and 8 participants.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/quantized/igemm/igemm.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

template <typename T>
std::vector<T> RandomBytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(std::is_signed<T>::value ? -128 : 0, std::is_signed<T>::value ? 127 : 255);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// The serial outputs, after the determinism check with the parallel path forced.
std::vector<Value> RunAllCounts(KernelTester& t) {
  t.Tuning(param::kMinimumTasks, int64_t{1});
  return testing::DeterministicOutputs(t);
}

// Requantization as the ONNX reference does it: rint(acc * (sa * sb / sy) + zp), clipped.
int64_t Requant(int64_t acc, float sa, float sb, float sy, int zp, int lo, int hi) {
  const float multiplier = sa * sb / sy;
  const double v = std::nearbyint(static_cast<double>(acc) * multiplier + zp);
  return static_cast<int64_t>(std::min<double>(hi, std::max<double>(lo, v)));
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPointsWithBatches) {
  const int64_t b = 3, m = 7, k = 37, n = 19;
  const auto a = RandomBytes<uint8_t>(b * m * k, 1);
  const auto w = RandomBytes<int8_t>(k * n, 2);
  const auto azp = RandomBytes<uint8_t>(m, 3);
  const auto bzp = RandomBytes<int8_t>(n, 4);
  KernelTester t("MatMulInteger", 10);
  t.Input(MakeTensor<uint8_t>({b, m, k}, a)).Input(MakeTensor<int8_t>({k, n}, w));
  t.Input(MakeTensor<uint8_t>({m}, azp)).Input(MakeTensor<int8_t>({n}, bzp));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{b, m, n}));
  const auto got = ToVector<int32_t>(out[0].tensor());
  for (int64_t t_ = 0; t_ < b; ++t_) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          s += (int64_t(a[(t_ * m + i) * k + kk]) - azp[i]) * (int64_t(w[kk * n + j]) - bzp[j]);
        ASSERT_EQ(got[(t_ * m + i) * n + j], s);
      }
    }
  }
}

TEST(MatMulInteger, HandComputedScalarZeroPoint) {
  KernelTester t("MatMulInteger", 10);
  t.Input(MakeTensor<uint8_t>({2, 2}, {11, 7, 3, 4})).Input(MakeTensor<uint8_t>({2, 1}, {1, 2}));
  t.Input(MakeTensor<uint8_t>({}, {12}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  // (11-12)*1 + (7-12)*2 = -11; (3-12)*1 + (4-12)*2 = -25.
  EXPECT_EQ(ToVector<int32_t>(out[0].tensor()), (std::vector<int32_t>{-11, -25}));
}

TEST(QLinearMatMul, MatchesReferenceRequantization) {
  const int64_t m = 5, k = 50, n = 33;
  const auto a = RandomBytes<int8_t>(m * k, 5), w = RandomBytes<int8_t>(k * n, 6);
  const float sa = 0.02f, sb = 0.015f, sy = 0.5f;
  KernelTester t("QLinearMatMul", 21);
  t.Input(MakeTensor<int8_t>({m, k}, a)).Input(MakeTensor<float>({}, {sa})).Input(MakeTensor<int8_t>({}, {3}));
  t.Input(MakeTensor<int8_t>({k, n}, w)).Input(MakeTensor<float>({}, {sb})).Input(MakeTensor<int8_t>({}, {-2}));
  t.Input(MakeTensor<float>({}, {sy})).Input(MakeTensor<int8_t>({}, {1}));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto got = ToVector<int8_t>(out[0].tensor());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += (int64_t(a[i * k + kk]) - 3) * (int64_t(w[kk * n + j]) + 2);
      ASSERT_EQ(got[i * n + j], Requant(s, sa, sb, sy, 1, -128, 127)) << i << "," << j;
    }
  }
}

TEST(ConvInteger, PerChannelWeightZeroPointAndPads) {
  const int64_t c = 3, h = 9, wd = 8, m = 4;
  const auto x = RandomBytes<uint8_t>(c * h * wd, 7), w = RandomBytes<uint8_t>(m * c * 9, 8);
  const auto wzp = RandomBytes<uint8_t>(m, 9);
  KernelTester t("ConvInteger", 10);
  t.Input(MakeTensor<uint8_t>({1, c, h, wd}, x)).Input(MakeTensor<uint8_t>({m, c, 3, 3}, w));
  t.Input(MakeTensor<uint8_t>({}, {100})).Input(MakeTensor<uint8_t>({m}, wzp));
  t.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("strides", std::vector<int64_t>{2, 1});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const int64_t oh = 5, ow = 8;
  ASSERT_EQ(out[0].tensor().shape(), (Shape{1, m, oh, ow}));
  const auto got = ToVector<int32_t>(out[0].tensor());
  for (int64_t mm = 0; mm < m; ++mm) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t z = 0; z < ow; ++z) {
        int64_t s = 0;
        for (int64_t cc = 0; cc < c; ++cc) {
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kz = 0; kz < 3; ++kz) {
              const int64_t iy = y * 2 - 1 + ky, iz = z - 1 + kz;
              if (iy < 0 || iy >= h || iz < 0 || iz >= wd) continue;  // padding is the zero point: contributes 0
              s += (int64_t(x[(cc * h + iy) * wd + iz]) - 100) *
                   (int64_t(w[((mm * c + cc) * 3 + ky) * 3 + kz]) - wzp[mm]);
            }
          }
        }
        ASSERT_EQ(got[(mm * oh + y) * ow + z], s);
      }
    }
  }
}

TEST(QLinearConv, PerChannelScalesAndBias) {
  const int64_t c = 2, h = 6, m = 3;
  const auto x = RandomBytes<uint8_t>(c * h * h, 10);
  const auto w = RandomBytes<int8_t>(m * c * 4, 11);
  const std::vector<float> w_scale = {0.01f, 0.02f, 0.005f};
  const std::vector<int32_t> bias = {100, -2000, 7};
  KernelTester t("QLinearConv", 10);
  t.Input(MakeTensor<uint8_t>({1, c, h, h}, x))
      .Input(MakeTensor<float>({}, {0.05f}))
      .Input(MakeTensor<uint8_t>({}, {128}));
  t.Input(MakeTensor<int8_t>({m, c, 2, 2}, w))
      .Input(MakeTensor<float>({m}, w_scale))
      .Input(MakeTensor<int8_t>({m}, {0, 0, 0}));
  t.Input(MakeTensor<float>({}, {0.1f})).Input(MakeTensor<uint8_t>({}, {120})).Input(MakeTensor<int32_t>({m}, bias));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto got = ToVector<uint8_t>(out[0].tensor());
  const int64_t o = h - 1;
  for (int64_t mm = 0; mm < m; ++mm) {
    for (int64_t y = 0; y < o; ++y) {
      for (int64_t z = 0; z < o; ++z) {
        int64_t s = bias[mm];
        for (int64_t cc = 0; cc < c; ++cc) {
          for (int64_t ky = 0; ky < 2; ++ky) {
            for (int64_t kz = 0; kz < 2; ++kz) {
              s += (int64_t(x[(cc * h + y + ky) * h + z + kz]) - 128) * int64_t(w[((mm * c + cc) * 2 + ky) * 2 + kz]);
            }
          }
        }
        ASSERT_EQ(got[(mm * o + y) * o + z], Requant(s, 0.05f, w_scale[mm], 0.1f, 120, 0, 255));
      }
    }
  }
}

// Direct 2-D convolution of shifted values with 64-bit sums, plus bias: the oracle below.
template <typename X, typename W>
std::vector<int64_t> DirectConv2D(const std::vector<X>& x, int64_t n, int64_t c, int64_t h, int64_t wd,
                                  const std::vector<W>& w, int64_t m, int64_t kh, int64_t kw, int64_t group,
                                  int64_t stride, int64_t pad, int32_t xzp, const std::vector<int32_t>& wzp,
                                  const std::vector<int32_t>& bias, int64_t* oh, int64_t* ow, int64_t dilation = 1) {
  *oh = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1;
  *ow = (wd + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  const int64_t cg = c / group, mg = m / group;
  std::vector<int64_t> y(n * m * *oh * *ow);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t mm = 0; mm < m; ++mm) {
      const int64_t g = mm / mg;
      for (int64_t yy = 0; yy < *oh; ++yy) {
        for (int64_t xx = 0; xx < *ow; ++xx) {
          int64_t s = bias.empty() ? 0 : bias[mm];
          for (int64_t cc = 0; cc < cg; ++cc) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = yy * stride - pad + ky * dilation, ix = xx * stride - pad + kx * dilation;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                s += (int64_t(x[((b * c + g * cg + cc) * h + iy) * wd + ix]) - xzp) *
                     (int64_t(w[((mm * cg + cc) * kh + ky) * kw + kx]) - wzp[wzp.size() == 1 ? 0 : mm]);
              }
            }
          }
          y[((b * m + mm) * *oh + yy) * *ow + xx] = s;
        }
      }
    }
  }
  return y;
}

// Depthwise (group == C == M, its own direct loop) and a grouped convolution, each with
// the weights as a constant (packed at creation) and per-channel zero points and scales.
TEST(QLinearConv, DepthwiseAndGroupedWithConstantPerChannelWeights) {
  struct Case {
    int64_t c, m, group, stride, pad;
  };
  for (const Case& cs : {Case{6, 6, 6, 2, 1}, Case{8, 12, 4, 1, 1}, Case{3, 300, 1, 1, 0}}) {
    SCOPED_TRACE(::testing::Message() << "c=" << cs.c << " m=" << cs.m << " group=" << cs.group);
    const int64_t n = 2, h = 13, wd = 11, k = 3;
    const auto x = RandomBytes<int8_t>(n * cs.c * h * wd, 20);
    const auto w = RandomBytes<uint8_t>(cs.m * (cs.c / cs.group) * k * k, 21);
    const auto wzp_bytes = RandomBytes<uint8_t>(cs.m, 22);
    std::vector<int32_t> wzp(wzp_bytes.begin(), wzp_bytes.end());
    std::vector<float> w_scale(cs.m);
    std::vector<int32_t> bias(cs.m);
    for (int64_t i = 0; i < cs.m; ++i) {
      w_scale[i] = 0.001f * static_cast<float>(1 + i % 7);
      bias[i] = static_cast<int32_t>(i * 37) - 500;
    }
    KernelTester t("QLinearConv", 10);
    t.Input(MakeTensor<int8_t>({n, cs.c, h, wd}, x))
        .Input(MakeTensor<float>({}, {0.05f}))
        .Input(MakeTensor<int8_t>({}, {-7}));
    t.ConstantInput(MakeTensor<uint8_t>({cs.m, cs.c / cs.group, k, k}, w))
        .ConstantInput(MakeTensor<float>({cs.m}, w_scale))
        .ConstantInput(MakeTensor<uint8_t>({cs.m}, wzp_bytes));
    t.Input(MakeTensor<float>({}, {0.4f})).Input(MakeTensor<int8_t>({}, {3})).Input(MakeTensor<int32_t>({cs.m}, bias));
    t.Attr("group", cs.group)
        .Attr("pads", std::vector<int64_t>{cs.pad, cs.pad, cs.pad, cs.pad})
        .Attr("strides", std::vector<int64_t>{cs.stride, cs.stride});
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    int64_t oh = 0, ow = 0;
    const auto want =
        DirectConv2D(x, n, cs.c, h, wd, w, cs.m, k, k, cs.group, cs.stride, cs.pad, -7, wzp, bias, &oh, &ow);
    ASSERT_EQ(out[0].tensor().shape(), (Shape{n, cs.m, oh, ow}));
    const auto got = ToVector<int8_t>(out[0].tensor());
    for (int64_t e = 0; e < static_cast<int64_t>(want.size()); ++e) {
      const int64_t mm = (e / (oh * ow)) % cs.m;
      ASSERT_EQ(got[e], Requant(want[e], 0.05f, w_scale[mm], 0.4f, 3, -128, 127)) << e;
    }
  }
}

// Grouped (not depthwise) convolutions with few channels per group, each group's product
// far below one engine work unit but the whole batch above it: the (image, group) units run
// in parallel (forced), weights constant (packed at creation) or an input (packed per run),
// int8 and uint8 inputs, against the direct 64-bit convolution.
TEST(ConvInteger, ManySmallGroupsRunInParallelOverImagesAndGroups) {
  struct Case {
    int64_t c, m, group, stride, pad;
    bool constant_w;
  };
  for (const Case& cs : {Case{32, 32, 8, 1, 1, true}, Case{32, 32, 8, 2, 0, false}, Case{24, 48, 12, 1, 1, false},
                         Case{16, 32, 4, 1, 1, true}}) {
    SCOPED_TRACE(::testing::Message() << "c=" << cs.c << " m=" << cs.m << " group=" << cs.group
                                      << " constant=" << cs.constant_w);
    const int64_t n = 3, h = 24, wd = 23, k = 3;
    const auto x = RandomBytes<uint8_t>(n * cs.c * h * wd, 30);
    const auto w = RandomBytes<int8_t>(cs.m * (cs.c / cs.group) * k * k, 31);
    const auto wzp_bytes = RandomBytes<int8_t>(cs.m, 32);
    const std::vector<int32_t> wzp(wzp_bytes.begin(), wzp_bytes.end());
    KernelTester t("ConvInteger", 10);
    t.Input(MakeTensor<uint8_t>({n, cs.c, h, wd}, x));
    const Tensor wt = MakeTensor<int8_t>({cs.m, cs.c / cs.group, k, k}, w);
    const Tensor zt = MakeTensor<int8_t>({cs.m}, wzp_bytes);
    if (cs.constant_w) {
      t.ConstantInput(wt).Input(MakeTensor<uint8_t>({}, {131})).ConstantInput(zt);
    } else {
      t.Input(wt).Input(MakeTensor<uint8_t>({}, {131})).Input(zt);
    }
    t.Attr("group", cs.group)
        .Attr("pads", std::vector<int64_t>{cs.pad, cs.pad, cs.pad, cs.pad})
        .Attr("strides", std::vector<int64_t>{cs.stride, cs.stride});
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    int64_t oh = 0, ow = 0;
    const auto want =
        DirectConv2D(x, n, cs.c, h, wd, w, cs.m, k, k, cs.group, cs.stride, cs.pad, 131, wzp, {}, &oh, &ow);
    ASSERT_EQ(out[0].tensor().shape(), (Shape{n, cs.m, oh, ow}));
    const auto got = ToVector<int32_t>(out[0].tensor());
    for (size_t e = 0; e < want.size(); ++e) ASSERT_EQ(got[e], want[e]) << e;
  }
}

// The same split for QLinearConv (requantised per channel, bias), int8 input.
TEST(QLinearConv, ManySmallGroupsRunInParallelOverImagesAndGroups) {
  const int64_t n = 2, c = 32, m = 64, group = 16, h = 20, wd = 21, k = 3;
  const auto x = RandomBytes<int8_t>(n * c * h * wd, 40);
  const auto w = RandomBytes<int8_t>(m * (c / group) * k * k, 41);
  std::vector<float> w_scale(m);
  std::vector<int32_t> bias(m), wzp(m, 0);
  for (int64_t i = 0; i < m; ++i) {
    w_scale[i] = 0.002f * static_cast<float>(1 + i % 5);
    bias[i] = static_cast<int32_t>(i * 53) - 1500;
  }
  KernelTester t("QLinearConv", 10);
  t.Input(MakeTensor<int8_t>({n, c, h, wd}, x)).Input(MakeTensor<float>({}, {0.05f}));
  t.Input(MakeTensor<int8_t>({}, {5}));
  t.ConstantInput(MakeTensor<int8_t>({m, c / group, k, k}, w)).ConstantInput(MakeTensor<float>({m}, w_scale));
  t.ConstantInput(MakeTensor<int8_t>({}, {0}));
  t.Input(MakeTensor<float>({}, {0.3f})).Input(MakeTensor<uint8_t>({}, {128})).Input(MakeTensor<int32_t>({m}, bias));
  t.Attr("group", group).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  int64_t oh = 0, ow = 0;
  const auto want = DirectConv2D(x, n, c, h, wd, w, m, k, k, group, 1, 1, 5, wzp, bias, &oh, &ow);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{n, m, oh, ow}));
  const auto got = ToVector<uint8_t>(out[0].tensor());
  for (int64_t e = 0; e < static_cast<int64_t>(want.size()); ++e) {
    const int64_t mm = (e / (oh * ow)) % m;
    ASSERT_EQ(got[e], Requant(want[e], 0.05f, w_scale[mm], 0.3f, 128, 0, 255)) << e;
  }
}

// The GEMM path's shapes (output channels as rows, input columns packed per block) and the
// direct depthwise path, against the direct 64-bit convolution: uint8/int8 activations and
// weights in every combination, per-channel weight zero points and scales, padding with
// the input zero point, strides, dilations, groups with odd channel counts, 1x1 stride 1
// (columns read in place) and strided, rows wide enough for the grid (packed from padded
// planes split by stride phase, on the phase-width grid) and too narrow (im2col), K large enough for narrow spatial
// blocks, more channels than one channel block, more positions than one spatial block, depthwise 3x3 and 5x5. Weights
// constant (packed at creation) or an input (packed per run).
struct ConvCase {
  const char* name;
  int64_t n, c, h, w, m, k, group, stride, pad, dilation;
};

class QLinearConvShapes : public ::testing::TestWithParam<std::tuple<ConvCase, int>> {};

template <typename X, typename W, typename Y>
void CheckQLinearConv(const ConvCase& cs, bool constant_w, uint32_t seed) {
  const int64_t cg = cs.c / cs.group;
  const auto x = RandomBytes<X>(cs.n * cs.c * cs.h * cs.w, seed);
  const auto w = RandomBytes<W>(cs.m * cg * cs.k * cs.k, seed + 1);
  const auto wzp_bytes = RandomBytes<W>(cs.m, seed + 2);
  const std::vector<int32_t> wzp(wzp_bytes.begin(), wzp_bytes.end());
  const int32_t xzp = std::is_signed<X>::value ? -5 : 131;
  const int32_t yzp = std::is_signed<Y>::value ? 4 : 120;
  std::vector<float> w_scale(cs.m);
  std::vector<int32_t> bias(cs.m);
  for (int64_t i = 0; i < cs.m; ++i) {
    w_scale[i] = 0.0007f * static_cast<float>(1 + i % 9);
    bias[i] = static_cast<int32_t>(i * 211 % 4001) - 2000;
  }
  int64_t oh = 0, ow = 0;
  const auto want = DirectConv2D(x, cs.n, cs.c, cs.h, cs.w, w, cs.m, cs.k, cs.k, cs.group, cs.stride, cs.pad, xzp, wzp,
                                 bias, &oh, &ow, cs.dilation);
  // y_scale maps the accumulators' spread (per channel, after its weight scale) to about 40
  // steps, so that most outputs land inside the 8-bit range.
  double spread = 0;
  for (size_t e = 0; e < want.size(); ++e) {
    const double v = static_cast<double>(want[e]) * w_scale[(e / (oh * ow)) % cs.m];
    spread += v * v;
  }
  const float x_scale = 0.05f;
  const float y_scale = static_cast<float>(x_scale * std::sqrt(spread / static_cast<double>(want.size())) / 40.0);
  KernelTester t("QLinearConv", 10);
  t.Input(MakeTensor<X>({cs.n, cs.c, cs.h, cs.w}, x))
      .Input(MakeTensor<float>({}, {x_scale}))
      .Input(MakeTensor<X>({}, {static_cast<X>(xzp)}));
  const Tensor wt = MakeTensor<W>({cs.m, cg, cs.k, cs.k}, w), zt = MakeTensor<W>({cs.m}, wzp_bytes);
  if (constant_w) {
    t.ConstantInput(wt).ConstantInput(MakeTensor<float>({cs.m}, w_scale)).ConstantInput(zt);
  } else {
    t.Input(wt).Input(MakeTensor<float>({cs.m}, w_scale)).Input(zt);
  }
  t.Input(MakeTensor<float>({}, {y_scale}))
      .Input(MakeTensor<Y>({}, {static_cast<Y>(yzp)}))
      .Input(MakeTensor<int32_t>({cs.m}, bias));
  t.Attr("group", cs.group)
      .Attr("pads", std::vector<int64_t>{cs.pad, cs.pad, cs.pad, cs.pad})
      .Attr("strides", std::vector<int64_t>{cs.stride, cs.stride})
      .Attr("dilations", std::vector<int64_t>{cs.dilation, cs.dilation});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{cs.n, cs.m, oh, ow}));
  const auto got = ToVector<Y>(out[0].tensor());
  const int lo = std::is_signed<Y>::value ? -128 : 0, hi = std::is_signed<Y>::value ? 127 : 255;
  int64_t unsaturated = 0;
  for (int64_t e = 0; e < static_cast<int64_t>(want.size()); ++e) {
    const int64_t mm = (e / (oh * ow)) % cs.m;
    const int64_t expected = Requant(want[e], x_scale, w_scale[mm], y_scale, yzp, lo, hi);
    unsaturated += expected != lo && expected != hi;
    ASSERT_EQ(int64_t{got[e]}, expected) << e;
  }
  EXPECT_GT(unsaturated * 2, static_cast<int64_t>(want.size()));  // the values say something
}

std::string ConvCaseName(const ::testing::TestParamInfo<std::tuple<ConvCase, int>>& info) {
  static const char* kTypes[] = {"u8s8_to_u8", "s8s8_to_s8", "u8u8_to_s8", "s8u8_to_u8"};
  return std::string(std::get<0>(info.param).name) + "_" + kTypes[std::get<1>(info.param)];
}

TEST_P(QLinearConvShapes, MatchesDirectConvolution) {
  const auto& [cs, combination] = GetParam();
  SCOPED_TRACE(cs.name);
  for (const bool constant_w : {true, false}) {
    SCOPED_TRACE(constant_w ? "constant W" : "W as input");
    switch (combination) {
      case 0:
        CheckQLinearConv<uint8_t, int8_t, uint8_t>(cs, constant_w, 60);
        break;
      case 1:
        CheckQLinearConv<int8_t, int8_t, int8_t>(cs, constant_w, 61);
        break;
      case 2:
        CheckQLinearConv<uint8_t, uint8_t, int8_t>(cs, constant_w, 62);
        break;
      default:
        CheckQLinearConv<int8_t, uint8_t, uint8_t>(cs, constant_w, 63);
        break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Conv, QLinearConvShapes,
    ::testing::Combine(::testing::Values(ConvCase{"odd_channels_3x3_pad", 2, 5, 9, 7, 13, 3, 1, 1, 1, 1},
                                         ConvCase{"pointwise_in_place", 2, 7, 19, 17, 9, 1, 1, 1, 0, 1},
                                         ConvCase{"pointwise_stride2", 1, 6, 9, 11, 5, 1, 1, 2, 0, 1},
                                         ConvCase{"strided_dilated", 1, 4, 15, 14, 11, 3, 1, 2, 2, 2},
                                         ConvCase{"large_k_many_blocks", 1, 70, 13, 12, 150, 3, 1, 1, 1, 1},
                                         ConvCase{"groups_odd_channels", 2, 9, 8, 10, 15, 3, 3, 1, 1, 1},
                                         ConvCase{"stride1_padded_grid", 2, 5, 30, 33, 13, 3, 1, 1, 1, 1},
                                         ConvCase{"stride1_dilated_padded_grid", 1, 6, 20, 40, 9, 3, 1, 1, 2, 2},
                                         ConvCase{"groups_padded_grid", 1, 6, 12, 24, 9, 3, 3, 1, 1, 1},
                                         // 7x7 plane, 3x3 pad 1 (ResNet's last stage): the
                                         // padded grid, 64 channels (an edge tile of rows).
                                         ConvCase{"small_plane_padded_grid_64_channels", 1, 40, 7, 7, 64, 3, 1, 1, 1,
                                                  1},
                                         // K = 2160: grid blocks of 32 columns, the second starting
                                         // inside a grid row (an output run of 2 bytes).
                                         ConvCase{"small_plane_grid_block_mid_row", 1, 240, 7, 7, 20, 3, 1, 1, 1, 1},
                                         // 5x5 pad 2 on a 5-wide plane: the grid's extra columns
                                         // would be most of a row, so stride 1 takes im2col.
                                         ConvCase{"stride1_im2col_wide_kernel", 2, 6, 6, 5, 13, 5, 1, 1, 2, 1},
                                         // Strided (phase planes on the phase-width grid): ResNet's
                                         // 3x3 stride 2 pad 1, its 7x7 stride 2 pad 3 stem, stride 3
                                         // over a 2x2 kernel, groups, and dilation 3 at stride 2
                                         // (taps alternate between phases 0 and 1).
                                         ConvCase{"stride2_3x3", 1, 6, 30, 31, 13, 3, 1, 2, 1, 1},
                                         ConvCase{"stride2_7x7_pad3", 1, 3, 40, 38, 16, 7, 1, 2, 3, 1},
                                         ConvCase{"stride3_2x2", 2, 5, 20, 23, 7, 2, 1, 3, 0, 1},
                                         ConvCase{"groups_stride2", 2, 6, 14, 16, 9, 3, 3, 2, 1, 1},
                                         ConvCase{"stride2_dilation3_mixed_phases", 1, 5, 25, 26, 11, 3, 1, 2, 3, 3},
                                         // 5x5 stride 2 pad 2 on a 6-wide plane (3 outputs a row):
                                         // the grid's extra columns would be 2 of 5, so im2col.
                                         ConvCase{"stride2_im2col_small_plane", 2, 6, 6, 6, 13, 5, 1, 2, 2, 1},
                                         ConvCase{"depthwise_3x3", 2, 13, 10, 9, 13, 3, 13, 1, 1, 1},
                                         ConvCase{"depthwise_5x5_stride2_dilated", 1, 7, 17, 16, 7, 5, 7, 2, 3, 2}),
                       ::testing::Values(0, 1, 2, 3)),
    ConvCaseName);

// Symmetric int8 weights (constant, zero points 0, group 1: what quantize_static writes)
// take SymmetricConv, output positions as the engine's rows read in place from an NHWC
// copy of X, where the best igemm kernel has indirect tiles (VNNI's bytes, AVX2's 16-bit
// pairs), the input channels are a multiple of 4 and the convolution is not 1x1 stride 1
// unpadded (read in place by the other path); otherwise (ISA capped to portable, 13, 6 or 3
// channels, 1x1 in place) the channels-as-rows path. Each case runs with W constant (that
// path) and W as an input (the channels-as-rows path, packed per run): both bit-identical to the direct convolution
// requantized as the reference does, for every participant count. Shapes: 1x1 in place
// and strided, 3x3 stride 1 and 2 with padding, ResNet's 7x7 / 14x14 / 56x56 planes, a
// 7x7 stride-2 stem on 3 channels, dilation, channel counts that are not multiples of the
// tile (and of the byte quad / 16-bit pair: 13 and 6 channels), more output channels than
// one column block, batch 2.
struct SymmetricCase {
  const char* name;
  int64_t n, c, h, w, m, k, stride, pad, dilation;
};

class SymmetricQLinearConv : public ::testing::TestWithParam<std::tuple<SymmetricCase, int>> {};

// The labels of the regions a two-participant run opened (the parallel path forced).
std::vector<std::string> RegionLabels(KernelTester& t) {
  t.Tuning(param::kMinimumTasks, int64_t{1});
  auto details = t.RunWithDetails(2);
  EXPECT_TRUE(details.ok()) << details.status().ToString();
  std::vector<std::string> labels;
  if (details.ok()) {
    for (const auto& r : details->regions) labels.emplace_back(r.label);
  }
  return labels;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

template <typename X, typename Y>
void CheckSymmetricConv(const SymmetricCase& cs, bool per_channel_zero_point, uint32_t seed) {
  const auto x = RandomBytes<X>(cs.n * cs.c * cs.h * cs.w, seed);
  const auto w = RandomBytes<int8_t>(cs.m * cs.c * cs.k * cs.k, seed + 1);
  const int32_t xzp = std::is_signed<X>::value ? -9 : 119;
  const int32_t yzp = std::is_signed<Y>::value ? -3 : 125;
  std::vector<float> w_scale(cs.m);
  std::vector<int32_t> bias(cs.m);
  for (int64_t i = 0; i < cs.m; ++i) {
    w_scale[i] = 0.0011f * static_cast<float>(1 + i % 7);
    bias[i] = static_cast<int32_t>(i * 307 % 5001) - 2500;
  }
  int64_t oh = 0, ow = 0;
  const auto want = DirectConv2D(x, cs.n, cs.c, cs.h, cs.w, w, cs.m, cs.k, cs.k, 1, cs.stride, cs.pad, xzp, {0}, bias,
                                 &oh, &ow, cs.dilation);
  double spread = 0;
  for (size_t e = 0; e < want.size(); ++e) {
    const double v = static_cast<double>(want[e]) * w_scale[(e / (oh * ow)) % cs.m];
    spread += v * v;
  }
  const float x_scale = 0.04f;
  const float y_scale = static_cast<float>(x_scale * std::sqrt(spread / static_cast<double>(want.size())) / 40.0);
  const Tensor wt = MakeTensor<int8_t>({cs.m, cs.c, cs.k, cs.k}, w);
  const Tensor zt =
      per_channel_zero_point ? MakeTensor<int8_t>({cs.m}, std::vector<int8_t>(cs.m, 0)) : MakeTensor<int8_t>({}, {0});
  const auto make = [&](bool constant_w) {
    auto t = std::make_unique<KernelTester>("QLinearConv", 10);
    t->Input(MakeTensor<X>({cs.n, cs.c, cs.h, cs.w}, x))
        .Input(MakeTensor<float>({}, {x_scale}))
        .Input(MakeTensor<X>({}, {static_cast<X>(xzp)}));
    if (constant_w) {
      t->ConstantInput(wt).ConstantInput(MakeTensor<float>({cs.m}, w_scale)).ConstantInput(zt);
    } else {
      t->Input(wt).Input(MakeTensor<float>({cs.m}, w_scale)).Input(zt);
    }
    t->Input(MakeTensor<float>({}, {y_scale}))
        .Input(MakeTensor<Y>({}, {static_cast<Y>(yzp)}))
        .Input(MakeTensor<int32_t>({cs.m}, bias));
    t->Attr("pads", std::vector<int64_t>{cs.pad, cs.pad, cs.pad, cs.pad})
        .Attr("strides", std::vector<int64_t>{cs.stride, cs.stride})
        .Attr("dilations", std::vector<int64_t>{cs.dilation, cs.dilation});
    return t;
  };
  auto symmetric = make(true), per_run = make(false);
  const auto got = RunAllCounts(*symmetric), base = RunAllCounts(*per_run);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(base.size(), 1u);
  ASSERT_EQ(got[0].tensor().shape(), (Shape{cs.n, cs.m, oh, ow}));
  ExpectIdentical(got[0], base[0], "constant symmetric W vs W as an input");
  auto three = symmetric->Run(3);  // RunAllCounts ran 1, 2, 4 and 8 participants
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  ExpectIdentical(three->at(0), got[0], "3 participants vs serial");
  const auto y = ToVector<Y>(got[0].tensor());
  const int lo = std::is_signed<Y>::value ? -128 : 0, hi = std::is_signed<Y>::value ? 127 : 255;
  int64_t unsaturated = 0;
  for (int64_t e = 0; e < static_cast<int64_t>(want.size()); ++e) {
    const int64_t expected = Requant(want[e], x_scale, w_scale[(e / (oh * ow)) % cs.m], y_scale, yzp, lo, hi);
    unsaturated += expected != lo && expected != hi;
    ASSERT_EQ(int64_t{y[e]}, expected) << e;
  }
  EXPECT_GT(unsaturated * 2, static_cast<int64_t>(want.size()));
  // Which path ran: SymmetricConv opens the engine's indirect region, the channels-as-rows
  // path its own tiles region (for products large enough to split, >= 2^18 multiply-adds).
  if (cs.n * oh * ow * cs.m * cs.c * cs.k * cs.k >= (int64_t{1} << 18)) {
    const auto labels = RegionLabels(*symmetric);
    const bool in_place = cs.k == 1 && cs.stride == 1 && cs.pad == 0;  // read in place: not taken
    if (igemm::IgemmIndirectAvailable() && cs.c % 4 == 0 && !in_place) {
      EXPECT_TRUE(Contains(labels, "igemm.indirect_blocks") && !Contains(labels, "qconv.tiles"));
    } else {
      EXPECT_TRUE(Contains(labels, "qconv.tiles") && !Contains(labels, "igemm.indirect_blocks"));
    }
    EXPECT_TRUE(Contains(RegionLabels(*per_run), "qconv.tiles"));
    // The tuning parameter turns the path off for a constant W.
    auto off = make(true);
    off->Tuning("algorithm.symmetric_indirect", false);
    const auto off_labels = RegionLabels(*off);
    EXPECT_TRUE(Contains(off_labels, "qconv.tiles") && !Contains(off_labels, "igemm.indirect_blocks"));
  }
}

std::string SymmetricCaseName(const ::testing::TestParamInfo<std::tuple<SymmetricCase, int>>& info) {
  static const char* kTypes[] = {"u8_to_u8_scalar_zp", "s8_to_s8_per_channel_zp", "u8_to_s8_per_channel_zp",
                                 "s8_to_u8_scalar_zp"};
  return std::string(std::get<0>(info.param).name) + "_" + kTypes[std::get<1>(info.param)];
}

TEST_P(SymmetricQLinearConv, MatchesDirectConvolutionAndChannelsAsRowsPath) {
  const auto& [cs, combination] = GetParam();
  switch (combination) {
    case 0:
      CheckSymmetricConv<uint8_t, uint8_t>(cs, false, 70);
      break;
    case 1:
      CheckSymmetricConv<int8_t, int8_t>(cs, true, 71);
      break;
    case 2:
      CheckSymmetricConv<uint8_t, int8_t>(cs, true, 72);
      break;
    default:
      CheckSymmetricConv<int8_t, uint8_t>(cs, false, 73);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Conv, SymmetricQLinearConv,
    ::testing::Combine(::testing::Values(SymmetricCase{"pointwise_in_place_batch2", 2, 32, 9, 9, 48, 1, 1, 0, 1},
                                         SymmetricCase{"pointwise_stride2", 1, 24, 14, 14, 40, 1, 2, 0, 1},
                                         // Odd planes (the last row and column read), and
                                         // padded (positions in the padding: no subsampling).
                                         SymmetricCase{"pointwise_stride2_odd_plane", 2, 32, 15, 13, 24, 1, 2, 0, 1},
                                         SymmetricCase{"pointwise_stride2_padded", 1, 16, 9, 9, 20, 1, 2, 1, 1},
                                         SymmetricCase{"plane_7x7_3x3_pad1", 1, 64, 7, 7, 72, 3, 1, 1, 1},
                                         SymmetricCase{"plane_14x14_3x3_pad1", 1, 32, 14, 14, 40, 3, 1, 1, 1},
                                         SymmetricCase{"plane_56x56_3x3_pad1", 1, 8, 56, 56, 20, 3, 1, 1, 1},
                                         SymmetricCase{"stride2_3x3_pad1_batch2", 2, 16, 14, 14, 48, 3, 2, 1, 1},
                                         SymmetricCase{"unpadded_3x3", 1, 16, 9, 10, 24, 3, 1, 0, 1},
                                         SymmetricCase{"odd_channels_13", 2, 13, 10, 9, 19, 3, 1, 1, 1},
                                         SymmetricCase{"channels_6", 1, 6, 11, 12, 33, 3, 1, 1, 1},
                                         SymmetricCase{"stem_7x7_stride2_pad3", 1, 3, 30, 30, 16, 7, 2, 3, 1},
                                         SymmetricCase{"dilated_2", 1, 12, 15, 14, 17, 3, 1, 2, 2},
                                         SymmetricCase{"channels_past_column_block", 1, 96, 7, 7, 300, 3, 1, 1, 1}),
                       ::testing::Values(0, 1, 2, 3)),
    SymmetricCaseName);

// ConvInteger with symmetric int8 weights and no w_zero_point input (SymmetricConv's int32
// output), and a 1-D QLinearConv: bit-identical to the same node with W as an input.
TEST(ConvInteger, SymmetricWeightsWithoutZeroPointMatchDirectConvolution) {
  const int64_t n = 2, c = 20, h = 11, wd = 10, m = 37, k = 3;
  const auto x = RandomBytes<uint8_t>(n * c * h * wd, 80);
  const auto w = RandomBytes<int8_t>(m * c * k * k, 81);
  KernelTester t("ConvInteger", 10);
  t.Input(MakeTensor<uint8_t>({n, c, h, wd}, x)).ConstantInput(MakeTensor<int8_t>({m, c, k, k}, w));
  t.Input(MakeTensor<uint8_t>({}, {77}));
  t.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("strides", std::vector<int64_t>{2, 2});
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  int64_t oh = 0, ow = 0;
  const auto want = DirectConv2D(x, n, c, h, wd, w, m, k, k, 1, 2, 1, 77, {0}, {}, &oh, &ow);
  ASSERT_EQ(out[0].tensor().shape(), (Shape{n, m, oh, ow}));
  const auto got = ToVector<int32_t>(out[0].tensor());
  for (size_t e = 0; e < want.size(); ++e) ASSERT_EQ(int64_t{got[e]}, want[e]) << e;
}

TEST(QLinearConv, SymmetricWeightsOneDimensionalMatchesWeightsAsInput) {
  const int64_t n = 2, c = 24, len = 50, m = 70, k = 5;
  const auto x = RandomBytes<uint8_t>(n * c * len, 90);
  const auto w = RandomBytes<int8_t>(m * c * k, 91);
  std::vector<float> w_scale(m, 0.002f);
  std::vector<Value> outs;
  for (const bool constant_w : {true, false}) {
    KernelTester t("QLinearConv", 10);
    t.Input(MakeTensor<uint8_t>({n, c, len}, x)).Input(MakeTensor<float>({}, {0.05f}));
    t.Input(MakeTensor<uint8_t>({}, {128}));
    const Tensor wt = MakeTensor<int8_t>({m, c, k}, w);
    if (constant_w) {
      t.ConstantInput(wt).ConstantInput(MakeTensor<float>({m}, w_scale)).ConstantInput(MakeTensor<int8_t>({}, {0}));
    } else {
      t.Input(wt).Input(MakeTensor<float>({m}, w_scale)).Input(MakeTensor<int8_t>({}, {0}));
    }
    t.Input(MakeTensor<float>({}, {0.4f})).Input(MakeTensor<uint8_t>({}, {128}));
    t.Attr("pads", std::vector<int64_t>{2, 1}).Attr("strides", std::vector<int64_t>{2});
    auto out = RunAllCounts(t);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].tensor().shape(), (Shape{n, m, 25}));
    outs.push_back(out[0]);
  }
  ExpectIdentical(outs[0], outs[1], "1-D symmetric constant W vs W as an input");
  const auto y = ToVector<uint8_t>(outs[0].tensor());
  EXPECT_GT(std::count_if(y.begin(), y.end(), [](uint8_t v) { return v != 0 && v != 255; }),
            static_cast<int64_t>(y.size() / 2));
}

// A constant B packed at creation, several row and column blocks of the engine.
TEST(MatMulInteger, ConstantWeightsManyBlocks) {
  const int64_t m = 130, k = 77, n = 300;
  const auto a = RandomBytes<int8_t>(m * k, 30);
  const auto w = RandomBytes<int8_t>(k * n, 31);
  const auto bzp = RandomBytes<int8_t>(n, 32);
  KernelTester t("MatMulInteger", 10);
  t.Input(MakeTensor<int8_t>({m, k}, a)).ConstantInput(MakeTensor<int8_t>({k, n}, w));
  t.Input(MakeTensor<int8_t>({}, {-128})).ConstantInput(MakeTensor<int8_t>({n}, bzp));
  auto out = RunAllCounts(t);
  ASSERT_EQ(out.size(), 1u);
  const auto got = ToVector<int32_t>(out[0].tensor());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += (int64_t(a[i * k + kk]) + 128) * (int64_t(w[kk * n + j]) - bzp[j]);
      ASSERT_EQ(got[i * n + j], s) << i << "," << j;
    }
  }
}

TEST(QLinearConv, BadBiasAndWeightTypeAreInvalidArgument) {
  const auto make = [](Tensor w, Tensor bias) {
    auto t = std::make_unique<KernelTester>("QLinearConv", 10);
    t->Input(MakeTensor<uint8_t>({1, 2, 3, 3}, std::vector<uint8_t>(18, 1)))
        .Input(MakeTensor<float>({}, {0.1f}))
        .Input(MakeTensor<uint8_t>({}, {0}));
    t->Input(std::move(w)).Input(MakeTensor<float>({}, {0.1f})).Input(MakeTensor<uint8_t>({}, {0}));
    t->Input(MakeTensor<float>({}, {0.1f})).Input(MakeTensor<uint8_t>({}, {0})).Input(std::move(bias));
    return t;
  };
  auto bias = make(MakeTensor<uint8_t>({3, 2, 1, 1}, std::vector<uint8_t>(6, 1)), MakeTensor<int32_t>({2}, {1, 2}));
  const auto bias_status = bias->Run(1).status();
  EXPECT_EQ(bias_status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bias_status.message().find("QLinearConv"), std::string::npos) << bias_status.message();
  auto type = make(MakeTensor<float>({3, 2, 1, 1}, std::vector<float>(6, 1.0f)), MakeTensor<int32_t>({3}, {1, 2, 3}));
  EXPECT_NE(type->Run(1).status().code(), StatusCode::kOk);
}

TEST(Quantized, BadInputsAreInvalidArgument) {
  KernelTester type("MatMulInteger", 10);
  type.Input(MakeTensor<float>({1, 1}, {1.0f})).Input(MakeTensor<uint8_t>({1, 1}, {1}));
  EXPECT_EQ(type.Run(1).status().code(), StatusCode::kNotImplemented);  // no float path is registered
  KernelTester zp("MatMulInteger", 10);
  zp.Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}));
  zp.Input(MakeTensor<uint8_t>({3}, {1, 2, 3}));
  EXPECT_EQ(zp.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// The operand checks every integer matmul shares (ReadIntegerMatMulOperands): each bad
// operand is InvalidArgument naming the op, the node, the input and its type and shape.
struct BadOperandCase {
  std::string name;
  std::string op;
  std::string domain;
  int version;
  std::function<void(KernelTester&)> inputs;
  std::vector<std::string> message_parts;  // besides the op and the node name
};

class BadIntegerMatMulOperands : public ::testing::TestWithParam<BadOperandCase> {};

TEST_P(BadIntegerMatMulOperands, AreInvalidArgumentNamingOpNodeAndInput) {
  const BadOperandCase& c = GetParam();
  KernelTester t(c.op, c.version, c.domain);
  t.NodeName("mm7");
  c.inputs(t);
  const Status s = t.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  for (const std::string& part : std::vector<std::string>{c.op, "mm7"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' not in: " << s.message();
  }
  for (const std::string& part : c.message_parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' not in: " << s.message();
  }
}

// A is uint8 [2, 2] unless a case says otherwise; MatMulIntegerToFloat gets scales 0.5.
void TwoByTwo(KernelTester& t, Tensor b) { t.Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})).Input(std::move(b)); }
void ToFloatOperands(KernelTester& t, Tensor a_zero_point) {
  TwoByTwo(t, MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}));
  t.Input(MakeTensor<float>({}, {0.5f})).Input(MakeTensor<float>({}, {0.5f})).Input(std::move(a_zero_point));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadIntegerMatMulOperands,
    ::testing::Values(BadOperandCase{"FloatB",
                                     "MatMulInteger",
                                     "",
                                     10,
                                     [](KernelTester& t) {
                                       TwoByTwo(t, MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
                                     },
                                     {"B must be int8 or uint8", "float[2,2]"}},
                      BadOperandCase{"InnerDimensionsDiffer",
                                     "MatMulInteger",
                                     "",
                                     10,
                                     [](KernelTester& t) {
                                       TwoByTwo(t, MakeTensor<uint8_t>({3, 1}, {1, 2, 3}));
                                     },
                                     {"inner dimensions differ", "[2,2]", "[3,1]"}},
                      BadOperandCase{"BZeroPointCount",
                                     "MatMulInteger",
                                     "",
                                     10,
                                     [](KernelTester& t) {
                                       TwoByTwo(t, MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}));
                                       t.MissingInput().Input(MakeTensor<uint8_t>({3}, {1, 2, 3}));
                                     },
                                     {"b_zero_point", "uint8[3]"}},
                      BadOperandCase{"FloatAZeroPoint",
                                     "MatMulInteger",
                                     "",
                                     10,
                                     [](KernelTester& t) {
                                       TwoByTwo(t, MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}));
                                       t.Input(MakeTensor<float>({}, {1.0f}));
                                     },
                                     {"a_zero_point", "unsupported type", "float"}},
                      BadOperandCase{"QLinearFloatB",
                                     "QLinearMatMul",
                                     "",
                                     10,
                                     [](KernelTester& t) {
                                       t.Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}))
                                           .Input(MakeTensor<float>({}, {0.5f}))
                                           .Input(MakeTensor<uint8_t>({}, {0}));
                                       t.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4}))
                                           .Input(MakeTensor<float>({}, {0.5f}))
                                           .Input(MakeTensor<uint8_t>({}, {0}));
                                       t.Input(MakeTensor<float>({}, {0.5f})).Input(MakeTensor<uint8_t>({}, {0}));
                                     },
                                     {"b must be int8 or uint8", "float[2,2]"}},
                      BadOperandCase{"PerRowAZeroPointToFloat",
                                     "MatMulIntegerToFloat",
                                     "com.microsoft",
                                     1,
                                     [](KernelTester& t) {
                                       ToFloatOperands(t, MakeTensor<uint8_t>({2}, {1, 2}));
                                     },
                                     {"a_zero_point", "per-tensor", "uint8[2]"}},
                      BadOperandCase{"AZeroPointOfOtherTypeToFloat",
                                     "MatMulIntegerToFloat",
                                     "com.microsoft",
                                     1,
                                     [](KernelTester& t) { ToFloatOperands(t, MakeTensor<int8_t>({}, {1})); },
                                     {"a_zero_point", "int8[]", "must have A's type uint8"}},
                      BadOperandCase{"FloatBToFloat",
                                     "MatMulIntegerToFloat",
                                     "com.microsoft",
                                     1,
                                     [](KernelTester& t) {
                                       TwoByTwo(t, MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
                                       t.Input(MakeTensor<float>({}, {0.5f})).Input(MakeTensor<float>({}, {0.5f}));
                                     },
                                     {"B must be int8 or uint8", "float[2,2]"}}),
    [](const ::testing::TestParamInfo<BadOperandCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnx_light
