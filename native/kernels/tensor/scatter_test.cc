#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/tensor/test_util.h"

namespace onnx_light {
namespace {

using namespace ::onnx_light::testing;  // NOLINT

TEST(ScatterElementsTest, OnnxExamplesAndReductions) {
  KernelTester a("ScatterElements", 18);
  a.Input(MakeTensor<float>({3, 3}, std::vector<float>(9, 0))).Input(MakeTensor<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1}))
      .Input(MakeTensor<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(a)[0].tensor()),
            (std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f}));
  KernelTester b("ScatterElements", 18);
  b.Input(MakeTensor<float>({1, 5}, {1, 2, 3, 4, 5})).Input(MakeTensor<int32_t>({1, 2}, {1, -2})).Input(MakeTensor<float>({1, 2}, {1.1f, 2.1f}))
      .Attr("axis", int64_t{1});
  EXPECT_EQ(ToVector<float>(RunAllCounts(b)[0].tensor()), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  // Repeated indices with each reduction: applied in index order.
  for (auto [mode, expected] : std::vector<std::pair<std::string, float>>{{"add", 1 + 2 + 3 + 4}, {"mul", 1 * 2 * 3 * 4}, {"max", 4}, {"min", 1}}) {
    KernelTester r("ScatterElements", 18);
    r.Input(MakeTensor<float>({1, 2}, {1, 10})).Input(MakeTensor<int64_t>({1, 3}, {0, 0, 0})).Input(MakeTensor<float>({1, 3}, {2, 3, 4}))
        .Attr("axis", int64_t{1}).Attr("reduction", mode);
    const auto y = ToVector<float>(RunAllCounts(r)[0].tensor());
    EXPECT_EQ(y[0], expected) << mode;
    EXPECT_EQ(y[1], 10) << mode;
  }
}

TEST(ScatterElementsTest, LargeCopyPathAndErrors) {
  std::vector<int64_t> idx(100);
  for (int i = 0; i < 100; ++i) idx[i] = 999 - i;
  KernelTester t("ScatterElements", 13);
  t.Input(MakeTensor<int32_t>({1000}, Iota<int32_t>(1000))).Input(MakeTensor<int64_t>({100}, idx))
      .Input(MakeTensor<int32_t>({100}, std::vector<int32_t>(100, -1)));
  const auto y = ToVector<int32_t>(RunAllCounts(t, 16)[0].tensor());
  EXPECT_EQ(y[899], 899);
  EXPECT_EQ(y[900], -1);
  KernelTester bad("ScatterElements", 13);
  bad.NodeName("se").Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({1}, {3})).Input(MakeTensor<float>({1}, {0}));
  EXPECT_NE(ErrorOf(bad).find("index 3"), std::string::npos);
  KernelTester reduction("ScatterElements", 16);
  reduction.Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({1}, {0})).Input(MakeTensor<float>({1}, {0}))
      .Attr("reduction", std::string("max"));
  EXPECT_NE(ErrorOf(reduction).find("reduction"), std::string::npos);  // max arrived in opset 18
  KernelTester strings("ScatterElements", 18);
  strings.Input(MakeTensor<std::string>({2}, {"a", "b"})).Input(MakeTensor<int64_t>({1}, {0})).Input(MakeTensor<std::string>({1}, {"c"}))
      .Attr("reduction", std::string("add"));
  EXPECT_NE(ErrorOf(strings).find("not defined"), std::string::npos);
}

TEST(ScatterNdTest, OnnxExamplesAndReductions) {
  KernelTester a("ScatterND", 18);
  a.Input(MakeTensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8})).Input(MakeTensor<int64_t>({4, 1}, {4, 3, 1, 7}))
      .Input(MakeTensor<float>({4}, {9, 10, 11, 12}));
  EXPECT_EQ(ToVector<float>(RunAllCounts(a)[0].tensor()), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  KernelTester slices("ScatterND", 18);
  slices.Input(MakeTensor<int32_t>({2, 3}, Iota<int32_t>(6))).Input(MakeTensor<int64_t>({2, 1}, {1, 1}))
      .Input(MakeTensor<int32_t>({2, 3}, {10, 20, 30, 1, 2, 3})).Attr("reduction", std::string("add"));
  EXPECT_EQ(ToVector<int32_t>(RunAllCounts(slices)[0].tensor()), (std::vector<int32_t>{0, 1, 2, 14, 26, 38}));
  KernelTester half("ScatterND", 18);
  half.Input(MakeTensor<Float16>({2}, {Float16::FromFloat(1), Float16::FromFloat(2)})).Input(MakeTensor<int64_t>({1, 1}, {-1}))
      .Input(MakeTensor<Float16>({1}, {Float16::FromFloat(0.5f)})).Attr("reduction", std::string("mul"));
  EXPECT_EQ(ToVector<Float16>(RunAllCounts(half)[0].tensor())[1].ToFloat(), 1.0f);
  KernelTester bad("ScatterND", 18);
  bad.NodeName("snd").Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({1, 1}, {2})).Input(MakeTensor<float>({1}, {0}));
  EXPECT_NE(ErrorOf(bad).find("index 2"), std::string::npos);
  KernelTester shape("ScatterND", 18);
  shape.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<int64_t>({1, 1}, {0})).Input(MakeTensor<float>({2}, {0, 0}));
  EXPECT_NE(ErrorOf(shape).find("must have shape"), std::string::npos);
}

}  // namespace
}  // namespace onnx_light
