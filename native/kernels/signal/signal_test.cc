#include <cmath>
#include <complex>
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

// Serial run plus 2, 4 and 8 participants with one bin per block; all must be identical.
std::vector<float> RunAllCounts(KernelTester& t, Shape expected_shape) {
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{1});
  return testing::SerialMatchesParticipants<float>(t, expected_shape);
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "at " << i;
}

TEST(DftTest, ForwardRealSignal) {
  KernelTester t("DFT", 17);
  t.Input(MakeTensor<float>({1, 4, 1}, {1, 2, 3, 4}));
  // sum x[n] (-i)^(kn): 10, -2+2i, -2, -2-2i.
  ExpectNear(RunAllCounts(t, Shape{1, 4, 2}), {10, 0, -2, 2, -2, 0, -2, -2});
}

TEST(DftTest, OnesidedKeepsTheFirstHalfPlusOne) {
  KernelTester t("DFT", 20);
  t.Input(MakeTensor<float>({1, 4, 1}, {1, 2, 3, 4})).Attr("onesided", int64_t{1});
  ExpectNear(RunAllCounts(t, Shape{1, 3, 2}), {10, 0, -2, 2, -2, 0});
}

TEST(DftTest, DftLengthZeroPads) {
  KernelTester t("DFT", 20);
  t.Input(MakeTensor<float>({1, 2, 1}, {1, 1})).Input(MakeTensor<int64_t>({}, {4}));
  ExpectNear(RunAllCounts(t, Shape{1, 4, 2}), {2, 0, 1, -1, 0, 0, 1, 1});
}

TEST(DftTest, InverseRestoresTheSignal) {
  KernelTester t("DFT", 17);
  t.Input(MakeTensor<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2})).Attr("inverse", int64_t{1});
  ExpectNear(RunAllCounts(t, Shape{1, 4, 2}), {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST(DftTest, OnesidedInverseGivesTheRealSignal) {
  KernelTester t("DFT", 20);
  t.Input(MakeTensor<float>({1, 3, 2}, {10, 0, -2, 2, -2, 0})).Attr("inverse", int64_t{1}).Attr("onesided", int64_t{1});
  ExpectNear(RunAllCounts(t, Shape{1, 4, 1}), {1, 2, 3, 4});
}

TEST(DftTest, AxisInputSelectsTheTransformedDimension) {
  KernelTester t("DFT", 20);
  // [[1, 2], [3, 4]] transformed along dimension 1 (the columns): [4, -2] and [6, -2].
  t.Input(MakeTensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})).MissingInput().Input(MakeTensor<int64_t>({}, {1}));
  ExpectNear(RunAllCounts(t, Shape{1, 2, 2, 2}), {4, 0, 6, 0, -2, 0, -2, 0});
}

TEST(DftTest, LargeDoubleSignalIsIdenticalForEveryParticipantCount) {
  std::vector<double> x(3 * 257 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * i) + 0.25 * std::cos(3.1 * i);
  KernelTester t("DFT", 20);
  t.Input(MakeTensor<double>({3, 257, 2}, x))
      .Tuning(param::kMinimumElements, int64_t{1})
      .Tuning(param::kBlockMultiplyAdds, int64_t{300});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  ASSERT_FALSE(serial.empty());
  // Bin 0 of batch 1 is the plain sum of that batch's samples.
  std::complex<double> sum = 0;
  for (int n = 0; n < 257; ++n) sum += std::complex<double>(x[(257 + n) * 2], x[(257 + n) * 2 + 1]);
  const double* y = serial.at(0).tensor().data<double>();
  EXPECT_NEAR(y[257 * 2], sum.real(), 1e-9);
  EXPECT_NEAR(y[257 * 2 + 1], sum.imag(), 1e-9);
}

TEST(DftTest, RejectsBadShapesAndAxes) {
  KernelTester t("DFT", 20);
  t.Input(MakeTensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}));
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("float[1,2,3]"), std::string::npos) << r.status().ToString();
  KernelTester a("DFT", 20);
  a.Input(MakeTensor<float>({1, 2, 1}, {1, 2})).MissingInput().Input(MakeTensor<int64_t>({}, {-1}));
  EXPECT_FALSE(a.Run(1).ok());  // the last dimension holds real/imaginary parts
}

TEST(StftTest, FramesWithoutAndWithWindow) {
  {
    KernelTester t("STFT", 17);
    t.Input(MakeTensor<float>({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7}))
        .Input(MakeTensor<int64_t>({}, {2}))
        .MissingInput()
        .Input(MakeTensor<int64_t>({}, {4}));
    // Frames [0..3], [2..5], [4..7]: bin 0 is the frame sum, bins 1 and 2 are -2+2i and -2.
    ExpectNear(RunAllCounts(t, Shape{1, 3, 3, 2}), {6, 0, -2, 2, -2, 0, 14, 0, -2, 2, -2, 0, 22, 0, -2, 2, -2, 0});
  }
  {
    KernelTester t("STFT", 17);
    t.Input(MakeTensor<float>({1, 4, 1}, {0, 1, 2, 3}))
        .Input(MakeTensor<int64_t>({}, {4}))
        .Input(MakeTensor<float>({4}, {0, 0.5f, 1, 0.5f}));
    // Windowed frame [0, 0.5, 2, 1.5]: 4, -2+i, 0.
    ExpectNear(RunAllCounts(t, Shape{1, 1, 3, 2}), {4, 0, -2, 1, 0, 0});
  }
}

TEST(StftTest, RejectsFrameLongerThanSignal) {
  KernelTester t("STFT", 17);
  t.Input(MakeTensor<float>({1, 4, 1}, {0, 1, 2, 3}))
      .Input(MakeTensor<int64_t>({}, {1}))
      .MissingInput()
      .Input(MakeTensor<int64_t>({}, {5}));
  EXPECT_FALSE(t.Run(1).ok());
}

std::vector<float> Window(const char* op, int64_t size, int64_t periodic) {
  KernelTester t(op, 17);
  t.Input(MakeTensor<int64_t>({}, {size})).Attr("periodic", periodic);
  auto r = t.Run(1);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? ToVector<float>(r->at(0).tensor()) : std::vector<float>{};
}

TEST(WindowTest, KnownValues) {
  ExpectNear(Window("HannWindow", 4, 1), {0, 0.5f, 1, 0.5f});
  ExpectNear(Window("HannWindow", 5, 0), {0, 0.5f, 1, 0.5f, 0});
  ExpectNear(Window("HammingWindow", 4, 1), {4.0f / 46, 25.0f / 46, 1, 25.0f / 46});
  ExpectNear(Window("BlackmanWindow", 3, 0), {0, 1, 0});
  ExpectNear(Window("HannWindow", 1, 0), {1});
}

TEST(MelWeightMatrixTest, TrianglesPeakAtOne) {
  KernelTester t("MelWeightMatrix", 17);
  t.Input(MakeTensor<int64_t>({}, {8}))
      .Input(MakeTensor<int64_t>({}, {64}))
      .Input(MakeTensor<int64_t>({}, {8000}))
      .Input(MakeTensor<float>({}, {0.0f}))
      .Input(MakeTensor<float>({}, {4000.0f}));
  auto r = t.Run(1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& w = r->at(0).tensor();
  ASSERT_EQ(w.shape(), (Shape{33, 8}));
  for (int m = 0; m < 8; ++m) {
    float peak = 0;
    for (int j = 0; j < 33; ++j) peak = std::max(peak, w.data<float>()[j * 8 + m]);
    EXPECT_EQ(peak, 1.0f) << "filter " << m;
  }
}

// Both outputs (output, present_state) of CausalConvWithState, identical for 1, 2, 4 and 8
// participants.
std::vector<std::vector<float>> RunCausalConv(KernelTester& t, const Shape& output_shape) {
  t.Outputs(2).Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockMultiplyAdds, int64_t{1});
  std::vector<float> output = testing::SerialMatchesParticipants<float>(t, output_shape);  // checks both outputs
  auto serial = t.Run(1);
  if (output.empty() || !serial.ok()) return {};
  return {output, ToVector<float>(serial->at(1).tensor())};
}

TEST(CausalConvWithStateTest, ConvolvesPastStateThenInputAndCarriesTheTail) {
  // Channel 0 picks the value two steps back; channel 1 mixes three taps plus a bias.
  KernelTester t("CausalConvWithState", 27);
  t.Input(MakeTensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(MakeTensor<float>({2, 1, 3}, {1, 0, 0, 0.5f, 0.25f, 1}))
      .Input(MakeTensor<float>({2}, {0, 1}))
      .Input(MakeTensor<float>({1, 2, 2}, {7, 8, 9, 10}));
  const auto out = RunCausalConv(t, Shape({1, 2, 3}));
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {7, 8, 1, 12, 12, 10.25f});
  ExpectNear(out[1], {2, 3, 5, 6});

  KernelTester silu("CausalConvWithState", 27);  // no bias, no past state: zeros
  silu.Input(MakeTensor<float>({1, 1, 3}, {1, -2, 3}))
      .Input(MakeTensor<float>({1, 1, 2}, {1, 1}))
      .Attr("activation", std::string("silu"));
  const auto s = RunCausalConv(silu, Shape({1, 1, 3}));
  ASSERT_EQ(s.size(), 2u);
  std::vector<float> expected;
  for (float v : {1.0f, -1.0f, 1.0f}) expected.push_back(v / (1 + std::exp(-v)));
  ExpectNear(s[0], expected);
  ExpectNear(s[1], {3});
}

TEST(CausalConvWithStateTest, RejectsMismatchedShapes) {
  KernelTester t("CausalConvWithState", 27);
  t.Input(MakeTensor<float>({1, 2, 3}, std::vector<float>(6, 1)))
      .Input(MakeTensor<float>({2, 1, 3}, std::vector<float>(6, 1)))
      .Input(MakeTensor<float>({2}, {0, 0}))
      .Input(MakeTensor<float>({1, 2, 3}, std::vector<float>(6, 1)))  // k - 1 = 2 columns expected
      .Outputs(2);
  const Status s = t.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("past_state must be (1, 2, 2)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace onnx_light
