#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(ScatterElementsTest, OnnxExamplesAndReductions) {
  KernelTester a("ScatterElements", 18);
  a.Input(MakeTensor<float>({3, 3}, std::vector<float>(9, 0)))
      .Input(MakeTensor<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1}))
      .Input(MakeTensor<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(a)[0].tensor()),
            (std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f}));
  KernelTester b("ScatterElements", 18);
  b.Input(MakeTensor<float>({1, 5}, {1, 2, 3, 4, 5}))
      .Input(MakeTensor<int32_t>({1, 2}, {1, -2}))
      .Input(MakeTensor<float>({1, 2}, {1.1f, 2.1f}))
      .Attr("axis", int64_t{1});
  EXPECT_EQ(ToVector<float>(RunAllCounts(b)[0].tensor()), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  // Repeated indices with each reduction: applied in index order.
  for (auto [mode, expected] : std::vector<std::pair<std::string, float>>{
           {"add", 1 + 2 + 3 + 4}, {"mul", 1 * 2 * 3 * 4}, {"max", 4}, {"min", 1}}) {
    KernelTester r("ScatterElements", 18);
    r.Input(MakeTensor<float>({1, 2}, {1, 10}))
        .Input(MakeTensor<int64_t>({1, 3}, {0, 0, 0}))
        .Input(MakeTensor<float>({1, 3}, {2, 3, 4}))
        .Attr("axis", int64_t{1})
        .Attr("reduction", mode);
    const auto y = ToVector<float>(RunAllCounts(r)[0].tensor());
    EXPECT_EQ(y[0], expected) << mode;
    EXPECT_EQ(y[1], 10) << mode;
  }
}

TEST(ScatterElementsTest, LargeCopyPathAndErrors) {
  std::vector<int64_t> idx(100);
  for (int i = 0; i < 100; ++i) idx[i] = 999 - i;
  KernelTester t("ScatterElements", 13);
  t.Input(MakeTensor<int32_t>({1000}, Iota<int32_t>(1000)))
      .Input(MakeTensor<int64_t>({100}, idx))
      .Input(MakeTensor<int32_t>({100}, std::vector<int32_t>(100, -1)));
  const auto y = ToVector<int32_t>(RunAllCounts(t, 16)[0].tensor());
  EXPECT_EQ(y[899], 899);
  EXPECT_EQ(y[900], -1);
  KernelTester bad("ScatterElements", 13);
  bad.NodeName("se")
      .Input(MakeTensor<float>({3}, {1, 2, 3}))
      .Input(MakeTensor<int64_t>({1}, {3}))
      .Input(MakeTensor<float>({1}, {0}));
  EXPECT_NE(ErrorOf(bad).find("index 3"), std::string::npos);
  KernelTester reduction("ScatterElements", 16);
  reduction.Input(MakeTensor<float>({3}, {1, 2, 3}))
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<float>({1}, {0}))
      .Attr("reduction", std::string("max"));
  EXPECT_NE(ErrorOf(reduction).find("reduction"), std::string::npos);  // max arrived in opset 18
  KernelTester strings("ScatterElements", 18);
  strings.Input(MakeTensor<std::string>({2}, {"a", "b"}))
      .Input(MakeTensor<int64_t>({1}, {0}))
      .Input(MakeTensor<std::string>({1}, {"c"}))
      .Attr("reduction", std::string("add"));
  EXPECT_NE(ErrorOf(strings).find("not defined"), std::string::npos);
}

// past [2 batches, 1 head, 4 rows, 2 features]; update 2 rows per batch.
TEST(TensorScatterTest, LinearAndCircularWritesPerBatch) {
  std::vector<float> past(16);
  for (int i = 0; i < 16; ++i) past[i] = static_cast<float>(i);
  const std::vector<float> update = {100, 101, 102, 103, 200, 201, 202, 203};
  KernelTester linear("TensorScatter", 24);
  linear.Input(MakeTensor<float>({2, 1, 4, 2}, past))
      .Input(MakeTensor<float>({2, 1, 2, 2}, update))
      .Input(MakeTensor<int64_t>({2}, {1, 2}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(linear)[0].tensor()),
            (std::vector<float>{0, 1, 100, 101, 102, 103, 6, 7, 8, 9, 10, 11, 200, 201, 202, 203}));
  // Circular: batch 1 starts at row 3 and wraps to row 0; no indices means row 0 for all.
  KernelTester circular("TensorScatter", 24);
  circular.Input(MakeTensor<float>({2, 1, 4, 2}, past))
      .Input(MakeTensor<float>({2, 1, 2, 2}, update))
      .Input(MakeTensor<int32_t>({2}, {0, 3}))
      .Attr("mode", std::string("circular"));
  EXPECT_EQ(ToVector<float>(RunAllCounts(circular)[0].tensor()),
            (std::vector<float>{100, 101, 102, 103, 4, 5, 6, 7, 202, 203, 10, 11, 12, 13, 200, 201}));
  KernelTester prefill("TensorScatter", 24);
  prefill.Input(MakeTensor<float>({2, 1, 4, 2}, past)).Input(MakeTensor<float>({2, 1, 2, 2}, update));
  EXPECT_EQ(ToVector<float>(RunAllCounts(prefill)[0].tensor()),
            (std::vector<float>{100, 101, 102, 103, 4, 5, 6, 7, 200, 201, 202, 203, 12, 13, 14, 15}));
}

TEST(TensorScatterTest, RejectsRowsOutsideTheCacheAndMismatchedShapes) {
  const std::vector<float> past(16, 0), update(8, 1);
  KernelTester overflow("TensorScatter", 24);
  overflow.Input(MakeTensor<float>({2, 1, 4, 2}, past))
      .Input(MakeTensor<float>({2, 1, 2, 2}, update))
      .Input(MakeTensor<int64_t>({2}, {0, 3}));
  const Status s = overflow.Run(1).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("write index 3 of batch 1"), std::string::npos) << s.message();
  KernelTester shape("TensorScatter", 24);
  shape.Input(MakeTensor<float>({2, 1, 4, 2}, past)).Input(MakeTensor<float>({2, 2, 2, 2}, std::vector<float>(16, 1)));
  EXPECT_EQ(shape.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester axis("TensorScatter", 24);
  axis.Input(MakeTensor<float>({2, 1, 4, 2}, past))
      .Input(MakeTensor<float>({2, 1, 4, 2}, past))
      .Attr("axis", int64_t{0});
  EXPECT_EQ(axis.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(ScatterNdTest, OnnxExamplesAndReductions) {
  KernelTester a("ScatterND", 18);
  a.Input(MakeTensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}))
      .Input(MakeTensor<int64_t>({4, 1}, {4, 3, 1, 7}))
      .Input(MakeTensor<float>({4}, {9, 10, 11, 12}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(a)[0].tensor()), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  KernelTester slices("ScatterND", 18);
  slices.Input(MakeTensor<int32_t>({2, 3}, Iota<int32_t>(6)))
      .Input(MakeTensor<int64_t>({2, 1}, {1, 1}))
      .Input(MakeTensor<int32_t>({2, 3}, {10, 20, 30, 1, 2, 3}))
      .Attr("reduction", std::string("add"));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(slices)[0].tensor()), (std::vector<int32_t>{0, 1, 2, 14, 26, 38}));
  KernelTester half("ScatterND", 18);
  half.Input(MakeTensor<Float16>({2}, {Float16::FromFloat(1), Float16::FromFloat(2)}))
      .Input(MakeTensor<int64_t>({1, 1}, {-1}))
      .Input(MakeTensor<Float16>({1}, {Float16::FromFloat(0.5f)}))
      .Attr("reduction", std::string("mul"));
  EXPECT_EQ(ToVector<Float16>(RunAllCounts(half)[0].tensor())[1].ToFloat(), 1.0f);
  KernelTester bad("ScatterND", 18);
  bad.NodeName("snd")
      .Input(MakeTensor<float>({2}, {1, 2}))
      .Input(MakeTensor<int64_t>({1, 1}, {2}))
      .Input(MakeTensor<float>({1}, {0}));
  EXPECT_NE(ErrorOf(bad).find("index 2"), std::string::npos);
  KernelTester shape("ScatterND", 18);
  shape.Input(MakeTensor<float>({2}, {1, 2}))
      .Input(MakeTensor<int64_t>({1, 1}, {0}))
      .Input(MakeTensor<float>({2}, {0, 0}));
  EXPECT_NE(ErrorOf(shape).find("must have shape"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
