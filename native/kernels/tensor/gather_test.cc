#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(GatherTest, OnnxExamplesAxis0AndAxis1) {
  // ONNX's Gather examples.
  KernelTester a("Gather", 13);
  a.Input(MakeTensor<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}))
      .Input(MakeTensor<int64_t>({2, 2}, {0, 1, 1, 2}));
  Tensor y = RunAllCounts(a)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}));
  KernelTester b("Gather", 13);
  b.Input(MakeTensor<float>({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}))
      .Input(MakeTensor<int32_t>({1, 2}, {0, -1}))
      .Attr("axis", int64_t{1});
  y = RunAllCounts(b)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({3, 1, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
}

TEST(GatherTest, LargeRowsStringsScalarsAndEmpty) {
  // data[r][c] = r * 1000 + c: gathered rows are predictable.
  std::vector<int32_t> data(500 * 300);
  for (int r = 0; r < 500; ++r)
    for (int c = 0; c < 300; ++c) data[r * 300 + c] = r * 1000 + c;
  std::vector<int64_t> idx(1000);
  for (int i = 0; i < 1000; ++i) idx[i] = (i * 37) % 500 - (i % 2 ? 500 : 0);
  KernelTester t("Gather", 13);
  t.Input(MakeTensor<int32_t>({500, 300}, data)).Input(MakeTensor<int64_t>({1000}, idx));
  const auto y = ToVector<int32_t>(RunAllCounts(t, 4096)[0].tensor());
  for (int i = 0; i < 1000; i += 97) {
    EXPECT_EQ(y[i * 300 + 7], ((i * 37) % 500) * 1000 + 7) << i;
  }
  KernelTester s("Gather", 13);
  s.Input(MakeTensor<std::string>({3}, {"a", "b", "c"})).Input(MakeTensor<int64_t>({}, {2}));
  Tensor z = RunAllCounts(s)[0].tensor();
  EXPECT_EQ(z.shape(), Shape({}));
  EXPECT_EQ(ToVector<std::string>(z), std::vector<std::string>{"c"});
  KernelTester e("Gather", 13);
  e.Input(MakeTensor<float>({0, 3}, {})).Input(MakeTensor<int64_t>({2}, {0, 1})).Attr("axis", int64_t{1});
  EXPECT_EQ(RunAllCounts(e)[0].tensor().shape(), Shape({0, 2}));
}

TEST(GatherTest, OutOfRangeIndexNamesNodeIndexAndShape) {
  KernelTester t("Gather", 13);
  t.NodeName("g1").Input(MakeTensor<float>({3, 2}, Iota<float>(6))).Input(MakeTensor<int64_t>({2}, {0, 3}));
  const std::string m = ErrorOf(t);
  EXPECT_NE(m.find("g1"), std::string::npos) << m;
  EXPECT_NE(m.find("index 3"), std::string::npos) << m;
  EXPECT_NE(m.find("[3,2]"), std::string::npos) << m;
  KernelTester axis("Gather", 13);
  axis.Input(MakeTensor<float>({3}, Iota<float>(3))).Input(MakeTensor<int64_t>({1}, {0})).Attr("axis", int64_t{1});
  EXPECT_NE(ErrorOf(axis).find("axis"), std::string::npos);
  KernelTester type("Gather", 13);
  type.Input(MakeTensor<float>({3}, Iota<float>(3))).Input(MakeTensor<float>({1}, {0}));
  EXPECT_NE(ErrorOf(type).find("int32 or int64"), std::string::npos);
}

TEST(GatherElementsTest, OnnxExamplesAndLarge) {
  KernelTester a("GatherElements", 13);
  a.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor<int64_t>({2, 2}, {0, 0, 1, 0}))
      .Attr("axis", int64_t{1});
  EXPECT_EQ(ToVector<float>(RunAllCounts(a)[0].tensor()), (std::vector<float>{1, 1, 4, 3}));
  KernelTester b("GatherElements", 13);
  b.Input(MakeTensor<float>({3, 3}, Iota<float>(9, 1))).Input(MakeTensor<int32_t>({2, 3}, {1, 2, 0, 2, 0, -3}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(b)[0].tensor()), (std::vector<float>{4, 8, 3, 7, 2, 3}));
  // Reversal along axis 1 of a [40, 50, 30] tensor, where data = its flat index.
  std::vector<int64_t> idx(40 * 50 * 30);
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 50; ++j)
      for (int k = 0; k < 30; ++k) idx[(i * 50 + j) * 30 + k] = 49 - j;
  KernelTester c("GatherElements", 13);
  c.Input(MakeTensor<int32_t>({40, 50, 30}, Iota<int32_t>(60000)))
      .Input(MakeTensor<int64_t>({40, 50, 30}, idx))
      .Attr("axis", int64_t{-2});
  const auto y = ToVector<int32_t>(RunAllCounts(c, 64)[0].tensor());
  EXPECT_EQ(y[(3 * 50 + 4) * 30 + 5], (3 * 50 + 45) * 30 + 5);
  KernelTester bad("GatherElements", 13);
  bad.NodeName("ge").Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>({1, 2}, {0, 2}));
  EXPECT_NE(ErrorOf(bad).find("index 2"), std::string::npos);
  KernelTester rank("GatherElements", 13);
  rank.Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4})).Input(MakeTensor<int64_t>({2}, {0, 1}));
  EXPECT_NE(ErrorOf(rank).find("same rank"), std::string::npos);
}

// data[r][c] = r * cols + c (as T): every gathered value names where it was read from.
template <typename T, typename I>
void CheckTopKLayouts() {
  constexpr int64_t kRows = 64, kCols = 100, kK = 5;
  std::vector<T> data(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) data[i] = static_cast<T>(i % 120);
  // Along the last axis: [64, 5] indices into each row, negatives counting from the end.
  std::vector<I> last(kRows * kK);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kK; ++j) last[r * kK + j] = static_cast<I>((r * 7 + j * 31) % kCols - (j % 2 ? kCols : 0));
  KernelTester a("GatherElements", 13);
  a.Input(MakeTensor<T>({kRows, kCols}, data)).Input(MakeTensor<I>({kRows, kK}, last)).Attr("axis", int64_t{1});
  const auto ya = ToVector<T>(RunAllCounts(a, 8)[0].tensor());
  ASSERT_EQ(ya.size(), static_cast<size_t>(kRows * kK));
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t j = 0; j < kK; ++j) {
      const int64_t col = (r * 7 + j * 31) % kCols;
      EXPECT_EQ(ya[r * kK + j], static_cast<T>((r * kCols + col) % 120)) << r << "," << j;
    }
  }
  // Along axis 0: [5, 100] indices choosing a data row per column.
  std::vector<I> outer(kK * kCols);
  for (int64_t j = 0; j < kK; ++j)
    for (int64_t c = 0; c < kCols; ++c)
      outer[j * kCols + c] = static_cast<I>((j * 13 + c) % kRows - (c % 3 ? 0 : kRows));
  KernelTester b("GatherElements", 13);
  b.Input(MakeTensor<T>({kRows, kCols}, data)).Input(MakeTensor<I>({kK, kCols}, outer)).Attr("axis", int64_t{0});
  const auto yb = ToVector<T>(RunAllCounts(b, 64)[0].tensor());
  ASSERT_EQ(yb.size(), static_cast<size_t>(kK * kCols));
  for (int64_t j = 0; j < kK; ++j) {
    for (int64_t c = 0; c < kCols; ++c) {
      const int64_t row = (j * 13 + c) % kRows;
      EXPECT_EQ(yb[j * kCols + c], static_cast<T>((row * kCols + c) % 120)) << j << "," << c;
    }
  }
}

TEST(GatherElementsTest, LastAxisAndOuterAxisEveryWidthAndIndexType) {
  CheckTopKLayouts<float, int64_t>();
  CheckTopKLayouts<float, int32_t>();
  CheckTopKLayouts<uint8_t, int64_t>();
  CheckTopKLayouts<int16_t, int32_t>();
  CheckTopKLayouts<double, int64_t>();
  CheckTopKLayouts<int64_t, int32_t>();
}

TEST(GatherElementsTest, IndicesSmallerThanDataOnNonGatherAxes) {
  // data [3, 4, 2] = flat index; indices [2, 2, 2] along axis 1 read a sub-block.
  KernelTester t("GatherElements", 13);
  t.Input(MakeTensor<int32_t>({3, 4, 2}, Iota<int32_t>(24)))
      .Input(MakeTensor<int64_t>({2, 2, 2}, {3, 0, -1, 1, 2, 2, 0, -4}))
      .Attr("axis", int64_t{1});
  // out[i][j][k] = data[i][idx][k] = i * 8 + idx * 2 + k.
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(t)[0].tensor()), (std::vector<int32_t>{6, 1, 6, 3, 12, 13, 8, 9}));
}

TEST(GatherElementsTest, OutOfRangeIndexNamesNodeAndIndex) {
  KernelTester t("GatherElements", 13);
  t.NodeName("ge_node")
      .Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(MakeTensor<int32_t>({2, 1}, {0, -4}))
      .Attr("axis", int64_t{1});
  auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().ToString();
  EXPECT_NE(m.find("ge_node"), std::string::npos) << m;
  EXPECT_NE(m.find("index -4"), std::string::npos) << m;
  EXPECT_NE(m.find("float[2,3]"), std::string::npos) << m;
}

// Indices are checked in the gather's own pass, block by block: with several bad ones in
// different blocks (forced parallel, one-element blocks), the error still names the first
// by position, whatever the participant count.
TEST(GatherElementsTest, OutOfRangeIndexOnTheParallelPathNamesTheFirst) {
  for (int threads : {1, 2, 4}) {
    KernelTester t("GatherElements", 13);
    t.NodeName("ge_rows")
        .Input(MakeTensor<float>({4, 3}, Iota<float>(12)))
        .Input(MakeTensor<int64_t>({3, 3}, {0, 1, 2, /**/ 3, 0, -9, /**/ 1, 7, 0}))
        .Attr("axis", int64_t{0})
        .Tuning(param::kMinimumElements, int64_t{1})
        .Tuning(param::kBlockElements, int64_t{1});
    auto r = t.Run(threads);
    ASSERT_FALSE(r.ok()) << threads;
    const std::string m = r.status().ToString();
    EXPECT_NE(m.find("ge_rows"), std::string::npos) << m;
    EXPECT_NE(m.find("index -9 at position 5"), std::string::npos) << m;
  }
}

TEST(GatherNdTest, OnnxExamplesWithBatchDims) {
  KernelTester a("GatherND", 13);
  a.Input(MakeTensor<int32_t>({2, 2}, {0, 1, 2, 3})).Input(MakeTensor<int64_t>({2, 2}, {0, 0, 1, 1}));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(a)[0].tensor()), (std::vector<int32_t>{0, 3}));
  KernelTester b("GatherND", 13);
  b.Input(MakeTensor<int32_t>({2, 2}, {0, 1, 2, 3})).Input(MakeTensor<int64_t>({2, 1}, {1, 0}));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(b)[0].tensor()), (std::vector<int32_t>{2, 3, 0, 1}));
  KernelTester c("GatherND", 13);
  c.Input(MakeTensor<int32_t>({2, 2, 2}, Iota<int32_t>(8)))
      .Input(MakeTensor<int64_t>({2, 1}, {1, 0}))
      .Attr("batch_dims", int64_t{1});
  Tensor y = RunAllCounts(c)[0].tensor();
  EXPECT_EQ(y.shape(), Shape({2, 2}));
  EXPECT_EQ(ToVector<int32_t>(y), (std::vector<int32_t>{2, 3, 4, 5}));
  KernelTester bad("GatherND", 13);
  bad.NodeName("gnd").Input(MakeTensor<int32_t>({2, 2}, {0, 1, 2, 3})).Input(MakeTensor<int64_t>({1, 2}, {0, -3}));
  const std::string m = ErrorOf(bad);
  EXPECT_NE(m.find("index -3"), std::string::npos) << m;
  KernelTester deep("GatherND", 13);
  deep.Input(MakeTensor<int32_t>({2, 2}, {0, 1, 2, 3})).Input(MakeTensor<int64_t>({1, 3}, {0, 0, 0}));
  EXPECT_FALSE(deep.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
