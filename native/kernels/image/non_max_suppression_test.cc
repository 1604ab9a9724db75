#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/reduce_util/test_support.h"

namespace onnx_light {
namespace testing {
namespace {

// Three boxes in one batch, one class: box 0 [0,0,1,1]; box 1 overlaps it (IoU 0.9);
// box 2 is far away. Scores 0.9, 0.95, 0.3.
std::vector<float> Boxes() { return {0, 0, 1, 1, 0, 0.1f, 1, 1, 5, 5, 6, 6}; }

std::vector<int64_t> Select(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t max_out,
                            float iou, std::vector<float> score_threshold, int64_t center = 0) {
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>(Shape{1, int64_t(boxes.size() / 4), 4}, boxes))
      .Input(MakeTensor<float>(Shape{1, 1, int64_t(scores.size())}, scores))
      .Input(MakeTensor<int64_t>(Shape{1}, {max_out}))
      .Input(MakeTensor<float>(Shape{1}, {iou}))
      .Attr("center_point_box", center);
  if (!score_threshold.empty()) t.Input(MakeTensor<float>(Shape{1}, score_threshold));
  auto out = t.Run(1);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].tensor().shape().dim(1), 3);
  return ToVector<int64_t>((*out)[0].tensor());
}

TEST(NonMaxSuppression, KeepsHighestAndSuppressesOverlap) {
  EXPECT_EQ(Select(Boxes(), {0.9f, 0.95f, 0.3f}, 10, 0.5f, {}), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // A high IoU threshold suppresses nothing; output by descending score.
  EXPECT_EQ(Select(Boxes(), {0.9f, 0.95f, 0.3f}, 10, 0.95f, {}),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppression, LimitsScoreThresholdAndTies) {
  EXPECT_EQ(Select(Boxes(), {0.9f, 0.95f, 0.3f}, 1, 0.5f, {}), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(Select(Boxes(), {0.9f, 0.95f, 0.3f}, 10, 0.5f, {0.3f}), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_TRUE(Select(Boxes(), {0.9f, 0.95f, 0.3f}, 0, 0.5f, {}).empty());
  // Equal scores: the lower box index wins.
  EXPECT_EQ(Select(Boxes(), {0.5f, 0.5f, 0.5f}, 10, 0.5f, {}), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppression, CenterPointBoxes) {
  // [xc, yc, w, h]: boxes 0 and 1 coincide, box 2 is disjoint.
  EXPECT_EQ(Select({0.5f, 0.5f, 1, 1, 0.5f, 0.5f, 1, 1, 5, 5, 1, 1}, {0.1f, 0.2f, 0.3f}, 10, 0.5f, {}, 1),
            (std::vector<int64_t>{0, 0, 2, 0, 0, 1}));
}

TEST(NonMaxSuppression, RejectsMismatchedScores) {
  KernelTester t("NonMaxSuppression", 11);
  t.Input(MakeTensor<float>(Shape{1, 3, 4}, Boxes())).Input(MakeTensor<float>(Shape{1, 1, 2}, {1, 2}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace testing
}  // namespace onnx_light
