// The blocked-channel (NCHW16c) kernels of README.md: the reorder rows of every ISA against
// the portable one; ReorderInput against the layout's index formula (pad lanes +0.0f) and
// ReorderOutput back to X bit for bit, for channel counts with and without a partial last
// block, at every participant count (serial == parallel bits); errors naming op, node and
// shapes. Built three times (nchwc_test, _avx2, _portable): the ops dispatch to the best
// variant under the cap.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/conv/few_channels.h"
#include "native/kernels/conv/implicit_gemm.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/nchwc/nchwc_conv.h"
#include "native/kernels/nchwc/reorder.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

constexpr float kUntouched = -12345.0f;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<float> Random(int64_t n, uint32_t seed) { return testing::RandomFloats(n, seed, -2.0f, 2.0f); }

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
}

// ---- The row primitives of every ISA (reorder.h) ----

class ReorderRowsVariantTest : public ::testing::TestWithParam<IsaVariant<nchwc::ReorderRows>> {};

TEST_P(ReorderRowsVariantTest, MatchesThePortableRowsAndTouchesNothingElse) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const nchwc::ReorderRows& rows = GetParam().impl;
  const nchwc::ReorderRows& portable = PortableVariant(nchwc::ReorderRowsVariants()).impl;
  // Counts below, at and past each variant's step (4, 8, 16 positions), lanes 1 .. 16.
  for (int64_t count : {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 49}) {
    const int64_t ld = count + 5;
    const std::vector<float> x = Random(16 * ld, 7);
    for (int lanes = 1; lanes <= 16; ++lanes) {
      std::vector<float> got(count * 16 + 16, kUntouched), want(count * 16 + 16, kUntouched);
      rows.to_blocked(x.data(), ld, lanes, count, got.data());
      portable.to_blocked(x.data(), ld, lanes, count, want.data());
      ASSERT_TRUE(SameBits(got, want)) << GetParam().name << " to_blocked count " << count << " lanes " << lanes;
      // The formula itself (the portable rows are the reference of the others).
      for (int64_t p = 0; p < count; ++p) {
        for (int l = 0; l < 16; ++l) {
          const float expected = l < lanes ? x[l * ld + p] : 0.0f;
          ASSERT_EQ(got[p * 16 + l], expected) << "position " << p << " lane " << l;
          if (l >= lanes) ASSERT_FALSE(std::signbit(got[p * 16 + l])) << "pad lanes are +0.0f";
        }
      }
      for (int64_t i = count * 16; i < count * 16 + 16; ++i) ASSERT_EQ(got[i], kUntouched) << "past the row";

      const std::vector<float> blocked = Random(count * 16, 8);
      std::vector<float> back(16 * ld, kUntouched), back_want(16 * ld, kUntouched);
      rows.from_blocked(blocked.data(), lanes, count, back.data(), ld);
      portable.from_blocked(blocked.data(), lanes, count, back_want.data(), ld);
      ASSERT_TRUE(SameBits(back, back_want))
          << GetParam().name << " from_blocked count " << count << " lanes " << lanes;
      for (int l = 0; l < 16; ++l) {
        for (int64_t p = 0; p < ld; ++p) {
          const float expected = l < lanes && p < count ? blocked[p * 16 + l] : kUntouched;
          ASSERT_EQ(back[l * ld + p], expected) << "lane " << l << " position " << p;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, ReorderRowsVariantTest, ::testing::ValuesIn(nchwc::ReorderRowsVariants()),
                         IsaVariantTestName<nchwc::ReorderRows>);

// ---- ReorderInput / ReorderOutput ----

// Serial outputs after checking 2, 3, 4, 8 participants and a nested run give their bits.
// `expect_regions`: the work is large enough that every parallel run must open a region.
std::vector<Value> SerialEqualsParallel(KernelTester& t, bool expect_regions = true) {
  std::vector<Value> serial = testing::DeterministicOutputs(t, {.expect_regions = expect_regions});
  auto three = t.Run(3);
  EXPECT_TRUE(three.ok()) << three.status().ToString();
  if (three.ok() && !serial.empty()) testing::ExpectIdentical(serial.at(0), three->at(0), "3 participants");
  return serial;
}

struct ReorderCase {
  int64_t n, c, h, w;
};

class ReorderTest : public ::testing::TestWithParam<ReorderCase> {};

TEST_P(ReorderTest, InputFollowsTheLayoutAndOutputRoundTrips) {
  const ReorderCase& s = GetParam();
  const int64_t blocks = CeilDiv(s.c, 16), plane = s.h * s.w;
  const std::vector<float> x = Random(s.n * s.c * plane, 3);
  KernelTester in("ReorderInput", 1, "ai.onnx_light");
  in.NodeName("reorder_in").Input(MakeTensor<float>({s.n, s.c, s.h, s.w}, x));
  // Parallel from the smallest work, blocks of one row (two when there are more than 4).
  const int64_t block_rows = s.n * blocks * s.h > 4 ? 2 : 1;
  in.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, block_rows * s.w * 16);
  const std::vector<Value> blocked = SerialEqualsParallel(in);
  ASSERT_FALSE(blocked.empty());
  const Tensor& yt = blocked.at(0).tensor();
  ASSERT_EQ(yt.shape(), Shape({s.n, blocks, s.h, s.w, 16}));
  const std::vector<float> y = ToVector<float>(yt);
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t cb = 0; cb < blocks; ++cb) {
      for (int64_t p = 0; p < plane; ++p) {
        for (int64_t l = 0; l < 16; ++l) {
          const int64_t c = cb * 16 + l;
          const float got = y[((n * blocks + cb) * plane + p) * 16 + l];
          if (c < s.c) {
            ASSERT_EQ(got, x[(n * s.c + c) * plane + p]) << "n " << n << " c " << c << " p " << p;
          } else {
            ASSERT_EQ(got, 0.0f) << "pad lane " << l << " of block " << cb;
            ASSERT_FALSE(std::signbit(got)) << "pad lanes are +0.0f";
          }
        }
      }
    }
  }

  KernelTester out("ReorderOutput", 1, "ai.onnx_light");
  out.NodeName("reorder_out").Input(yt).Attr("channels", s.c);
  out.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, block_rows * s.w * 16);
  const std::vector<Value> back = SerialEqualsParallel(out);
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(back.at(0).tensor().shape(), Shape({s.n, s.c, s.h, s.w}));
  EXPECT_TRUE(SameBits(ToVector<float>(back.at(0).tensor()), x)) << "round trip";
}

INSTANTIATE_TEST_SUITE_P(Channels, ReorderTest,
                         ::testing::Values(ReorderCase{2, 3, 5, 7}, ReorderCase{1, 16, 9, 17}, ReorderCase{2, 24, 7, 7},
                                           ReorderCase{1, 40, 14, 14}, ReorderCase{2, 64, 3, 33},
                                           ReorderCase{1, 24, 1, 1}),
                         [](const ::testing::TestParamInfo<ReorderCase>& info) {
                           const ReorderCase& s = info.param;
                           return "C" + std::to_string(s.c) + "_N" + std::to_string(s.n) + "_" + std::to_string(s.h) +
                                  "x" + std::to_string(s.w);
                         });

TEST(ReorderOutput, BlockCountThatDoesNotMatchChannelsIsAnErrorNamingNodeAndShape) {
  KernelTester t("ReorderOutput", 1, "ai.onnx_light");
  t.NodeName("ro3").Input(MakeTensor<float>({1, 2, 2, 2, 16}, Random(128, 1))).Attr("channels", int64_t{40});
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("ReorderOutput"), std::string::npos) << message;
  EXPECT_NE(message.find("ro3"), std::string::npos) << message;
  EXPECT_NE(message.find("[1,2,2,2,16]"), std::string::npos) << message;
  EXPECT_NE(message.find("40"), std::string::npos) << message;
}

TEST(ReorderOutput, MissingChannelsIsAnError) {
  KernelTester t("ReorderOutput", 1, "ai.onnx_light");
  t.NodeName("ro4").Input(MakeTensor<float>({1, 1, 1, 1, 16}, Random(16, 1)));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("channels"), std::string::npos) << out.status().ToString();
}

TEST(ReorderInput, RankOtherThanFourIsAnErrorNamingNodeAndShape) {
  KernelTester t("ReorderInput", 1, "ai.onnx_light");
  t.NodeName("ri1").Input(MakeTensor<float>({1, 3, 4}, Random(12, 1)));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("ri1"), std::string::npos) << message;
  EXPECT_NE(message.find("[1,3,4]"), std::string::npos) << message;
}

// ---- NchwcConv ----

// NCHW [n, c, h, w] -> blocked [n, CeilDiv(c, 16), h, w, 16], pad lanes 0 (the layout's
// formula, independent of the kernels under test).
std::vector<float> Blocked(const std::vector<float>& x, int64_t n, int64_t c, int64_t plane) {
  const int64_t blocks = CeilDiv(c, 16);
  std::vector<float> out(n * blocks * plane * 16, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < plane; ++p)
        out[((i * blocks + ch / 16) * plane + p) * 16 + ch % 16] = x[(i * c + ch) * plane + p];
    }
  }
  return out;
}

struct ConvCase {
  const char* name;
  std::vector<int64_t> x, w;  // NCHW X, W [M, C, kh, kw]
  std::vector<int64_t> strides, pads;
  const char* activation;
  std::vector<float> params;
  bool residual;
  bool x_nchw;  // X given as rank-4 NCHW (the stems), else blocked
  std::vector<int64_t> dilations = {1, 1};
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

const ConvCase kConvCases[] = {
    // clang-format off
    {"pointwise_24to40", {1, 24, 14, 14}, {40, 24, 1, 1}, {1, 1}, {0, 0, 0, 0}, "", {}, false, false},
    {"pointwise_64to256", {1, 64, 9, 9}, {256, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, "Relu", {}, false, false},
    {"pointwise_512to2048_7x7", {1, 512, 7, 7}, {2048, 512, 1, 1}, {1, 1}, {0, 0, 0, 0}, "", {}, true, false},
    {"pointwise_40to24_swish_batch2", {2, 40, 6, 5}, {24, 40, 1, 1}, {1, 1}, {0, 0, 0, 0}, "Swish", {1.0f}, false, false},
    {"pointwise_s2_hardswish", {1, 48, 9, 11}, {72, 48, 1, 1}, {2, 2}, {0, 0, 0, 0}, "HardSwish", {}, false, false},
    {"conv3x3_s1_24to40", {1, 24, 10, 9}, {40, 24, 3, 3}, {1, 1}, {1, 1, 1, 1}, "", {}, false, false},
    {"conv3x3_s2_32to64_batch2", {2, 32, 11, 13}, {64, 32, 3, 3}, {2, 2}, {1, 1, 1, 1}, "Relu", {}, false, false},
    {"conv3x3_residual_relu_40", {1, 40, 7, 8}, {40, 40, 3, 3}, {1, 1}, {1, 1, 1, 1}, "Relu", {}, true, false},
    {"conv3x3_swish_16to80", {1, 16, 8, 8}, {80, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, "Swish", {1.0f}, false, false},
    // Sigmoid(0) = 0.5: the pad lanes (24 of 32) must still be written 0.
    {"conv3x3_sigmoid_residual_pad_lanes", {1, 20, 6, 7}, {24, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, "Sigmoid", {}, true, false},
    {"stem_3x3_s2_nchw_x", {1, 3, 17, 23}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, "HardSwish", {}, false, true},
    {"stem_3x3_s2_nchw_x_batch2_m24", {2, 3, 12, 10}, {24, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, "Swish", {1.0f}, false, true},
    // Asymmetric pads (the padded copy's edges), a dilated 3x3, a 5x5 with strides (2, 1).
    {"conv3x3_asymmetric_pads", {1, 32, 9, 10}, {48, 32, 3, 3}, {1, 1}, {1, 0, 2, 1}, "Relu", {}, false, false},
    {"conv3x3_dilated2", {1, 24, 11, 10}, {32, 24, 3, 3}, {1, 1}, {2, 2, 2, 2}, "", {}, true, false, {2, 2}},
    {"conv5x5_strides_2x1_nchw_x", {1, 4, 13, 12}, {40, 4, 5, 5}, {2, 1}, {2, 2, 2, 2}, "HardSwish", {}, false, true},
    // clang-format on
};

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

class NchwcConvTest : public ::testing::TestWithParam<ConvCase> {};

// NchwcConv (blocked Y; X blocked or NCHW) against the NCHW FusedConv kernel on the same
// inputs, reordered by the layout's formula: bit for bit where the NCHW kernel runs the
// implicit GEMM (the same tiles, sums and epilogue), else within float tolerance (its
// GEMM, few-channel and im2col paths sum in other orders); pad lanes +0.0f whatever the
// activation; every participant count (1, 2, 3, 4, 8, nested) gives the serial bits, and
// K blocked into chunks gives the same bits.
TEST_P(NchwcConvTest, MatchesFusedConvAndSerialEqualsParallel) {
  const ConvCase& s = GetParam();
  const int64_t n = s.x[0], c = s.x[1], m = s.w[0], plane = s.x[2] * s.x[3];
  const int64_t oh = (s.x[2] + s.pads[0] + s.pads[2] - ((s.w[2] - 1) * s.dilations[0] + 1)) / s.strides[0] + 1;
  const int64_t ow = (s.x[3] + s.pads[1] + s.pads[3] - ((s.w[3] - 1) * s.dilations[1] + 1)) / s.strides[1] + 1;
  const std::vector<int64_t> y_nchw{n, m, oh, ow};
  const std::vector<int64_t> y_blocked{n, CeilDiv(m, 16), oh, ow, 16};
  const std::vector<float> x = Random(Product(s.x), 1), w = Random(Product(s.w), 2), b = Random(m, 3);
  const std::vector<float> z = Random(Product(y_nchw), 4);

  KernelTester ref("FusedConv", 1, "com.microsoft");
  ref.Input(MakeTensor<float>(Shape(s.x), x)).ConstantInput(MakeTensor<float>(Shape(s.w), w));
  ref.Input(MakeTensor<float>({m}, b));
  if (s.residual) ref.Input(MakeTensor<float>(Shape(y_nchw), z));
  ref.Attr("strides", s.strides).Attr("pads", s.pads).Attr("dilations", s.dilations);
  if (s.activation[0] != '\0') ref.Attr("activation", std::string(s.activation));
  if (!s.params.empty()) ref.Attr("activation_params", s.params);
  auto ref_out = ref.Run(1);
  ASSERT_TRUE(ref_out.ok()) << ref_out.status().ToString();
  const std::vector<float> want = Blocked(ToVector<float>(ref_out->at(0).tensor()), n, m, oh * ow);

  const auto make = [&](int64_t chunk_bytes) {
    KernelTester t("NchwcConv", 1, "ai.onnx_light");
    t.NodeName("nc");
    if (s.x_nchw) {
      t.Input(MakeTensor<float>(Shape(s.x), x));
    } else {
      t.Input(MakeTensor<float>({n, CeilDiv(c, 16), s.x[2], s.x[3], 16}, Blocked(x, n, c, plane)));
    }
    t.ConstantInput(MakeTensor<float>(Shape(s.w), w)).Input(MakeTensor<float>({m}, b));
    if (s.residual) t.Input(MakeTensor<float>(Shape(y_blocked), Blocked(z, n, m, oh * ow)));
    t.Attr("strides", s.strides).Attr("pads", s.pads).Attr("dilations", s.dilations);
    if (s.activation[0] != '\0') t.Attr("activation", std::string(s.activation));
    if (!s.params.empty()) t.Attr("activation_params", s.params);
    t.Tuning(param::kMinimumTasks, int64_t{1});
    if (chunk_bytes > 0) t.Tuning(conv::kImplicitChunkPanelBytesParam, chunk_bytes);
    return t;
  };
  KernelTester t = make(0);
  // Work below one parallel.minimum_tasks unit (64^3 multiply-adds) stays serial even at 1.
  const bool regions = gemm::GemmWorkUnits(m, oh * ow, c * s.w[2] * s.w[3]) >= 1;
  const std::vector<Value> serial = SerialEqualsParallel(t, regions);
  ASSERT_FALSE(serial.empty());
  ASSERT_EQ(serial.at(0).tensor().shape(), Shape(y_blocked));
  const std::vector<float> got = ToVector<float>(serial.at(0).tensor());

  // K in chunks of 7 k (as many as K / 7), sums carried between them: the same bits.
  KernelTester chunked =
      make(7 * 4 * conv::ImplicitTileFor(m).cols + (conv::ImplicitTileFor(m).cols == 0 ? 7 * 64 : 0));
  const std::vector<Value> chunked_out = SerialEqualsParallel(chunked, regions);
  ASSERT_FALSE(chunked_out.empty());
  EXPECT_TRUE(SameBits(ToVector<float>(chunked_out.at(0).tensor()), got)) << "K chunks";

  const int64_t kernel = s.w[2] * s.w[3];
  const bool bitwise = !s.x_nchw && kernel > 1 && conv::ImplicitGemmApplies(2, m, c, kernel) &&
                       !conv::FewChannelsApplies(2, m, c, kernel);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t lane = static_cast<int64_t>(i % 16),
                  block = static_cast<int64_t>(i / 16) / (oh * ow) % CeilDiv(m, 16);
    if (block * 16 + lane >= m) {
      ASSERT_EQ(got[i], 0.0f) << s.name << " pad lane " << lane << " at " << i;
      ASSERT_FALSE(std::signbit(got[i])) << "pad lanes are +0.0f";
      continue;
    }
    if (bitwise) {
      ASSERT_EQ(got[i], want[i]) << s.name << " at " << i << " (bit for bit with the NCHW implicit GEMM)";
    } else {
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << s.name << " at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, NchwcConvTest, ::testing::ValuesIn(kConvCases),
                         [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

TEST(NchwcConv, ShapesCoverTheBitwiseComparisonWhereTheCpuHasImplicitTiles) {
  // The 3x3 cases over blocked X compare bit for bit exactly when the NCHW kernel takes
  // the implicit GEMM (an AVX2 or AVX-512 tile enabled); else within tolerance.
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 40, 24, 9), IsaEnabled(Isa::kAvx2));
  EXPECT_EQ(conv::ImplicitGemmApplies(2, 64, 32, 9), IsaEnabled(Isa::kAvx2));
  // The scalar tile is taken exactly when no SIMD tile is.
  const nchwc::PackedNchwcWeights p = nchwc::PackedNchwcWeights::Pack(40, 3, 1, 1, Random(120, 1).data());
  EXPECT_EQ(p.tile.blocked_fn == nchwc::ScalarBlockedTile().blocked_fn, !IsaEnabled(Isa::kAvx2));
}

StatusOr<std::vector<Value>> RunBadConv(std::vector<int64_t> x_shape, std::vector<int64_t> w_shape, int64_t group,
                                        bool constant_w) {
  KernelTester t("NchwcConv", 1, "ai.onnx_light");
  t.NodeName("nc9").Input(MakeTensor<float>(Shape(x_shape), Random(Product(x_shape), 1)));
  const Tensor w = MakeTensor<float>(Shape(w_shape), Random(Product(w_shape), 2));
  if (constant_w) {
    t.ConstantInput(w);
  } else {
    t.Input(w);
  }
  t.Attr("group", group);
  return t.Run(1);
}

TEST(NchwcConv, BlockCountMismatchIsAnErrorNamingOpNodeAndShapes) {
  auto out = RunBadConv({1, 2, 5, 5, 16}, {8, 40, 1, 1}, 1, true);  // 40 channels need 3 blocks
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  for (const char* part : {"NchwcConv", "nc9", "[1,2,5,5,16]", "[8,40,1,1]"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

TEST(NchwcConv, GroupOtherThanOneIsAnErrorNamingOpAndNode) {
  auto out = RunBadConv({1, 1, 5, 5, 16}, {8, 8, 3, 3}, 2, true);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  for (const char* part : {"NchwcConv", "nc9", "group"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

TEST(NchwcConv, WeightsThatAreNotConstantAreAnErrorAtCreation) {
  auto out = RunBadConv({1, 1, 5, 5, 16}, {8, 16, 3, 3}, 1, false);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  for (const char* part : {"NchwcConv", "nc9", "constant"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

TEST(NchwcConv, ResidualOfAnotherShapeIsAnErrorNamingTheShapes) {
  KernelTester t("NchwcConv", 1, "ai.onnx_light");
  t.NodeName("nc10")
      .Input(MakeTensor<float>({1, 1, 4, 4, 16}, Random(256, 1)))
      .ConstantInput(MakeTensor<float>({8, 16, 1, 1}, Random(128, 2)))
      .Input(MakeTensor<float>({8}, Random(8, 3)))
      .Input(MakeTensor<float>({1, 8, 4, 4}, Random(128, 4)));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  for (const char* part : {"nc10", "Z", "[1,8,4,4]", "[1,1,4,4,16]"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

}  // namespace
}  // namespace onnx_light
