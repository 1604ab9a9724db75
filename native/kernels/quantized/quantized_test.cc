// Integer matmuls and convolutions against naive references with 64-bit accumulation;
// bit-identical for 1, 2, 4 and 8 participants.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

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

TEST(Quantized, BadInputsAreInvalidArgument) {
  KernelTester type("MatMulInteger", 10);
  type.Input(MakeTensor<float>({1, 1}, {1.0f})).Input(MakeTensor<uint8_t>({1, 1}, {1}));
  EXPECT_EQ(type.Run(1).status().code(), StatusCode::kNotImplemented);  // no float path is registered
  KernelTester zp("MatMulInteger", 10);
  zp.Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4}));
  zp.Input(MakeTensor<uint8_t>({3}, {1, 2, 3}));
  EXPECT_EQ(zp.Run(1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_light
