// ai.onnx_light NchwcDepthwiseConv and NchwcSqueezeExcitation (README.md's contract):
//  - every ISA variant of the per-block loops (nchwc_depthwise.h) gives the portable
//    variant's bits and the scalar definition's, on the unrolled 3x3 / 5x5 paths, the
//    general loop (other kernels, strides, dilations, pads), rows that end in a partial
//    run (overlapping runs), rows narrower than a run, and planes narrower than a kernel;
//  - the registered ops on a blocked copy of X (made here, not by ReorderInput) equal the
//    NCHW kernels (com.microsoft FusedConv with group = C, ai.onnx_light SqueezeExcitation)
//    within float tolerance, for MobileNetV3's and EfficientNet's channel counts and planes,
//    every FusedConv activation, batch 2; pad lanes are +0; every participant count gives
//    the serial bits (DeterministicOutputs, and 3 participants);
//  - bad inputs give errors naming the op, the node and the shapes.
// The _avx2 and _portable targets run the same tests with the ISA capped, so that the
// registered kernels take those loops on any host.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/nchwc/nchwc_depthwise.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using nchwc::kBlock;
using testing::KernelTester;
using testing::MakeTensor;
using testing::RandomFloats;
using testing::ToVector;

int64_t Blocks(int64_t c) { return (c + kBlock - 1) / kBlock; }

// NCHW [n, c, h, w] -> [n, Cb, h, w, 16], pad lanes 0.
std::vector<float> ToBlocked(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<float> b(static_cast<size_t>(n * Blocks(c) * h * w * kBlock), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p)
        b[((i * Blocks(c) + ch / kBlock) * h * w + p) * kBlock + ch % kBlock] = x[(i * c + ch) * h * w + p];
  return b;
}

// Checks blocked `got` against NCHW `want` (|error| <= tolerance) and that pad lanes are +0.
void ExpectBlockedNear(const std::vector<float>& got, const std::vector<float>& want, int64_t n, int64_t c, int64_t h,
                       int64_t w, double abs_tol, double rel_tol, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<size_t>(n * Blocks(c) * h * w * kBlock)) << what;
  int failures = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < Blocks(c) * kBlock; ++ch)
      for (int64_t p = 0; p < h * w; ++p) {
        const float g = got[((i * Blocks(c) + ch / kBlock) * h * w + p) * kBlock + ch % kBlock];
        if (ch >= c) {
          uint32_t bits;
          std::memcpy(&bits, &g, 4);
          if (bits != 0 && ++failures < 5) ADD_FAILURE() << what << ": pad lane " << ch << " at " << p << " is " << g;
          continue;
        }
        const float e = want[(i * c + ch) * h * w + p];
        if (!(std::fabs(g - e) <= abs_tol + rel_tol * std::fabs(e)) && ++failures < 5) {
          ADD_FAILURE() << what << ": image " << i << " channel " << ch << " position " << p << ": " << g << " vs "
                        << e;
        }
      }
  EXPECT_EQ(failures, 0) << what;
}

// --- The per-block loops: every variant against the portable one, bit for bit ---

struct RowCase {
  const char* name;
  nchwc::DepthwiseGeometry g;  // out_h / out_w derived below from the bottom/right pads
  int64_t pad_bottom, pad_right;
};

nchwc::DepthwiseGeometry Resolved(const RowCase& c) {
  nchwc::DepthwiseGeometry g = c.g;
  g.out_h = (g.in_h + g.pad_top + c.pad_bottom - ((g.kernel_h - 1) * g.dilation_h + 1)) / g.stride_h + 1;
  g.out_w = (g.in_w + g.pad_left + c.pad_right - ((g.kernel_w - 1) * g.dilation_w + 1)) / g.stride_w + 1;
  return g;
}

//                in_h in_w out kh kw sh sw dh dw pt pl   pb pr
const RowCase kRowCases[] = {
    {"k3_s1_rows_of_37", {9, 37, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1}, 1, 1},
    {"k3_s2_rows_of_18", {10, 37, 0, 0, 3, 3, 2, 2, 1, 1, 1, 1}, 1, 1},
    {"k5_s1_rows_of_14", {14, 14, 0, 0, 5, 5, 1, 1, 1, 1, 2, 2}, 2, 2},
    {"k5_s2_rows_of_7", {14, 14, 0, 0, 5, 5, 2, 2, 1, 1, 1, 1}, 2, 2},
    {"k5_s1_plane_smaller_than_kernel", {3, 2, 0, 0, 5, 5, 1, 1, 1, 1, 2, 2}, 2, 2},
    {"k3x5_dilated_strides_1_3", {11, 23, 0, 0, 3, 5, 1, 3, 2, 2, 2, 3}, 1, 0},
    {"k7_s1_no_pads", {12, 20, 0, 0, 7, 7, 1, 1, 1, 1, 0, 0}, 0, 0},
    {"k1_s2", {6, 9, 0, 0, 1, 1, 2, 2, 1, 1, 0, 0}, 0, 0},
    {"k3_s1_rows_of_3", {4, 3, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1}, 1, 1},
    {"k5_s2_right_pad_only_rows_of_8", {5, 17, 0, 0, 5, 5, 2, 2, 1, 1, 0, 0}, 2, 2},
    // Row pairs at stride 1: 3x3 rows of 112 (runs of 8), 5x5 rows of 28 (runs of 7 on
    // AVX-512), and rows narrower than a run.
    {"k3_s1_rows_of_112", {9, 112, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1}, 1, 1},
    {"k5_s1_rows_of_28", {11, 28, 0, 0, 5, 5, 1, 1, 1, 1, 2, 2}, 2, 2},
    {"k5_s1_rows_of_5", {10, 5, 0, 0, 5, 5, 1, 1, 1, 1, 2, 2}, 2, 2},
};

class NchwcBlockVariantTest : public ::testing::TestWithParam<IsaVariant<nchwc::NchwcBlockKernels>> {};

TEST_P(NchwcBlockVariantTest, DepthwiseRowsMatchPortableBitForBit) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const nchwc::NchwcBlockKernels& k = GetParam().impl;
  const nchwc::NchwcBlockKernels& ref = PortableVariant(nchwc::NchwcBlockVariants()).impl;
  for (const RowCase& c : kRowCases) {
    const nchwc::DepthwiseGeometry g = Resolved(c);
    const std::vector<float> x = RandomFloats(g.in_h * g.in_w * kBlock, 1, -2, 2);
    const std::vector<float> w = RandomFloats(g.kernel_h * g.kernel_w * kBlock, 2, -2, 2);
    const std::vector<float> bias = RandomFloats(kBlock, 3);
    std::vector<float> got(g.out_h * g.out_w * kBlock, NAN), want(got.size(), NAN);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      k.depthwise_row(g, x.data(), w.data(), bias.data(), oh, got.data() + oh * g.out_w * kBlock);
      ref.depthwise_row(g, x.data(), w.data(), bias.data(), oh, want.data() + oh * g.out_w * kBlock);
    }
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << c.name;
    // Row pairs (from every row: pairs starting at odd rows too) give the single rows' bits.
    for (int64_t first = 0; first < 2; ++first) {
      std::vector<float> paired(got.size(), NAN);
      if (first == 1) k.depthwise_row(g, x.data(), w.data(), bias.data(), 0, paired.data());
      for (int64_t oh = first; oh < g.out_h; oh += 2) {
        k.depthwise_row_pair(g, x.data(), w.data(), bias.data(), oh, paired.data() + oh * g.out_w * kBlock);
      }
      EXPECT_EQ(0, std::memcmp(paired.data(), got.data(), got.size() * sizeof(float)))
          << c.name << " pairs from " << first;
    }
    // And the definition (taps inside the input in (kh, kw) order, fused, then + bias).
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t l = 0; l < kBlock; ++l) {
          float acc = 0.0f;
          for (int64_t kh = 0; kh < g.kernel_h; ++kh)
            for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
              const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              acc = std::fma(w[(kh * g.kernel_w + kw) * kBlock + l], x[(ih * g.in_w + iw) * kBlock + l], acc);
            }
          const float e = acc + bias[l], v = got[(oh * g.out_w + ow) * kBlock + l];
          ASSERT_EQ(std::memcmp(&e, &v, 4), 0)
              << c.name << " at (" << oh << ", " << ow << ", " << l << "): " << v << " vs " << e;
        }
  }
}

TEST_P(NchwcBlockVariantTest, BlockSumsAndScaleMatchPortableBitForBit) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const nchwc::NchwcBlockKernels& k = GetParam().impl;
  const nchwc::NchwcBlockKernels& ref = PortableVariant(nchwc::NchwcBlockVariants()).impl;
  for (int64_t positions : {1, 3, 7, 49, 196, 785}) {
    const std::vector<float> x = RandomFloats(positions * kBlock, 4), gate = RandomFloats(kBlock, 5);
    std::vector<float> got(kBlock), want(kBlock), y(x.size()), y_ref(x.size());
    k.block_sums(x.data(), positions, got.data());
    ref.block_sums(x.data(), positions, want.data());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), kBlock * sizeof(float))) << positions;
    for (int64_t l = 0; l < kBlock; ++l) {  // the stated order
      float s[4] = {0, 0, 0, 0};
      for (int64_t p = 0; p < positions; ++p) s[p % 4] += x[p * kBlock + l];
      EXPECT_EQ((s[0] + s[1]) + (s[2] + s[3]), got[l]) << positions << " lane " << l;
    }
    k.block_scale(x.data(), gate.data(), positions, y.data());
    ref.block_scale(x.data(), gate.data(), positions, y_ref.data());
    EXPECT_EQ(0, std::memcmp(y.data(), y_ref.data(), y.size() * sizeof(float))) << positions;
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], gate[i % kBlock] * x[i]) << positions << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, NchwcBlockVariantTest, ::testing::ValuesIn(nchwc::NchwcBlockVariants()),
                         IsaVariantTestName<nchwc::NchwcBlockKernels>);

// --- NchwcDepthwiseConv against FusedConv (group = C) ---

struct ConvCase {
  const char* name;
  int64_t c, h, w, kernel, stride;
  const char* activation;  // "" for none
  std::vector<float> params;
  bool bias = true;
  std::vector<int64_t> pads = {};       // default: kernel / 2 on every side
  std::vector<int64_t> dilations = {};  // default 1
  std::vector<int64_t> kernel_hw = {};  // default kernel x kernel
};

const ConvCase kConvCases[] = {
    // EfficientNet-B0 / MobileNetV3-small shapes (channels, planes, kernels, strides, activations).
    {"c32_112_k3_s1_swish", 32, 112, 112, 3, 1, "Swish", {1.0f}},
    {"c16_112_k3_s2_relu", 16, 112, 112, 3, 2, "Relu", {}},
    {"c24_56_k3_s1_hardswish", 24, 56, 56, 3, 1, "HardSwish", {}},
    {"c40_28_k5_s2_sigmoid", 40, 28, 28, 5, 2, "Sigmoid", {}},
    {"c72_56_k5_s2_clip", 72, 56, 56, 5, 2, "Clip", {0.0f, 6.0f}},
    {"c240_28_k3_s1_swish", 240, 28, 28, 3, 1, "Swish", {1.0f}},
    {"c240_14_k5_s1_hardsigmoid", 240, 14, 14, 5, 1, "HardSigmoid", {0.2f, 0.5f}},
    {"c576_14_k5_s2_hardswish", 576, 14, 14, 5, 2, "HardSwish", {}},
    {"c576_7_k5_s1_leakyrelu", 576, 7, 7, 5, 1, "LeakyRelu", {0.1f}},
    {"c72_28_k3_s2_tanh", 72, 28, 28, 3, 2, "Tanh", {}},
    {"c24_7_k3_s1_none_no_bias", 24, 7, 7, 3, 1, "", {}, false},
    {"c40_9_k5_s1_clip_nonzero_at_0", 40, 9, 9, 5, 1, "Clip", {0.5f, 1.0f}},
    // The general loop: a 3x5 kernel, dilation 2, asymmetric pads, strides (1, 2).
    {"c24_17x23_k3x5_dilated", 24, 17, 23, 3, 2, "Relu", {}, true, {2, 1, 0, 3}, {2, 2}, {3, 5}},
    {"c16_11_k5_s2_no_pads", 16, 11, 11, 5, 2, "", {}, true, {0, 0, 0, 0}},
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

std::vector<float> Weights(const ConvCase& c, int64_t kh, int64_t kw) {
  return RandomFloats(c.c * kh * kw, 12, -1.0f, 1.0f);
}

template <typename T>
void SetConvAttributes(T& t, const ConvCase& c, int64_t kh, int64_t kw, const std::vector<int64_t>& pads) {
  t.Attr("group", c.c).Attr("kernel_shape", std::vector<int64_t>{kh, kw}).Attr("pads", pads);
  t.Attr("strides", std::vector<int64_t>{c.stride, c.stride});
  if (!c.dilations.empty()) t.Attr("dilations", c.dilations);
  if (c.activation[0] != '\0') t.Attr("activation", std::string(c.activation));
  if (!c.params.empty()) t.Attr("activation_params", c.params);
}

class NchwcDepthwiseConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(NchwcDepthwiseConvTest, MatchesFusedConvForEveryParticipantCount) {
  const ConvCase& c = GetParam();
  constexpr int64_t kBatch = 2;
  const int64_t kh = c.kernel_hw.empty() ? c.kernel : c.kernel_hw[0];
  const int64_t kw = c.kernel_hw.empty() ? c.kernel : c.kernel_hw[1];
  const std::vector<int64_t> pads = c.pads.empty() ? std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2} : c.pads;
  const std::vector<float> x = RandomFloats(kBatch * c.c * c.h * c.w, 11, -2.0f, 2.0f), w = Weights(c, kh, kw),
                           b = RandomFloats(c.c, 13);

  KernelTester nchw("FusedConv", 1, "com.microsoft");
  nchw.Input(MakeTensor<float>({kBatch, c.c, c.h, c.w}, x)).Input(MakeTensor<float>({c.c, 1, kh, kw}, w));
  if (c.bias) nchw.Input(MakeTensor<float>({c.c}, b));
  SetConvAttributes(nchw, c, kh, kw, pads);
  auto want = nchw.Run(1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const Shape& ys = want->at(0).tensor().shape();

  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.Input(MakeTensor<float>({kBatch, Blocks(c.c), c.h, c.w, kBlock}, ToBlocked(x, kBatch, c.c, c.h, c.w)));
  t.ConstantInput(MakeTensor<float>({c.c, 1, kh, kw}, w));
  if (c.bias) t.Input(MakeTensor<float>({c.c}, b));
  SetConvAttributes(t, c, kh, kw, pads);
  // One output row per block, so that every participant count splits the rows.
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{1});
  const std::vector<Value> out = testing::DeterministicOutputs(t, {.expect_regions = true});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), Shape({kBatch, Blocks(c.c), ys[2], ys[3], kBlock}));
  auto three = t.Run(3);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  testing::ExpectIdentical(out[0], three->at(0), std::string(c.name) + " with 3 participants");
  // |x| < 2, |w| < 1, at most 25 taps: the sums (in another order on some NCHW paths) agree
  // to a few ulp of 50; the vector Sigmoid/Tanh to a few ulp of their values. A wrong tap,
  // lane, border or activation moves outputs by far more.
  ExpectBlockedNear(ToVector<float>(out[0].tensor()), ToVector<float>(want->at(0).tensor()), kBatch, c.c, ys[2], ys[3],
                    2e-5, 2e-5, c.name);
}

INSTANTIATE_TEST_SUITE_P(Shapes, NchwcDepthwiseConvTest, ::testing::ValuesIn(kConvCases),
                         [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

TEST(NchwcDepthwiseConv, SameUpperAutoPadMatchesFusedConv) {
  const ConvCase c{"auto_pad", 20, 13, 13, 5, 2, "HardSwish", {}};
  const std::vector<float> x = RandomFloats(c.c * c.h * c.w, 21, -2.0f, 2.0f), w = Weights(c, 5, 5);
  auto attrs = [](KernelTester& t) {
    t.Attr("group", int64_t{20}).Attr("kernel_shape", std::vector<int64_t>{5, 5});
    t.Attr("strides", std::vector<int64_t>{2, 2}).Attr("auto_pad", std::string("SAME_UPPER"));
    t.Attr("activation", std::string("HardSwish"));
  };
  KernelTester nchw("FusedConv", 1, "com.microsoft");
  nchw.Input(MakeTensor<float>({1, 20, 13, 13}, x)).Input(MakeTensor<float>({20, 1, 5, 5}, w));
  attrs(nchw);
  auto want = nchw.Run(1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.Input(MakeTensor<float>({1, 2, 13, 13, kBlock}, ToBlocked(x, 1, 20, 13, 13)));
  t.ConstantInput(MakeTensor<float>({20, 1, 5, 5}, w));
  attrs(t);
  auto got = t.Run(1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectBlockedNear(ToVector<float>(got->at(0).tensor()), ToVector<float>(want->at(0).tensor()), 1, 20, 7, 7, 2e-5,
                    2e-5, "auto_pad");
}

// --- NchwcSqueezeExcitation against SqueezeExcitation ---

struct SeCase {
  const char* name;
  int64_t n, c, h, w, reduced;
  const char* activation;
  std::vector<float> activation_params;
  const char* gate;
  std::vector<float> gate_params;
  bool biases;
};

const SeCase kSeCases[] = {
    {"efficientnet_240_28", 2, 240, 28, 28, 10, "Swish", {1.0f}, "Sigmoid", {}, true},
    {"efficientnet_672_14", 2, 672, 14, 14, 28, "Swish", {1.0f}, "Sigmoid", {}, true},
    {"mobilenet_576_7", 2, 576, 7, 7, 144, "Relu", {}, "HardSigmoid", {1.0f / 6, 0.5f}, true},
    {"mobilenet_72_28", 2, 72, 28, 28, 24, "Relu", {}, "HardSigmoid", {1.0f / 6, 0.5f}, true},
    {"c40_56_no_biases", 2, 40, 56, 56, 10, "", {}, "Sigmoid", {}, false},
    {"c24_112", 2, 24, 112, 112, 8, "HardSwish", {}, "HardSigmoid", {0.2f, 0.5f}, true},
    {"c16_3x5", 2, 16, 3, 5, 4, "Relu", {}, "Sigmoid", {}, true},
};

void PrintTo(const SeCase& c, std::ostream* os) { *os << c.name; }

template <typename T>
void SetSeInputs(T& t, const SeCase& c, Tensor x, const std::vector<float>& w1, const std::vector<float>& b1,
                 const std::vector<float>& w2, const std::vector<float>& b2) {
  t.Input(std::move(x)).Input(MakeTensor<float>({c.reduced, c.c, 1, 1}, w1));
  c.biases ? t.Input(MakeTensor<float>({c.reduced}, b1)) : t.MissingInput();
  t.Input(MakeTensor<float>({c.c, c.reduced, 1, 1}, w2));
  if (c.biases) t.Input(MakeTensor<float>({c.c}, b2));
  if (c.activation[0] != '\0') t.Attr("activation", std::string(c.activation));
  if (!c.activation_params.empty()) t.Attr("activation_params", c.activation_params);
  t.Attr("gate_activation", std::string(c.gate));
  if (!c.gate_params.empty()) t.Attr("gate_activation_params", c.gate_params);
}

class NchwcSqueezeExcitationTest : public ::testing::TestWithParam<SeCase> {};

TEST_P(NchwcSqueezeExcitationTest, MatchesSqueezeExcitationForEveryParticipantCount) {
  const SeCase& c = GetParam();
  const std::vector<float> x = RandomFloats(c.n * c.c * c.h * c.w, 31), w1 = RandomFloats(c.reduced * c.c, 32),
                           b1 = RandomFloats(c.reduced, 33), w2 = RandomFloats(c.c * c.reduced, 34),
                           b2 = RandomFloats(c.c, 35);
  KernelTester nchw("SqueezeExcitation", 1, "ai.onnx_light");
  SetSeInputs(nchw, c, MakeTensor<float>({c.n, c.c, c.h, c.w}, x), w1, b1, w2, b2);
  auto want = nchw.Run(1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();

  KernelTester t("NchwcSqueezeExcitation", 1, "ai.onnx_light");
  SetSeInputs(t, c, MakeTensor<float>({c.n, Blocks(c.c), c.h, c.w, kBlock}, ToBlocked(x, c.n, c.c, c.h, c.w)), w1, b1,
              w2, b2);
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  const std::vector<Value> out = testing::DeterministicOutputs(t, {.expect_regions = true});
  ASSERT_EQ(out.size(), 1u);
  auto three = t.Run(3);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  testing::ExpectIdentical(out[0], three->at(0), std::string(c.name) + " with 3 participants");
  // Means of up to 12544 values in [-1, 1) summed in another order: differences of about
  // 1e-7 of the mean; through products of up to 672 terms and the gate, a few 1e-6 at most.
  ExpectBlockedNear(ToVector<float>(out[0].tensor()), ToVector<float>(want->at(0).tensor()), c.n, c.c, c.h, c.w, 1e-5,
                    1e-5, c.name);
}

INSTANTIATE_TEST_SUITE_P(Blocks, NchwcSqueezeExcitationTest, ::testing::ValuesIn(kSeCases),
                         [](const ::testing::TestParamInfo<SeCase>& info) { return std::string(info.param.name); });

// --- Errors ---

Tensor Filled(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return MakeTensor<float>(Shape(s), std::vector<float>(n, 0.5f));
}

void ExpectErrorNaming(StatusOr<std::vector<Value>> out, const std::vector<std::string>& parts) {
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << p << " in: " << message;
}

TEST(NchwcDepthwiseConv, WrongBlockCountNamesOpNodeAndShapes) {
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.NodeName("dw_node").Input(Filled({1, 3, 7, 7, 16})).ConstantInput(Filled({24, 1, 3, 3}));
  t.Attr("group", int64_t{24}).Attr("kernel_shape", std::vector<int64_t>{3, 3});
  ExpectErrorNaming(t.Run(1), {"NchwcDepthwiseConv", "dw_node", "[1,3,7,7,16]", "[24,1,3,3]"});
}

TEST(NchwcDepthwiseConv, NotBlockedXNamesOpNodeAndShapes) {
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.NodeName("dw_node").Input(Filled({1, 24, 7, 7})).ConstantInput(Filled({24, 1, 3, 3}));
  t.Attr("group", int64_t{24});
  ExpectErrorNaming(t.Run(1), {"NchwcDepthwiseConv", "dw_node", "[1,24,7,7]", "[24,1,3,3]"});
}

TEST(NchwcDepthwiseConv, WeightThatIsNotAConstantIsAnErrorAtCreation) {
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.NodeName("dw_node").Input(Filled({1, 2, 7, 7, 16})).Input(Filled({24, 1, 3, 3}));
  t.Attr("group", int64_t{24});
  ExpectErrorNaming(t.Run(1), {"NchwcDepthwiseConv", "dw_node", "constant"});
}

TEST(NchwcDepthwiseConv, GroupOtherThanChannelsNamesBoth) {
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.NodeName("dw_node").Input(Filled({1, 2, 7, 7, 16})).ConstantInput(Filled({24, 1, 3, 3}));
  t.Attr("group", int64_t{1});
  ExpectErrorNaming(t.Run(1), {"NchwcDepthwiseConv", "dw_node", "group 1", "[24,1,3,3]"});
}

TEST(NchwcDepthwiseConv, UnknownActivationNamesIt) {
  KernelTester t("NchwcDepthwiseConv", 1, "ai.onnx_light");
  t.NodeName("dw_node").Input(Filled({1, 2, 7, 7, 16})).ConstantInput(Filled({24, 1, 3, 3}));
  t.Attr("group", int64_t{24}).Attr("activation", std::string("Softplus"));
  ExpectErrorNaming(t.Run(1), {"dw_node", "Softplus"});
}

TEST(NchwcSqueezeExcitation, WrongBlockCountNamesOpNodeAndShapes) {
  KernelTester t("NchwcSqueezeExcitation", 1, "ai.onnx_light");
  t.NodeName("se_node").Input(Filled({1, 2, 7, 7, 16})).Input(Filled({8, 40, 1, 1})).MissingInput();
  t.Input(Filled({40, 8, 1, 1})).Attr("gate_activation", std::string("Sigmoid"));
  ExpectErrorNaming(t.Run(1), {"NchwcSqueezeExcitation", "se_node", "[1,2,7,7,16]", "[8,40,1,1]"});
}

TEST(NchwcSqueezeExcitation, W2GatingOtherChannelsNamesIt) {
  KernelTester t("NchwcSqueezeExcitation", 1, "ai.onnx_light");
  t.NodeName("se_node").Input(Filled({1, 3, 7, 7, 16})).Input(Filled({8, 40, 1, 1})).MissingInput();
  t.Input(Filled({24, 8, 1, 1})).Attr("gate_activation", std::string("Sigmoid"));
  ExpectErrorNaming(t.Run(1), {"se_node", "W2", "[24,8,1,1]"});
}

}  // namespace
}  // namespace onnx_light
