// TreeEnsemble: a hand-traced two-tree ensemble (values read off the trees), set
// membership with NaN routing, post transforms, float16, malformed trees, and the row and
// tree splits identical for 1/2/4/8 participants.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "native/core/narrow_float.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// Tree 0 (root node 0): x0 <= 0.5 ? leaf 0 (target 0, 1.0) : leaf 1 (target 1, 2.0).
// Tree 1 (root node 1): x1 in {3, 5} (NaN goes true) ? leaf 2 (target 0, 10.0) : leaf 3 (target 1, 20.0).
KernelTester Ensemble(int64_t aggregate) {
  KernelTester t("TreeEnsemble", 5, "ai.onnx.ml");
  t.Attr("n_targets", int64_t{2}).Attr("aggregate_function", aggregate);
  t.Attr("tree_roots", std::vector<int64_t>{0, 1});
  t.Attr("nodes_featureids", std::vector<int64_t>{0, 1});
  t.Attr("nodes_modes", MakeTensor<uint8_t>({2}, {0, 6}));
  t.Attr("nodes_splits", MakeTensor<float>({2}, {0.5f, 0.0f}));
  t.Attr("membership_values", MakeTensor<float>({3}, {5.0f, 3.0f, NAN}));
  t.Attr("nodes_missing_value_tracks_true", std::vector<int64_t>{0, 1});
  t.Attr("nodes_truenodeids", std::vector<int64_t>{0, 2}).Attr("nodes_trueleafs", std::vector<int64_t>{1, 1});
  t.Attr("nodes_falsenodeids", std::vector<int64_t>{1, 3}).Attr("nodes_falseleafs", std::vector<int64_t>{1, 1});
  t.Attr("leaf_targetids", std::vector<int64_t>{0, 1, 0, 1});
  t.Attr("leaf_weights", MakeTensor<float>({4}, {1.0f, 2.0f, 10.0f, 20.0f}));
  return t;
}

TEST(TreeEnsemble, SumAndMaxOverTrees) {
  const std::vector<float> x = {0.0f, 3.0f,  // leaves 0, 2 -> [11, 0]
                                1.0f, 4.0f,  // leaves 1, 3 -> [0, 22]
                                0.5f, NAN};  // leaves 0, 2 -> [11, 0]
  auto sum = Ensemble(1);
  sum.Input(MakeTensor<float>({3, 2}, x));
  auto out = sum.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<float>(out->at(0).tensor()), (std::vector<float>{11, 0, 0, 22, 11, 0}));

  auto max = Ensemble(3);
  max.Input(MakeTensor<float>({3, 2}, x));
  auto out2 = max.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  const float lowest = std::numeric_limits<float>::lowest();  // targets no leaf reached
  EXPECT_EQ(ToVector<float>(out2->at(0).tensor()), (std::vector<float>{10, lowest, lowest, 20, 10, lowest}));
}

TEST(TreeEnsemble, NanIsInNoSet) {
  // Tree 1's set {3, 5}: NaN takes the true branch only where the node tracks missing
  // values there (as ONNX Runtime and onnx.reference do).
  for (int64_t tracks : {int64_t{0}, int64_t{1}}) {
    auto t = Ensemble(1);
    t.Attr("nodes_missing_value_tracks_true", std::vector<int64_t>{0, tracks});
    t.Input(MakeTensor<float>({1, 2}, {1.0f, NAN}));
    auto out = t.Run(1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // Tree 0: x0 = 1 > 0.5 -> leaf 1 (target 1, 2). Tree 1: leaf 2 (target 0, 10) or leaf 3 (target 1, 20).
    EXPECT_EQ(ToVector<float>(out->at(0).tensor()), tracks ? (std::vector<float>{10, 2}) : (std::vector<float>{0, 22}));
  }
}

TEST(TreeEnsemble, RejectsNarrowInputAndBadBranches) {
  auto narrow = Ensemble(1);
  narrow.Input(MakeTensor<float>({1, 1}, {0.0f}));
  EXPECT_FALSE(narrow.Run(1).ok());

  auto bad = Ensemble(1);
  bad.Attr("nodes_truenodeids", std::vector<int64_t>{0, 9});
  bad.Input(MakeTensor<float>({1, 2}, {0.0f, 0.0f}));
  EXPECT_FALSE(bad.Run(1).ok());
}

TEST(TreeEnsemble, ParticipantCountsGiveIdenticalResults) {
  const int64_t rows = 1000;
  std::vector<double> x(rows * 2);
  for (int64_t r = 0; r < rows; ++r) {
    x[2 * r] = 0.001 * static_cast<double>(r);
    x[2 * r + 1] = static_cast<double>(r % 7);
  }
  auto t = Ensemble(0);
  t.Input(MakeTensor<double>({rows, 2}, x));
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{8});
  const std::vector<Value> serial = testing::DeterministicOutputs(t);
  ASSERT_FALSE(serial.empty());
  // Row 3: x0 = 0.003 <= 0.5 -> leaf 0; x1 = 3 in the set -> leaf 2: average [5.5, 0].
  EXPECT_DOUBLE_EQ(ToVector<double>(serial.at(0).tensor())[6], 5.5);
}

TEST(TreeEnsemble, PostTransformAndFloat16) {
  auto logistic = Ensemble(1);
  logistic.Attr("post_transform", int64_t{2}).Input(MakeTensor<float>({1, 2}, {0.0f, 3.0f}));  // [11, 0]
  auto out = logistic.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<float> y = ToVector<float>(out->at(0).tensor());
  EXPECT_NEAR(y[0], 1 / (1 + std::exp(-11.0)), 1e-7);
  EXPECT_FLOAT_EQ(y[1], 0.5f);

  auto half = Ensemble(1);
  half.Attr("nodes_splits", MakeTensor<Float16>({2}, {Float16::FromFloat(0.5f), Float16::FromFloat(0.0f)}));
  half.Attr("membership_values",
            MakeTensor<Float16>({3}, {Float16::FromFloat(5), Float16::FromFloat(3), Float16::FromFloat(NAN)}));
  half.Attr("leaf_weights", MakeTensor<Float16>({4}, {Float16::FromFloat(1), Float16::FromFloat(2),
                                                      Float16::FromFloat(10), Float16::FromFloat(20)}));
  half.Input(MakeTensor<Float16>(
      {2, 2}, {Float16::FromFloat(0), Float16::FromFloat(3), Float16::FromFloat(1), Float16::FromFloat(4)}));
  auto out2 = half.Run(1);
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  std::vector<float> got;
  for (Float16 h : ToVector<Float16>(out2->at(0).tensor())) got.push_back(h.ToFloat());
  EXPECT_EQ(got, (std::vector<float>{11, 0, 0, 22}));
}

TEST(TreeEnsemble, TreeSplitForFewRowsMatchesSerial) {
  // 2 rows, 40 trees (the two trees of Ensemble() repeated) in chunks of 3.
  KernelTester t("TreeEnsemble", 5, "ai.onnx.ml");
  std::vector<int64_t> roots, features, true_ids, false_ids, leafs, missing, targets;
  std::vector<uint8_t> modes;
  std::vector<float> splits, weights;
  for (int64_t k = 0; k < 40; ++k) {
    roots.push_back(k);
    features.push_back(k % 2);
    modes.push_back(k % 2 == 0 ? 0 : 3);  // LEQ / GT
    splits.push_back(0.1f * static_cast<float>(k % 7));
    true_ids.push_back(2 * k);
    false_ids.push_back(2 * k + 1);
    leafs.push_back(1);
    missing.push_back(k % 3 == 0 ? 1 : 0);
    targets.insert(targets.end(), {k % 2, (k + 1) % 2});
    weights.insert(weights.end(), {0.3f * static_cast<float>(k), -0.7f * static_cast<float>(k)});
  }
  t.Attr("n_targets", int64_t{2}).Attr("aggregate_function", int64_t{1}).Attr("post_transform", int64_t{1});
  t.Attr("tree_roots", roots).Attr("nodes_featureids", features);
  t.Attr("nodes_modes", MakeTensor<uint8_t>({40}, modes)).Attr("nodes_splits", MakeTensor<float>({40}, splits));
  t.Attr("nodes_truenodeids", true_ids).Attr("nodes_trueleafs", leafs);
  t.Attr("nodes_falsenodeids", false_ids).Attr("nodes_falseleafs", leafs);
  t.Attr("nodes_missing_value_tracks_true", missing);
  t.Attr("leaf_targetids", targets).Attr("leaf_weights", MakeTensor<float>({80}, weights));
  t.Input(MakeTensor<float>({2, 2}, {0.25f, NAN, 0.7f, 0.05f}));
  t.Tuning(param::kMinimumElements, int64_t{1}).Tuning("algorithm.trees_per_chunk", int64_t{3});
  const std::vector<float> y = testing::SerialMatchesParticipants<float>(t, Shape{2, 2});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_NEAR(y[0] + y[1], 1.0f, 1e-6);  // SOFTMAX
}

}  // namespace
}  // namespace onnx_light
