#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

TEST(Dropout, InferencePassesThroughWithOnesMask) {
  KernelTester t("Dropout", 13);
  t.Input(MakeTensor<float>(Shape{2, 2}, {1, -2, 3, -4})).Input(MakeTensor<float>(Shape{}, {0.3f})).Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>((*out)[0].tensor()), (std::vector<float>{1, -2, 3, -4}));
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kBool);
  EXPECT_EQ(ToVector<bool>((*out)[1].tensor()), (std::vector<bool>{true, true, true, true}));
}

TEST(Dropout, TrainingWithZeroRatioIsIdentityButRandomMaskIsRefused) {
  KernelTester zero("Dropout", 22);
  zero.Input(MakeTensor<float>(Shape{3}, {1, 2, 3})).Input(MakeTensor<float>(Shape{}, {0.f}))
      .Input(MakeTensor<bool>(Shape{}, {true}));
  auto out = zero.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>((*out)[0].tensor()), (std::vector<float>{1, 2, 3}));

  KernelTester random("Dropout", 22);
  random.Input(MakeTensor<float>(Shape{3}, {1, 2, 3})).Input(MakeTensor<float>(Shape{}, {0.5f}))
      .Input(MakeTensor<bool>(Shape{}, {true}));
  EXPECT_FALSE(random.Run(1).ok());
}

TEST(Dropout, LegacyMaskHasTheDataType) {
  KernelTester t("Dropout", 7);
  t.Input(MakeTensor<double>(Shape{2}, {5, 6})).Outputs(2);
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<double>((*out)[1].tensor()), (std::vector<double>{1, 1}));
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
