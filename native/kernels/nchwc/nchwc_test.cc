// The blocked-channel (NCHW16c) kernels of README.md: the reorder rows of every ISA against
// the portable one; ReorderInput against the layout's index formula (pad lanes +0.0f) and
// ReorderOutput back to X bit for bit, for channel counts with and without a partial last
// block, at every participant count (serial == parallel bits); errors naming op, node and
// shapes. Built three times (nchwc_test, _avx2, _portable): the ops dispatch to the best
// variant under the cap.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
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
std::vector<Value> SerialEqualsParallel(KernelTester& t) {
  std::vector<Value> serial = testing::DeterministicOutputs(t, {.expect_regions = true});
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

}  // namespace
}  // namespace onnx_light
