// ai.onnx_light SqueezeExcitation: a hand-computed case (exact), random blocks of the
// MobileNetV3 and EfficientNet kinds against the formula evaluated in double, the same
// output for every participant count, and the errors bad inputs give. The whole graph
// rewrite is checked against onnx.reference in python/tests/fusion_rewrites_test.py.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::RandomFloats;
using testing::ToVector;

TEST(SqueezeExcitation, HandComputedReluThenHardSigmoid) {
  // Channel means 2 and -3; h = relu(0.5 * 2 - 0.5 * -3 + 0.25) = 2.75; pre-gates
  // 0.25 * 2.75 = 0.6875 and -0.125 * 2.75 + 0.5 = 0.15625; HardSigmoid(0.25, 0.5) gives
  // 0.671875 and 0.5390625; every value is exact in float.
  KernelTester t("SqueezeExcitation", 1, "ai.onnx_light");
  t.Input(MakeTensor<float>({1, 2, 1, 2}, {1, 3, -2, -4}))
      .Input(MakeTensor<float>({1, 2, 1, 1}, {0.5f, -0.5f}))
      .Input(MakeTensor<float>({1}, {0.25f}))
      .Input(MakeTensor<float>({2, 1, 1, 1}, {0.25f, -0.125f}))
      .Input(MakeTensor<float>({2}, {0.0f, 0.5f}))
      .Attr("activation", std::string("Relu"))
      .Attr("gate_activation", std::string("HardSigmoid"))
      .Attr("gate_activation_params", std::vector<float>{0.25f, 0.5f});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()),
            (std::vector<float>{0.671875f, 3 * 0.671875f, -2 * 0.5390625f, -4 * 0.5390625f}));
}

struct Block {
  const char* name;
  std::vector<int64_t> x_shape;  // [N, C, spatial...]
  int64_t reduced;
  const char* activation;  // inner, "" for none
  std::vector<float> activation_params;
  const char* gate;
  std::vector<float> gate_params;
  bool biases;
};

double Activate(const std::string& name, const std::vector<float>& params, double v) {
  if (name == "Relu") return v > 0 ? v : 0;
  if (name == "Swish") return v / (1 + std::exp(-params.at(0) * v));
  if (name == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (name == "HardSigmoid") return std::fmin(1.0, std::fmax(0.0, params.at(0) * v + params.at(1)));
  if (name == "HardSwish") return v * std::fmin(1.0, std::fmax(0.0, v / 6 + 0.5));
  return v;
}

// Y of the block, from its formula in double.
std::vector<double> Reference(const Block& b, const std::vector<float>& x, const std::vector<float>& w1,
                              const std::vector<float>& b1, const std::vector<float>& w2,
                              const std::vector<float>& b2) {
  const int64_t n_images = b.x_shape[0], c = b.x_shape[1], r = b.reduced;
  int64_t plane = 1;
  for (size_t i = 2; i < b.x_shape.size(); ++i) plane *= b.x_shape[i];
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < n_images; ++n) {
    std::vector<double> mean(c), hidden(r);
    for (int64_t ch = 0; ch < c; ++ch) {
      double s = 0;
      for (int64_t i = 0; i < plane; ++i) s += x[(n * c + ch) * plane + i];
      mean[ch] = s / plane;
    }
    for (int64_t j = 0; j < r; ++j) {
      double s = b.biases ? b1[j] : 0;
      for (int64_t ch = 0; ch < c; ++ch) s += w1[j * c + ch] * mean[ch];
      hidden[j] = Activate(b.activation, b.activation_params, s);
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      double s = b.biases ? b2[ch] : 0;
      for (int64_t j = 0; j < r; ++j) s += w2[ch * r + j] * hidden[j];
      const double gate = Activate(b.gate, b.gate_params, s);
      for (int64_t i = 0; i < plane; ++i) y[(n * c + ch) * plane + i] = gate * x[(n * c + ch) * plane + i];
    }
  }
  return y;
}

const Block kBlocks[] = {
    {"MobileNetV3", {1, 96, 7, 7}, 24, "Relu", {}, "HardSigmoid", {1.0f / 6, 0.5f}, true},
    {"EfficientNet", {2, 40, 14, 14}, 10, "Swish", {1.0f}, "Sigmoid", {}, true},
    {"NoBiasNoInnerActivation", {3, 8, 5, 3}, 3, "", {}, "Sigmoid", {}, false},
    {"Volumetric", {1, 6, 2, 3, 4}, 2, "HardSwish", {}, "HardSigmoid", {0.2f, 0.5f}, true},
};

class SqueezeExcitationBlockTest : public ::testing::TestWithParam<Block> {};

TEST_P(SqueezeExcitationBlockTest, MatchesTheFormulaForEveryParticipantCount) {
  const Block& b = GetParam();
  const int64_t c = b.x_shape[1], r = b.reduced;
  int64_t size = 1;
  for (int64_t d : b.x_shape) size *= d;
  const std::vector<float> x = RandomFloats(size, 1), w1 = RandomFloats(r * c, 2), b1 = RandomFloats(r, 3),
                           w2 = RandomFloats(c * r, 4), b2 = RandomFloats(c, 5);
  KernelTester t("SqueezeExcitation", 1, "ai.onnx_light");
  t.Input(MakeTensor<float>(Shape(b.x_shape), x));
  t.Input(MakeTensor<float>({r, c, 1, 1}, w1));
  b.biases ? t.Input(MakeTensor<float>({r}, b1)) : t.MissingInput();
  t.Input(MakeTensor<float>({c, r, 1, 1}, w2));
  if (b.biases) t.Input(MakeTensor<float>({c}, b2));
  if (b.activation[0] != '\0') t.Attr("activation", std::string(b.activation));
  if (!b.activation_params.empty()) t.Attr("activation_params", b.activation_params);
  t.Attr("gate_activation", std::string(b.gate));
  if (!b.gate_params.empty()) t.Attr("gate_activation_params", b.gate_params);
  // Blocks of a few planes, so that every participant count splits the planes.
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockElements, int64_t{64});
  const std::vector<Value> out = testing::DeterministicOutputs(t, {.expect_regions = true});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].tensor().shape(), Shape(b.x_shape));
  const std::vector<float> got = ToVector<float>(out[0].tensor());
  const std::vector<double> want = Reference(b, x, w1, b1, w2, b2);
  // |x|, |w|, |b| < 1 and at most 196 terms per mean and 40 per product: float rounding
  // of the sums stays below 1e-5 of the operands' scale, and the vector Sigmoid is within
  // a few ulp; 2e-6 relative plus 2e-6 absolute covers both with margin, while any wrong
  // channel, weight layout or activation moves outputs by far more.
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 + 2e-6 * std::fabs(want[i])) << b.name << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Blocks, SqueezeExcitationBlockTest, ::testing::ValuesIn(kBlocks),
                         [](const ::testing::TestParamInfo<Block>& info) { return std::string(info.param.name); });

TEST(SqueezeExcitation, SmallInputRunsWithoutARegionAtTheDefaults) {
  // 2 x 7 x 7 elements are far below parallel.minimum_elements: no region opens.
  KernelTester t("SqueezeExcitation", 1, "ai.onnx_light");
  t.Input(MakeTensor<float>({1, 2, 7, 7}, RandomFloats(98, 1)))
      .Input(MakeTensor<float>({1, 2, 1, 1}, {1, 1}))
      .MissingInput()
      .Input(MakeTensor<float>({2, 1, 1, 1}, {1, 1}))
      .Attr("gate_activation", std::string("Sigmoid"))
      .PortableDefaults();
  auto run = t.RunWithDetails(4);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run->regions.empty());
}

struct BadInput {
  const char* name;
  std::vector<int64_t> x_shape, w1_shape, w2_shape;
  const char* gate;
  const char* expected;  // part of the message
};

class SqueezeExcitationErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(SqueezeExcitationErrorTest, NamesTheNodeAndTheOffendingShape) {
  const BadInput& b = GetParam();
  auto fill = [](const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return MakeTensor<float>(Shape(s), std::vector<float>(n, 0.5f));
  };
  KernelTester t("SqueezeExcitation", 1, "ai.onnx_light");
  t.NodeName("se_block").Input(fill(b.x_shape)).Input(fill(b.w1_shape)).MissingInput().Input(fill(b.w2_shape));
  t.Attr("gate_activation", std::string(b.gate));
  auto out = t.Run(1);
  ASSERT_FALSE(out.ok()) << b.name;
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("se_block"), std::string::npos) << message;
  EXPECT_NE(message.find(b.expected), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, SqueezeExcitationErrorTest,
    ::testing::Values(BadInput{"XOfRankTwo", {2, 4}, {2, 4, 1, 1}, {4, 2, 1, 1}, "Sigmoid", "[2,4]"},
                      BadInput{"W1ReadsOtherChannels", {1, 4, 3, 3}, {2, 5, 1, 1}, {4, 2, 1, 1}, "Sigmoid", "W1"},
                      BadInput{"W1NotPointwise", {1, 4, 3, 3}, {2, 4, 3, 3}, {4, 2, 1, 1}, "Sigmoid", "W1"},
                      BadInput{"W2GatesOtherChannels", {1, 4, 3, 3}, {2, 4, 1, 1}, {3, 2, 1, 1}, "Sigmoid", "W2"},
                      BadInput{"UnknownGate", {1, 4, 3, 3}, {2, 4, 1, 1}, {4, 2, 1, 1}, "Softplus", "Softplus"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnx_light
