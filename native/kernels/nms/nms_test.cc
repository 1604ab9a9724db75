#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// Three unit boxes: 0 and 1 overlap with IoU 0.9 / 1.1 = 0.82, box 2 is far away.
const std::vector<float> kBoxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6};

std::vector<int64_t> Select(std::vector<float> scores, float iou, int64_t max_boxes, float score_threshold) {
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>({1, 3, 4}, kBoxes))
      .Input(MakeTensor<float>({1, 1, 3}, scores))
      .Input(MakeTensor<int64_t>({1}, {max_boxes}))
      .Input(MakeTensor<float>({1}, {iou}))
      .Input(MakeTensor<float>({1}, {score_threshold}));
  const std::vector<Value> r = testing::DeterministicOutputs(t);
  return r.empty() ? std::vector<int64_t>{} : ToVector<int64_t>(r.at(0).tensor());
}

TEST(NonMaxSuppressionTest, SuppressesOverlapsInScoreOrder) {
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.5f, 10, 0.0f), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // IoU 0.82 is not above 0.85: both overlapping boxes stay.
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.85f, 10, 0.0f), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
  // Equal scores: the lower index first.
  EXPECT_EQ(Select({0.5f, 0.5f, 0.5f}, 0.5f, 10, 0.0f), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppressionTest, ScoreThresholdAndLimit) {
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.5f, 1, 0.0f), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.5f, 10, 0.5f), (std::vector<int64_t>{0, 0, 1}));  // 0.5 is not above 0.5
}

TEST(NonMaxSuppressionTest, RejectsMismatchedShapes) {
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>({1, 3, 4}, kBoxes)).Input(MakeTensor<float>({1, 1, 2}, {0.1f, 0.2f}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
