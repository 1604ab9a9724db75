#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "native/kernels/elementwise/test_util.h"

namespace onnx_light {
namespace elementwise {
namespace {

using namespace testing;

TEST(Where, ThreeWayBroadcast) {
  // condition [40, 1], X [40, 30], Y scalar.
  std::vector<bool> c(40);
  for (int i = 0; i < 40; ++i) c[i] = i % 3 == 0;
  auto x = RandomValues<float>(1200, -1, 1);
  KernelTester t("Where", 16);
  t.Input(MakeTensor<bool>({40, 1}, c)).Input(MakeTensor<float>({40, 30}, x)).Input(MakeTensor<float>({}, {7}));
  Tensor out = RunAllCounts(t);
  ASSERT_EQ(out.shape(), (Shape{40, 30}));
  for (int64_t k = 0; k < 1200; ++k) EXPECT_EQ(out.data<float>()[k], c[k / 30] ? x[k] : 7.0f);
}

TEST(Where, SameShapeContiguous) {
  const int64_t n = 4096;
  std::vector<bool> c(n);
  for (int64_t i = 0; i < n; ++i) c[i] = (i * 7) % 5 < 2;
  auto x = RandomValues<int64_t>(n, -1000, 1000, 1);
  auto y = RandomValues<int64_t>(n, -1000, 1000, 2);
  KernelTester t("Where", 16);
  t.Input(MakeTensor<bool>({n}, c)).Input(MakeTensor<int64_t>({n}, x)).Input(MakeTensor<int64_t>({n}, y));
  Tensor out = RunAllCounts(t);
  for (int64_t k = 0; k < n; ++k) EXPECT_EQ(out.data<int64_t>()[k], c[k] ? x[k] : y[k]);
}

TEST(Where, StringsComplexAndErrors) {
  KernelTester s("Where", 9);
  s.Input(MakeTensor<bool>({2}, {true, false}))
      .Input(MakeTensor<std::string>({2}, {"a", "b"}))
      .Input(MakeTensor<std::string>({1}, {"z"}));
  Tensor out = RunAllCounts(s);
  EXPECT_EQ(out.data<std::string>()[0], "a");
  EXPECT_EQ(out.data<std::string>()[1], "z");
  using C = std::complex<double>;
  KernelTester z("Where", 16);
  z.Input(MakeTensor<bool>({2}, {false, true}))
      .Input(MakeTensor<C>({2}, {C(1, 2), C(3, 4)}))
      .Input(MakeTensor<C>({2}, {C(5, 6), C(7, 8)}));
  Tensor zo = RunAllCounts(z);
  EXPECT_EQ(zo.data<C>()[0], C(5, 6));
  EXPECT_EQ(zo.data<C>()[1], C(3, 4));

  KernelTester bad_shapes("Where", 16);
  bad_shapes.Input(MakeTensor<bool>({3}, {true, false, true}))
      .Input(MakeTensor<float>({2}, {1, 2}))
      .Input(MakeTensor<float>({1}, {0}));
  auto r = bad_shapes.Run(1);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("[3]"), std::string::npos) << r.status().message();
  KernelTester bad_condition("Where", 16);
  bad_condition.Input(MakeTensor<float>({1}, {1}))
      .Input(MakeTensor<float>({1}, {1}))
      .Input(MakeTensor<float>({1}, {0}));
  EXPECT_EQ(bad_condition.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester bf16_before_16("Where", 9);
  bf16_before_16.Input(MakeTensor<bool>({1}, {true}))
      .Input(MakeTensor<BFloat16>({1}, {BFloat16::FromFloat(1)}))
      .Input(MakeTensor<BFloat16>({1}, {BFloat16::FromFloat(2)}));
  EXPECT_FALSE(bf16_before_16.Run(1).ok());
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
