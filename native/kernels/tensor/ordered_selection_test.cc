#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

// These kernels are serial: outputs must still not depend on the executor.
// Returns the serial outputs, detached, after the determinism check.
std::vector<Value> RunBoth(KernelTester& t) {
  std::vector<Value> detached;
  for (const Value& v : DeterministicOutputs(t)) detached.push_back(Detach(v));
  return detached;
}

TEST(NonZeroTest, IndicesPerDimension) {
  KernelTester t("NonZero", 13);
  t.Input(MakeTensor<bool>({2, 2}, {true, false, true, true}));
  Tensor y = RunBoth(t)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(ToVector<int64_t>(y), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  KernelTester f("NonZero", 13);
  f.Input(MakeTensor<float>({4}, {0.0f, -0.0f, NAN, 2.0f}));
  EXPECT_EQ(ToVector<int64_t>(RunBoth(f)[0].tensor()), (std::vector<int64_t>{2, 3}));
  KernelTester s("NonZero", 13);
  s.Input(MakeTensor<std::string>({3}, {"", "a", ""}));
  EXPECT_EQ(ToVector<int64_t>(RunBoth(s)[0].tensor()), (std::vector<int64_t>{1}));
}

TEST(CompressTest, AxisAndFlat) {
  Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  KernelTester rows("Compress", 11);
  rows.Input(x).Input(MakeTensor<bool>({3}, {false, true, true})).Attr("axis", int64_t{0});
  EXPECT_EQ(ToVector<float>(RunBoth(rows)[0].tensor()), (std::vector<float>{3, 4, 5, 6}));
  KernelTester cols("Compress", 11);
  cols.Input(x).Input(MakeTensor<bool>({2}, {false, true})).Attr("axis", int64_t{-1});
  EXPECT_EQ(ToVector<float>(RunBoth(cols)[0].tensor()), (std::vector<float>{2, 4, 6}));
  KernelTester flat("Compress", 11);
  flat.Input(x).Input(MakeTensor<bool>({5}, {false, true, false, false, true}));
  EXPECT_EQ(ToVector<float>(RunBoth(flat)[0].tensor()), (std::vector<float>{2, 5}));
  KernelTester bad("Compress", 11);
  bad.NodeName("cp").Input(x).Input(MakeTensor<bool>({4}, {true, true, true, true})).Attr("axis", int64_t{0});
  EXPECT_NE(ErrorOf(bad).find("longer"), std::string::npos);
}

TEST(UniqueTest, OnnxExamples) {
  Tensor x = MakeTensor<float>({6}, {2, 1, 1, 3, 4, 3});
  KernelTester unsorted("Unique", 11);
  unsorted.Outputs(4).Input(x).Attr("sorted", int64_t{0});
  auto u = RunBoth(unsorted);
  EXPECT_EQ(ToVector<float>(u[0].tensor()), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(ToVector<int64_t>(u[1].tensor()), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(ToVector<int64_t>(u[2].tensor()), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(ToVector<int64_t>(u[3].tensor()), (std::vector<int64_t>{1, 2, 2, 1}));
  KernelTester sorted("Unique", 11);
  sorted.Outputs(4).Input(x);
  auto s = RunBoth(sorted);
  EXPECT_EQ(ToVector<float>(s[0].tensor()), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(ToVector<int64_t>(s[1].tensor()), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(ToVector<int64_t>(s[2].tensor()), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(ToVector<int64_t>(s[3].tensor()), (std::vector<int64_t>{2, 1, 2, 1}));
  KernelTester rows("Unique", 11);
  rows.Outputs(4).Input(MakeTensor<int32_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})).Attr("axis", int64_t{0});
  auto r = RunBoth(rows);
  EXPECT_EQ(ToVector<int32_t>(r[0].tensor()), (std::vector<int32_t>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(ToVector<int64_t>(r[2].tensor()), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(ToVector<int64_t>(r[3].tensor()), (std::vector<int64_t>{2, 1}));
  KernelTester nan("Unique", 11);
  nan.Input(MakeTensor<double>({4}, {NAN, 1, NAN, 0}));
  EXPECT_EQ(RunBoth(nan)[0].tensor().shape(), Shape({3}));
}

}  // namespace
}  // namespace onnx_light
