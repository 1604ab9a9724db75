// com.microsoft FusedConv against the unfused graph run through our own kernels (Conv, then
// Add for the residual Z, then the separate activation kernel): bit for bit on every conv
// path (depthwise SIMD planes and channel blocks, the implicit GEMM's AVX-512 tiles, im2col + GEMM, 1x1,
// the few-input-channel rows) for
// every activation, since each activation is written in its kernel's arithmetic order and
// Sigmoid/Tanh run the same simd/math.h code on the same lanes (gemm/epilogue.h). Parallel
// runs are bit-identical to the serial one (DeterministicOutputs); bad activations, bad
// activation_params and a Z of the wrong shape give errors naming the node.
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/conv/conv_float.h"
#include "native/kernels/conv/few_channels.h"
#include "native/kernels/conv/implicit_gemm.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

std::vector<float> Random(int64_t n, uint32_t seed) { return testing::RandomFloats(n, seed, -2.0f, 2.0f); }

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

struct Shapes {
  const char* name;  // the path it takes
  std::vector<int64_t> x, w;
  int64_t group;
  std::vector<int64_t> strides, pads;
};

// One shape per conv path; the implicit GEMM is taken on AVX-512 hosts (checked below).
const Shapes kShapes[] = {
    {"depthwise_3x3_s1", {2, 8, 13, 21}, {8, 1, 3, 3}, 8, {1, 1}, {1, 1, 1, 1}},
    {"depthwise_5x5_s2", {1, 6, 17, 19}, {6, 1, 5, 5}, 6, {2, 2}, {2, 2, 2, 2}},
    // Rows of 70 and 38 outputs: the row strips' interior (unmasked) vectors between the
    // edge ones (the activation runs over each strip of rows the plane kernel stored).
    {"depthwise_3x3_s1_interior", {1, 3, 9, 70}, {3, 1, 3, 3}, 3, {1, 1}, {1, 1, 1, 1}},
    {"depthwise_3x3_s2_interior", {1, 3, 10, 75}, {3, 1, 3, 3}, 3, {2, 2}, {1, 1, 1, 1}},
    // Rows of 7 (at most half of AVX-512's 16 lanes), 20 channels (a full and a partial
    // block of 16): the channel-blocked kernels where AVX-512 is enabled.
    {"depthwise_channel_blocks", {2, 20, 7, 7}, {20, 1, 5, 5}, 20, {1, 1}, {2, 2, 2, 2}},
    // Rows of 14 (DepthwiseChannelsTake's square 3x3 / 5x5 rows of up to two vectors): the
    // channel blocks on AVX-512 and AVX2, with partial blocks.
    {"depthwise_channel_blocks_5x5_rows_14", {1, 24, 14, 14}, {24, 1, 5, 5}, 24, {1, 1}, {2, 2, 2, 2}},
    {"depthwise_channel_blocks_3x3_s2_rows_14", {1, 18, 27, 27}, {18, 1, 3, 3}, 18, {2, 2}, {1, 1, 1, 1}},
    {"implicit_gemm_64", {1, 16, 11, 9}, {64, 16, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}},
    {"implicit_gemm_32", {2, 5, 9, 10}, {32, 5, 3, 3}, 1, {2, 1}, {1, 0, 1, 2}},
    // 13 channels: a padded block of a 16-column tile (avx512_12x16, avx2_6x16) where AVX2 is
    // enabled, im2col + GEMM elsewhere; 40 per group: avx512_8x48 or avx2_6x16.
    {"im2col_gemm", {1, 7, 12, 11}, {13, 7, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}},
    {"implicit_gemm_40_grouped", {1, 6, 10, 9}, {80, 3, 3, 3}, 2, {1, 1}, {1, 1, 1, 1}},
    {"im2col_gemm_5", {1, 7, 12, 11}, {5, 7, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}},
    {"grouped_im2col", {1, 8, 10, 10}, {12, 2, 3, 3}, 4, {1, 1}, {1, 1, 1, 1}},
    {"pointwise_1x1", {2, 24, 9, 7}, {40, 24, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}},
    // Few input channels (few_channels.h): a stride-2 stem with a partial channel block, a
    // 7x7/2 stem, groups of 2 input channels (FewChannelsApplies is checked below).
    {"few_channels_3x3_s2", {2, 3, 17, 23}, {13, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}},
    {"few_channels_7x7_s2", {1, 3, 19, 40}, {16, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}},
    {"few_channels_grouped", {1, 4, 9, 11}, {10, 2, 3, 3}, 2, {1, 1}, {1, 0, 1, 2}},
    {"conv_3d", {1, 3, 5, 6, 7}, {4, 3, 3, 3, 3}, 1, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
};

struct ActivationCase {
  const char* name;           // FusedConv's activation ("" = none)
  std::vector<float> params;  // activation_params
  const char* op;             // the separate kernel
  int opset;
  void (*attrs)(KernelTester&);  // the separate kernel's attributes for these params
};

const ActivationCase kActivations[] = {
    {"", {}, nullptr, 0, nullptr},
    {"Relu", {}, "Relu", 14, nullptr},
    {"Clip", {-0.5f, 0.75f}, "Clip", 6, [](KernelTester& t) { t.Attr("min", -0.5f).Attr("max", 0.75f); }},
    {"LeakyRelu", {0.15f}, "LeakyRelu", 16, [](KernelTester& t) { t.Attr("alpha", 0.15f); }},
    {"Sigmoid", {}, "Sigmoid", 13, nullptr},
    {"Tanh", {}, "Tanh", 13, nullptr},
    {"HardSigmoid", {0.3f, 0.4f}, "HardSigmoid", 6, [](KernelTester& t) { t.Attr("alpha", 0.3f).Attr("beta", 0.4f); }},
    {"HardSwish", {}, "HardSwish", 14, nullptr},
    {"Swish", {0.7f}, "Swish", 24, [](KernelTester& t) { t.Attr("alpha", 0.7f); }},
};

void PrintTo(const ActivationCase& a, std::ostream* os) { *os << "activation '" << a.name << "'"; }

std::vector<int64_t> OutputShape(const Shapes& s) {
  std::vector<int64_t> y = {s.x[0], s.w[0]};
  const size_t r = s.x.size() - 2;
  for (size_t a = 0; a < r; ++a) {
    y.push_back((s.x[a + 2] + s.pads[a] + s.pads[a + r] - s.w[a + 2]) / s.strides[a] + 1);
  }
  return y;
}

void ConvInputs(KernelTester& t, const Shapes& s, bool constant_w) {
  t.Input(MakeTensor<float>(Shape(s.x), Random(Product(s.x), 1)));
  const Tensor w = MakeTensor<float>(Shape(s.w), Random(Product(s.w), 2));
  if (constant_w) {
    t.ConstantInput(w);
  } else {
    t.Input(w);
  }
  t.Input(MakeTensor<float>({s.w[0]}, Random(s.w[0], 3)));
  t.Attr("group", s.group).Attr("strides", s.strides).Attr("pads", s.pads);
}

Tensor Output(KernelTester& t) {
  auto out = t.Run(1);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->at(0).tensor() : Tensor();
}

// Conv, then Add(Y, Z), then the activation kernel: each a separate kernel.
std::vector<float> Unfused(const Shapes& s, const ActivationCase& a, const Tensor* z) {
  KernelTester conv("Conv", 22);
  ConvInputs(conv, s, false);
  Tensor y = Output(conv);
  if (z != nullptr) {
    KernelTester add("Add", 14);
    add.Input(y).Input(*z);
    y = Output(add);
  }
  if (a.op != nullptr) {
    KernelTester act(a.op, a.opset);
    act.Input(y);
    if (a.attrs != nullptr) a.attrs(act);
    y = Output(act);
  }
  return ToVector<float>(y);
}

// k_chunk: conv.implicit_chunk_panel_bytes in k of a 16-column tile (0: the default, which
// the shapes' panels are below; 7 gives 7, 3, 2 or 1 k a chunk at 16, 32, 48 or 64 columns).
KernelTester MakeFused(const Shapes& s, const ActivationCase& a, const Tensor* z, bool constant_w,
                       int64_t k_chunk = 0) {
  KernelTester t("FusedConv", 1, "com.microsoft");
  ConvInputs(t, s, constant_w);
  if (z != nullptr) t.Input(*z);
  if (a.name[0] != '\0') t.Attr("activation", std::string(a.name));
  if (!a.params.empty()) t.Attr("activation_params", a.params);
  t.Tuning(param::kMinimumTasks, int64_t{1}).Tuning(param::kDepthwiseMinimumMultiplyAdds, int64_t{1});
  if (k_chunk > 0) t.Tuning(conv::kImplicitChunkPanelBytesParam, k_chunk * 16 * 4);
  return t;
}

class FusedConvTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(FusedConvTest, EqualsConvThenAddThenActivationBitForBit) {
  const ActivationCase& a = GetParam();
  for (const Shapes& s : kShapes) {
    const std::vector<int64_t> y_shape = OutputShape(s);
    const Tensor z = MakeTensor<float>(Shape(y_shape), Random(Product(y_shape), 4));
    for (bool residual : {false, true}) {
      // K chunks (implicit-GEMM shapes): bias, residual and activation after the last.
      for (auto [constant_w, k_chunk] : {std::pair{false, 0}, std::pair{true, 0}, std::pair{true, 7}}) {
        const Tensor* zp = residual ? &z : nullptr;
        const std::vector<float> want = Unfused(s, a, zp);
        KernelTester fused = MakeFused(s, a, zp, constant_w, k_chunk);
        const std::vector<float> got = testing::SerialMatchesParticipants<float>(fused, Shape(y_shape));
        ASSERT_EQ(got.size(), want.size()) << s.name;
        for (size_t i = 0; i < got.size(); ++i) {
          // Bitwise (NaN-free inputs: the sums are finite), so a wrong ulp is caught too.
          uint32_t g, e;
          std::memcpy(&g, &got[i], 4);
          std::memcpy(&e, &want[i], 4);
          ASSERT_EQ(g, e) << s.name << " activation '" << a.name << "' residual " << residual << " constant W "
                          << constant_w << " k_chunk " << k_chunk << " at " << i << ": " << got[i] << " vs " << want[i];
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, FusedConvTest, ::testing::ValuesIn(kActivations),
                         [](const ::testing::TestParamInfo<ActivationCase>& info) {
                           return std::string(info.param.name[0] == '\0' ? "None" : info.param.name);
                         });

TEST(FusedConv, ShapesCoverTheImplicitGemmWhereTheCpuHasIt) {
  // The implicit-GEMM shapes above take that path exactly when an implicit tile is
  // enabled: AVX-512's, or AVX2's (also with the ISA capped at avx2); else they run
  // im2col + GEMM, covered by the other shapes anyway.
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 64, 16, 9), IsaEnabled(Isa::kAvx2));
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 32, 5, 9), IsaEnabled(Isa::kAvx2));
  // Padded channel blocks (13 and 40 channels per group); 5 channels stay on im2col.
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 13, 7, 9), IsaEnabled(Isa::kAvx2));
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 40, 3, 9), IsaEnabled(Isa::kAvx2));
  EXPECT_FALSE(conv::ImplicitGemmApplies(2, 5, 7, 9));
}

TEST(FusedConv, ShapesCoverTheFewChannelPath) {
  EXPECT_TRUE(conv::FewChannelsApplies(2, 13, 3, 9));
  EXPECT_TRUE(conv::FewChannelsApplies(2, 16, 3, 49));
  EXPECT_TRUE(conv::FewChannelsApplies(2, 5, 2, 9));
}

TEST(FusedConv, HandComputedReluWithResidual) {
  // 1x1 conv, one channel, weight 2, bias -1: y = relu(2x - 1 + z).
  KernelTester t("FusedConv", 1, "com.microsoft");
  t.Input(MakeTensor<float>({1, 1, 1, 4}, {0.0f, 1.0f, -2.0f, 3.0f}))
      .Input(MakeTensor<float>({1, 1, 1, 1}, {2.0f}))
      .Input(MakeTensor<float>({1}, {-1.0f}))
      .Input(MakeTensor<float>({1, 1, 1, 4}, {0.5f, -4.0f, 10.0f, 0.25f}))
      .Attr("activation", std::string("Relu"));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{0.0f, 0.0f, 5.0f, 5.25f}));
}

TEST(FusedConv, ActivationDefaultsAreTheOnnxOps) {
  // LeakyRelu without activation_params: alpha 0.01; 1x1 identity conv.
  KernelTester t("FusedConv", 1, "com.microsoft");
  t.Input(MakeTensor<float>({1, 1, 1, 2}, {-100.0f, 3.0f}))
      .Input(MakeTensor<float>({1, 1, 1, 1}, {1.0f}))
      .Attr("activation", std::string("LeakyRelu"));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{0.01f * -100.0f, 3.0f}));
}

StatusOr<std::vector<Value>> RunBad(const std::string& activation, std::vector<float> params,
                                    std::vector<int64_t> z_shape) {
  KernelTester t("FusedConv", 1, "com.microsoft");
  t.NodeName("fc7")
      .Input(MakeTensor<float>({1, 2, 4, 4}, Random(32, 1)))
      .Input(MakeTensor<float>({3, 2, 3, 3}, Random(54, 2)))
      .Input(MakeTensor<float>({3}, Random(3, 3)));
  if (!z_shape.empty()) t.Input(MakeTensor<float>(Shape(z_shape), Random(Product(z_shape), 4)));
  t.Attr("activation", activation);
  if (!params.empty()) t.Attr("activation_params", params);
  return t.Run(1);
}

TEST(FusedConv, UnknownActivationIsAnErrorNamingItAndTheNode) {
  auto out = RunBad("Gelu", {}, {});
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("'Gelu'"), std::string::npos) << message;
  EXPECT_NE(message.find("fc7"), std::string::npos) << message;
  EXPECT_NE(message.find("HardSwish"), std::string::npos) << message;  // lists the supported names
}

TEST(FusedConv, WrongParameterCountIsAnError) {
  auto out = RunBad("Clip", {0.0f}, {});
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("Clip takes 2 activation_params, got 1"), std::string::npos) << message;
}

TEST(FusedConv, ResidualOfAnotherShapeIsAnError) {
  auto out = RunBad("Relu", {}, {1, 3, 4, 4});
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("Z"), std::string::npos) << message;
  EXPECT_NE(message.find("[1,3,4,4]"), std::string::npos) << message;
  EXPECT_NE(message.find("fc7"), std::string::npos) << message;
}

}  // namespace
}  // namespace onnx_light
