// TreeEnsembleClassifier / TreeEnsembleRegressor (ai.onnx.ml 1, 3): hand-traced trees,
// the binary and multiclass classifier cases, aggregates, NaN routing, the row split and
// the tree split identical for 1, 2, 4 and 8 participants.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_checks.h"
#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;
using testing::ToVector;

// Two trees over features 0 and 1:
//   tree 0: node 0 (x0 <= 0.5, NaN goes true) -> node 1 (leaf) / node 2 (leaf)
//   tree 1: node 0 (x1 < 2) -> node 1 (leaf) / node 2 (leaf)
void AddNodes(KernelTester& t, int trees) {
  std::vector<int64_t> tree_ids, node_ids, features, true_ids, false_ids, missing;
  std::vector<std::string> modes;
  std::vector<float> values;
  for (int k = 0; k < trees; ++k) {
    const int64_t tree = k;
    const bool first = k % 2 == 0;
    tree_ids.insert(tree_ids.end(), {tree, tree, tree});
    node_ids.insert(node_ids.end(), {0, 1, 2});
    features.insert(features.end(), {first ? 0 : 1, 0, 0});
    modes.insert(modes.end(), {first ? "BRANCH_LEQ" : "BRANCH_LT", "LEAF", "LEAF"});
    values.insert(values.end(), {first ? 0.5f : 2.0f, 0, 0});
    true_ids.insert(true_ids.end(), {1, 0, 0});
    false_ids.insert(false_ids.end(), {2, 0, 0});
    missing.insert(missing.end(), {first ? 1 : 0, 0, 0});
  }
  t.Attr("nodes_treeids", tree_ids).Attr("nodes_nodeids", node_ids).Attr("nodes_featureids", features);
  t.Attr("nodes_modes", modes).Attr("nodes_values", values);
  t.Attr("nodes_truenodeids", true_ids).Attr("nodes_falsenodeids", false_ids);
  t.Attr("nodes_missing_value_tracks_true", missing);
}

// Leaf weights: tree k's true leaf gives (k + 1), its false leaf 10 * (k + 1), to target 0
// (and, with two targets, twice that to target 1).
KernelTester Regressor(const std::string& aggregate, int trees, int targets = 1) {
  KernelTester t("TreeEnsembleRegressor", 3, "ai.onnx.ml");
  AddNodes(t, trees);
  std::vector<int64_t> tids, nids, ids;
  std::vector<float> weights;
  for (int k = 0; k < trees; ++k) {
    for (int leaf = 1; leaf <= 2; ++leaf) {
      for (int target = 0; target < targets; ++target) {
        tids.push_back(k);
        nids.push_back(leaf);
        ids.push_back(target);
        weights.push_back(static_cast<float>((k + 1) * (leaf == 1 ? 1 : 10) * (target + 1)));
      }
    }
  }
  t.Attr("target_treeids", tids).Attr("target_nodeids", nids).Attr("target_ids", ids).Attr("target_weights", weights);
  t.Attr("n_targets", int64_t{targets}).Attr("aggregate_function", aggregate);
  return t;
}

TEST(TreeEnsembleRegressor, SumAverageMinMaxWithBase) {
  // Row 0: x0 = 0 (true: 1), x1 = 5 (false: 20). Row 1: x0 = NaN (true: 1), x1 = 1 (true: 2).
  const std::vector<float> x = {0.0f, 5.0f, NAN, 1.0f};
  const struct {
    const char* aggregate;
    std::vector<float> expected;
  } cases[] = {{"SUM", {21.5f, 3.5f}}, {"AVERAGE", {11.0f, 2.0f}}, {"MIN", {1.5f, 1.5f}}, {"MAX", {20.5f, 2.5f}}};
  for (const auto& c : cases) {
    auto t = Regressor(c.aggregate, 2);
    t.Attr("base_values", std::vector<float>{0.5f});
    t.Input(MakeTensor<float>({2, 2}, x));
    auto out = t.Run(1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(ToVector<float>(out->at(0).tensor()), c.expected) << c.aggregate;
  }
}

TEST(TreeEnsembleRegressor, RowAndTreeSplitsMatchSerial) {
  // Many rows: the row split. Few rows and 40 trees in chunks of 3: the tree split.
  for (int64_t rows : {int64_t{200}, int64_t{3}}) {
    std::vector<double> x(rows * 2);
    for (int64_t i = 0; i < rows * 2; ++i) x[i] = std::sin(0.37 * static_cast<double>(i)) * 3.0;
    auto t = Regressor("SUM", 40, 2);
    t.Input(MakeTensor<double>({rows, 2}, x));
    t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{4});
    t.Tuning(param::kTreeSplitRows, int64_t{8}).Tuning("algorithm.trees_per_chunk", int64_t{3});
    auto y = testing::SerialMatchesParticipants<float>(t, Shape{rows, 2});
    ASSERT_EQ(static_cast<int64_t>(y.size()), rows * 2);
    // Target 1 is exactly twice target 0 (every leaf gives it twice the weight).
    for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(y[r * 2 + 1], 2 * y[r * 2]);
  }
}

TEST(TreeEnsembleRegressor, WalkBlocksChangeNothing) {
  // Rows pass the trees in blocks of algorithm.walk_bytes (a row here: 8 bytes of floats
  // and 16 of aggregates): any block size, any participant count, the same bits.
  const int64_t rows = 203;
  std::vector<float> x(rows * 2);
  for (int64_t i = 0; i < rows * 2; ++i) x[i] = static_cast<float>(std::sin(0.61 * static_cast<double>(i)) * 3.0);
  std::vector<float> first;
  for (int64_t walk_bytes : {int64_t{1}, int64_t{5 * 24}, int64_t{64 * 24}, int64_t{1000 * 24}}) {
    auto t = Regressor("AVERAGE", 25, 2);
    t.Input(MakeTensor<float>({rows, 2}, x));
    t.Tuning(param::kMinimumElements, int64_t{1}).Tuning(param::kBlockRows, int64_t{4});
    t.Tuning("algorithm.walk_bytes", walk_bytes);
    const std::vector<float> y = testing::SerialMatchesParticipants<float>(t, Shape{rows, 2});
    if (first.empty()) first = y;
    EXPECT_EQ(y, first) << "walk_bytes " << walk_bytes;
  }
}

KernelTester Classifier(const std::vector<int64_t>& class_ids, const std::vector<float>& weights,
                        const std::string& post) {
  KernelTester t("TreeEnsembleClassifier", 1, "ai.onnx.ml");
  AddNodes(t, 1);  // one tree: x0 <= 0.5 -> node 1, else node 2
  std::vector<int64_t> tids(class_ids.size(), 0), nids;
  for (size_t i = 0; i < class_ids.size(); ++i) nids.push_back(i < class_ids.size() / 2 ? 1 : 2);
  t.Attr("class_treeids", tids).Attr("class_nodeids", nids).Attr("class_ids", class_ids).Attr("class_weights", weights);
  t.Attr("post_transform", post).Outputs(2);
  return t;
}

TEST(TreeEnsembleClassifier, MulticlassArgmaxAndStringLabels) {
  // Leaf 1: [0.2, 0.7, 0.1]; leaf 2: [0.6, 0.1, 0.3].
  auto t = Classifier({0, 1, 2, 0, 1, 2}, {0.2f, 0.7f, 0.1f, 0.6f, 0.1f, 0.3f}, "NONE");
  t.Attr("classlabels_strings", std::vector<std::string>{"a", "b", "c"});
  t.Input(MakeTensor<float>({2, 2}, {0.0f, 0.0f, 1.0f, 0.0f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<std::string>(out->at(0).tensor()), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(ToVector<float>(out->at(1).tensor()), (std::vector<float>{0.2f, 0.7f, 0.1f, 0.6f, 0.1f, 0.3f}));
}

TEST(TreeEnsembleClassifier, BinaryOneClassIdLogistic) {
  // Gradient boosting's binary form: one class id, a base value, LOGISTIC.
  auto t = Classifier({0, 0}, {-1.0f, 2.0f}, "LOGISTIC");
  t.Attr("classlabels_int64s", std::vector<int64_t>{4, 9}).Attr("base_values", std::vector<float>{0.25f});
  t.Input(MakeTensor<float>({2, 2}, {0.0f, 0.0f, 1.0f, 0.0f}));
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToVector<int64_t>(out->at(0).tensor()), (std::vector<int64_t>{4, 9}));
  const std::vector<float> z = ToVector<float>(out->at(1).tensor());
  const double s0 = -0.75, s1 = 2.25;
  EXPECT_NEAR(z[1], 1 / (1 + std::exp(-s0)), 1e-6);
  EXPECT_NEAR(z[0], 1 / (1 + std::exp(s0)), 1e-6);
  EXPECT_NEAR(z[3], 1 / (1 + std::exp(-s1)), 1e-6);
}

TEST(TreeEnsembleClassifier, RejectsMissingChild) {
  auto t = Classifier({0, 1}, {1.0f, 1.0f}, "NONE");
  t.Attr("classlabels_int64s", std::vector<int64_t>{0, 1});
  t.Attr("nodes_truenodeids", std::vector<int64_t>{7, 0, 0});
  t.Input(MakeTensor<float>({1, 2}, {0.0f, 0.0f}));
  EXPECT_FALSE(t.Run(1).ok());
}

}  // namespace
}  // namespace onnx_light
