#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"
#include "native/tuning/schema.h"

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

TEST(NonMaxSuppressionTest, MaxOutputZeroSelectsNothing) {
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.5f, 0, 0.0f), (std::vector<int64_t>{}));
  EXPECT_EQ(Select({0.9f, 0.95f, 0.5f}, 0.5f, -3, 0.0f), (std::vector<int64_t>{}));  // negative counts as 0
}

TEST(NonMaxSuppressionTest, ZeroAreaBoxesNeverSuppress) {
  // Box 1 is a point inside box 0: its area is 0, so the IoU rule never suppresses it
  // (nor does it suppress anything), whatever the threshold.
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>({1, 2, 4}, {0, 0, 1, 1, 0.5f, 0.5f, 0.5f, 0.5f}))
      .Input(MakeTensor<float>({1, 1, 2}, {0.9f, 0.8f}))
      .Input(MakeTensor<int64_t>({1}, {10}))
      .Input(MakeTensor<float>({1}, {0.0f}));
  EXPECT_EQ(ToVector<int64_t>(testing::DeterministicOutputs(t).at(0).tensor()),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
}

TEST(NonMaxSuppressionTest, CenterPointBoxes) {
  // The same three boxes as kBoxes as [x_center, y_center, width, height].
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 5.5f, 5.5f, 1, 1}))
      .Input(MakeTensor<float>({1, 1, 3}, {0.9f, 0.95f, 0.5f}))
      .Input(MakeTensor<int64_t>({1}, {10}))
      .Input(MakeTensor<float>({1}, {0.5f}))
      .Attr("center_point_box", int64_t{1});
  EXPECT_EQ(ToVector<int64_t>(testing::DeterministicOutputs(t).at(0).tensor()),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
}

TEST(NonMaxSuppressionTest, ParallelPairsConcatenateInBatchClassOrder) {
  // 2 batches x 64 classes, every class scoring the boxes as in SuppressesOverlapsInScoreOrder
  // (except odd classes, which score box 2 below the threshold): each pair keeps box 1,
  // then box 2 for even classes, listed in (batch, class) order for every participant count.
  constexpr int64_t kBatches = 2, kClasses = 64;
  std::vector<float> boxes, scores;
  for (int64_t b = 0; b < kBatches; ++b) boxes.insert(boxes.end(), kBoxes.begin(), kBoxes.end());
  std::vector<int64_t> expected;
  for (int64_t b = 0; b < kBatches; ++b) {
    for (int64_t c = 0; c < kClasses; ++c) {
      scores.insert(scores.end(), {0.9f, 0.95f, c % 2 == 0 ? 0.5f : 0.05f});
      expected.insert(expected.end(), {b, c, 1});
      if (c % 2 == 0) expected.insert(expected.end(), {b, c, 2});
    }
  }
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>({kBatches, 3, 4}, boxes))
      .Input(MakeTensor<float>({kBatches, kClasses, 3}, scores))
      .Input(MakeTensor<int64_t>({1}, {10}))
      .Input(MakeTensor<float>({1}, {0.5f}))
      .Input(MakeTensor<float>({1}, {0.1f}))
      .Tuning(param::kMinimumElements, int64_t{1})
      .Tuning(param::kBlockRows, int64_t{3});
  const std::vector<Value> r = testing::DeterministicOutputs(t, {.expect_regions = true});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.at(0).tensor().shape(), Shape({static_cast<int64_t>(expected.size() / 3), 3}));
  EXPECT_EQ(ToVector<int64_t>(r.at(0).tensor()), expected);
}

TEST(NonMaxSuppressionTest, RejectsMismatchedShapes) {
  KernelTester t("NonMaxSuppression", 11);
  t.NodeName("nms_node").Input(MakeTensor<float>({1, 3, 4}, kBoxes)).Input(MakeTensor<float>({1, 1, 2}, {0.1f, 0.2f}));
  const auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("nms_node"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("float[1,1,2]"), std::string::npos) << r.status().ToString();
}

TEST(NonMaxSuppressionTest, RejectsNonFloatThreshold) {
  KernelTester t("NonMaxSuppression", 11);
  t.NodeName("nms_node")
      .Input(MakeTensor<float>({1, 3, 4}, kBoxes))
      .Input(MakeTensor<float>({1, 1, 3}, {0.1f, 0.2f, 0.3f}))
      .Input(MakeTensor<int64_t>({1}, {10}))
      .Input(MakeTensor<int64_t>({1}, {0}));
  const auto r = t.Run(1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("iou_threshold"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace onnx_light
