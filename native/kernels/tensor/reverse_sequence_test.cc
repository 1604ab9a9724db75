#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(ReverseSequenceTest, TimeMajorAndBatchMajor) {
  // ONNX example: time-major [4, 4], sequence_lens [4, 3, 2, 1].
  KernelTester t("ReverseSequence", 10);
  t.Input(MakeTensor<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}))
      .Input(MakeTensor<int64_t>({4}, {4, 3, 2, 1}))
      .Attr("time_axis", int64_t{0})
      .Attr("batch_axis", int64_t{1});
  EXPECT_EQ(ToVector<float>(RunAllCounts(t)[0].tensor()),
            (std::vector<float>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  KernelTester b("ReverseSequence", 10);
  b.Input(MakeTensor<float>({4, 4}, Iota<float>(16)))
      .Input(MakeTensor<int64_t>({4}, {1, 2, 3, 4}))
      .Attr("time_axis", int64_t{1})
      .Attr("batch_axis", int64_t{0});
  EXPECT_EQ(ToVector<float>(RunAllCounts(b)[0].tensor()),
            (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  KernelTester bad("ReverseSequence", 10);
  bad.NodeName("rs").Input(MakeTensor<float>({2, 2}, Iota<float>(4))).Input(MakeTensor<int64_t>({2}, {3, 1}));
  EXPECT_NE(ErrorOf(bad).find("sequence_lens[0]"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
