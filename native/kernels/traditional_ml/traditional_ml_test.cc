// TreeEnsemble: a hand-traced two-tree ensemble (values read off the trees), set
// membership with NaN routing, malformed trees, and 1/2/4/8 participants identical.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel_test_util.h"

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
  const std::vector<float> x = {0.0f, 3.0f,    // leaves 0, 2 -> [11, 0]
                                1.0f, 4.0f,    // leaves 1, 3 -> [0, 22]
                                0.5f, NAN};    // leaves 0, 2 -> [11, 0]
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
  t.Tuning("parallel.minimum_elements", int64_t{1}).Tuning("parallel.block_rows", int64_t{8});
  auto serial = t.Run(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  // Row 3: x0 = 0.003 <= 0.5 -> leaf 0; x1 = 3 in the set -> leaf 2: average [5.5, 0].
  EXPECT_DOUBLE_EQ(ToVector<double>(serial->at(0).tensor())[6], 5.5);
  for (int participants : {2, 4, 8}) {
    auto parallel = t.Run(participants);
    ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
    testing::ExpectIdentical(serial->at(0), parallel->at(0));
  }
}

}  // namespace
}  // namespace onnx_light
