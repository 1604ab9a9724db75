// TreeWalker against a naive walk over the source nodes: random forests with one branch
// mode or mixed modes (set membership too), NaN routing, thresholds that are not floats
// (float rows must land where their double value does), shared subtrees, every lane
// remainder and tree range; and a malformed forest (a cycle) rejected.
#include "native/kernels/traditional_ml/tree_walk.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace onnx_light {
namespace ml {
namespace {

bool NaiveGoes(const SourceNode& n, double v) {
  if (std::isnan(v) && n.missing_goes_true) return true;
  switch (n.mode) {
    case NodeMode::kLeq:
      return v <= n.threshold;
    case NodeMode::kLt:
      return v < n.threshold;
    case NodeMode::kGte:
      return v >= n.threshold;
    case NodeMode::kGt:
      return v > n.threshold;
    case NodeMode::kEq:
      return v == n.threshold;
    case NodeMode::kNeq:
      return v != n.threshold;
    default:
      return std::find(n.members.begin(), n.members.end(), v) != n.members.end();
  }
}

// The leaf (its weight, which is its index) each row reaches in each tree.
template <typename V>
std::vector<double> Naive(const std::vector<SourceNode>& nodes, const std::vector<int64_t>& roots,
                          const std::vector<LeafWeight>& weights, const std::vector<V>& x, int64_t features, int64_t t0,
                          int64_t t1) {
  std::vector<double> out;
  const int64_t rows = static_cast<int64_t>(x.size()) / features;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t p = roots[t];
      while (nodes[p].mode != NodeMode::kLeaf) {
        p = nodes[p].next[NaiveGoes(nodes[p], static_cast<double>(x[r * features + nodes[p].feature])) ? 1 : 0];
      }
      out.push_back(weights[nodes[p].weights_begin].weight);
    }
  }
  return out;
}

// The same through TreeWalker, one tree at a time (each tree's leaf as the sum of one).
template <typename V>
std::vector<double> Walked(const TreeWalker& walker, const std::vector<V>& x, int64_t features, int64_t t0,
                           int64_t t1) {
  const int64_t rows = static_cast<int64_t>(x.size()) / features;
  const int64_t trees = t1 - t0;
  std::vector<double> out(static_cast<size_t>(rows * trees), -1);
  for (int64_t t = t0; t < t1; ++t) {
    std::vector<double> acc(static_cast<size_t>(rows), 0.0);
    walker.Accumulate(x.data(), features, rows, t, t + 1, acc.data(), 1, -1, [](double& a, double w) { a += w; });
    for (int64_t r = 0; r < rows; ++r) out[r * trees + (t - t0)] = acc[r];
  }
  return out;
}

// Every row's sum over trees [t0, t1) in tree order, and Accumulate's over the range at once.
template <typename V>
void ExpectSumsMatch(const TreeWalker& walker, const std::vector<double>& leaves, const std::vector<V>& x,
                     int64_t features, int64_t trees) {
  const int64_t rows = static_cast<int64_t>(x.size()) / features;
  std::vector<double> acc(static_cast<size_t>(rows) * 3, 0.0);
  walker.Accumulate(x.data(), features, rows, 0, trees, acc.data(), 3, 1, [](double& a, double w) { a += w; });
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t t = 0; t < trees; ++t) sum += leaves[r * trees + t];
    EXPECT_EQ(acc[r * 3], sum) << "row " << r;
    EXPECT_EQ(acc[r * 3 + 1], trees > 0 ? 1.0 : 0.0) << "row " << r << ": the flag of target 0";
    EXPECT_EQ(acc[r * 3 + 2], 0.0) << "row " << r;
  }
}

struct Forest {
  std::vector<SourceNode> nodes;
  std::vector<int64_t> roots;
  std::vector<LeafWeight> weights;
};

// `trees` random trees up to `depth` deep over `features` features. mode < 0: mixed
// modes; else that one mode for every branch.
Forest RandomForest(std::mt19937& rng, int trees, int depth, int features, int mode, bool missing, bool float_splits) {
  Forest f;
  std::uniform_real_distribution<double> value(-2, 2);
  std::uniform_int_distribution<int> pick(0, 99);
  auto leaf = [&]() {
    SourceNode n;
    n.weights_begin = static_cast<int64_t>(f.weights.size());
    n.weights_end = n.weights_begin + 1;
    f.weights.push_back(LeafWeight{0, static_cast<double>(f.weights.size())});
    f.nodes.push_back(n);
    return static_cast<int64_t>(f.nodes.size() - 1);
  };
  // Depth-first in the order a converter writes them: node, then its subtrees.
  std::function<int64_t(int)> grow = [&](int level) -> int64_t {
    if (level == depth || (level > 1 && pick(rng) < 20)) return leaf();
    const int64_t id = static_cast<int64_t>(f.nodes.size());
    f.nodes.emplace_back();
    SourceNode n;
    n.mode = static_cast<NodeMode>(mode >= 0 ? mode : pick(rng) % 7);
    n.feature = pick(rng) % features;
    n.threshold = value(rng);
    if (float_splits || pick(rng) < 30) n.threshold = static_cast<float>(n.threshold);
    // Equality against integers (which the rows hold), now and then against a non-float.
    if ((n.mode == NodeMode::kEq || n.mode == NodeMode::kNeq) && pick(rng) < 80) n.threshold = std::round(n.threshold);
    if (n.mode == NodeMode::kMember) n.members = {-1.0, 0.0, 2.0};
    n.missing_goes_true = missing && pick(rng) < 50;
    // Either branch may be the one converters put first; sometimes both share a subtree.
    const int64_t a = grow(level + 1);
    const int64_t b = pick(rng) < 5 ? a : grow(level + 1);
    n.next[0] = pick(rng) < 50 ? a : b;
    n.next[1] = n.next[0] == a ? b : a;
    f.nodes[id] = n;
    return id;
  };
  for (int t = 0; t < trees; ++t) f.roots.push_back(grow(0));
  f.roots.push_back(f.roots[0]);  // a tree listed twice
  return f;
}

// Rows of values that sit on, just below and just above thresholds, integers (for EQ and
// the sets) and NaNs.
template <typename V>
std::vector<V> RandomRows(std::mt19937& rng, const Forest& f, int64_t rows, int64_t features) {
  std::vector<V> x(static_cast<size_t>(rows * features));
  std::uniform_int_distribution<int> pick(0, 99);
  std::uniform_int_distribution<size_t> node(0, f.nodes.size() - 1);
  std::uniform_real_distribution<double> value(-2.5, 2.5);
  for (V& v : x) {
    const int k = pick(rng);
    const double t = f.nodes[node(rng)].threshold;
    if (k < 5)
      v = std::numeric_limits<V>::quiet_NaN();
    else if (k < 25)
      v = static_cast<V>(t);
    else if (k < 35)
      v = std::nextafter(static_cast<V>(t), V{10});
    else if (k < 45)
      v = std::nextafter(static_cast<V>(t), V{-10});
    else if (k < 55)
      v = static_cast<V>(std::round(value(rng)));
    else
      v = static_cast<V>(value(rng));
  }
  return x;
}

TEST(TreeWalker, MatchesNaiveWalk) {
  std::mt19937 rng(7);
  const int features = 5;
  int cases = 0;
  for (int mode = -1; mode <= 5; ++mode) {
    for (bool missing : {false, true}) {
      for (bool float_splits : {false, true}) {
        Forest f = RandomForest(rng, 9, 7, features, mode, missing, float_splits);
        TreeWalker walker;
        ASSERT_TRUE(walker.Build("test", f.nodes, f.roots, f.weights).ok());
        const int64_t trees = static_cast<int64_t>(f.roots.size());
        for (int64_t rows : {1, 7, 8, 9, 37}) {
          const auto xf = RandomRows<float>(rng, f, rows, features);
          const auto xd = RandomRows<double>(rng, f, rows, features);
          for (auto [t0, t1] : {std::pair<int64_t, int64_t>{0, trees}, {3, 5}, {2, 2}}) {
            SCOPED_TRACE(testing::Message() << "mode " << mode << " missing " << missing << " float splits "
                                            << float_splits << " rows " << rows << " trees " << t0 << ".." << t1);
            EXPECT_EQ(Walked(walker, xf, features, t0, t1), Naive(f.nodes, f.roots, f.weights, xf, features, t0, t1));
            EXPECT_EQ(Walked(walker, xd, features, t0, t1), Naive(f.nodes, f.roots, f.weights, xd, features, t0, t1));
            if (t0 == 0) {
              ExpectSumsMatch(walker, Naive(f.nodes, f.roots, f.weights, xf, features, 0, trees), xf, features, trees);
              ExpectSumsMatch(walker, Naive(f.nodes, f.roots, f.weights, xd, features, 0, trees), xd, features, trees);
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 7 * 2 * 2 * 5 * 3);
}

TEST(TreeWalker, DenseAndListedLeafWeights) {
  // Leaves giving targets 0 and 1 in order take the dense rows; one leaf listing them the
  // other way round (or giving one fewer) makes them lists. Both merge the same.
  for (int variant = 0; variant < 3; ++variant) {
    std::mt19937 rng(3);
    Forest f = RandomForest(rng, 6, 5, 3, 0, false, true);
    std::vector<LeafWeight> weights;
    for (SourceNode& n : f.nodes) {
      if (n.mode != NodeMode::kLeaf) continue;
      const double w = f.weights[n.weights_begin].weight;
      n.weights_begin = static_cast<int64_t>(weights.size());
      weights.push_back(LeafWeight{0, w});
      weights.push_back(LeafWeight{1, -2 * w});
      n.weights_end = static_cast<int64_t>(weights.size());
    }
    if (variant == 1) std::swap(weights[0], weights[1]);
    if (variant == 2) f.nodes[f.nodes.size() - 1].weights_end -= 1;
    TreeWalker walker;
    ASSERT_TRUE(walker.Build("test", f.nodes, f.roots, weights).ok());
    const int64_t rows = 29, trees = static_cast<int64_t>(f.roots.size());
    const auto x = RandomRows<float>(rng, f, rows, 3);
    std::vector<double> acc(rows * 4, 0.0);
    walker.Accumulate(x.data(), 3, rows, 0, trees, acc.data(), 4, 2, [](double& a, double w) { a += w; });
    for (int64_t r = 0; r < rows; ++r) {
      double expected[2] = {0, 0};
      for (int64_t t = 0; t < trees; ++t) {
        int64_t p = f.roots[t];
        while (f.nodes[p].mode != NodeMode::kLeaf) {
          p = f.nodes[p].next[NaiveGoes(f.nodes[p], x[r * 3 + f.nodes[p].feature]) ? 1 : 0];
        }
        for (int64_t k = f.nodes[p].weights_begin; k < f.nodes[p].weights_end; ++k) {
          expected[weights[k].target] += weights[k].weight;
        }
      }
      EXPECT_EQ(acc[r * 4], expected[0]) << "variant " << variant << " row " << r;
      EXPECT_EQ(acc[r * 4 + 1], expected[1]) << "variant " << variant << " row " << r;
      EXPECT_EQ(acc[r * 4 + 2], 1.0);
      EXPECT_EQ(acc[r * 4 + 3], 1.0);
    }
  }
}

TEST(TreeWalker, FloatRowsAgainstThresholdsBetweenFloats) {
  // 0.1 (double) lies between two floats: for each mode, the float rows just below, on and
  // above it go where their double values do.
  const double t = 0.1;
  const float below = std::nextafter(static_cast<float>(t), -1.0f), near = static_cast<float>(t),
              above = std::nextafter(near, 1.0f);
  for (int mode = 0; mode <= 5; ++mode) {
    std::vector<SourceNode> nodes(3);
    nodes[0].mode = static_cast<NodeMode>(mode);
    nodes[0].threshold = t;
    nodes[0].next[0] = 1;
    nodes[0].next[1] = 2;
    const std::vector<LeafWeight> weights = {{0, 0.0}, {0, 1.0}};
    nodes[1].weights_end = 1;
    nodes[2].weights_begin = 1;
    nodes[2].weights_end = 2;
    TreeWalker walker;
    ASSERT_TRUE(walker.Build("test", nodes, {0}, weights).ok());
    const std::vector<float> x = {below,
                                  near,
                                  above,
                                  -1e30f,
                                  1e30f,
                                  std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN()};
    EXPECT_EQ(Walked(walker, x, 1, 0, 1), Naive(nodes, {0}, weights, x, 1, 0, 1)) << "mode " << mode;
  }
}

TEST(TreeWalker, RejectsCyclesAndBadChildren) {
  std::vector<SourceNode> nodes(3);
  nodes[0].mode = nodes[1].mode = NodeMode::kLeq;
  nodes[0].next[0] = 1;
  nodes[0].next[1] = 2;
  nodes[1].next[0] = 0;  // back to the root
  nodes[1].next[1] = 2;
  TreeWalker walker;
  EXPECT_FALSE(walker.Build("test", nodes, {0}, {}).ok());
  nodes[1].next[0] = 7;
  EXPECT_FALSE(walker.Build("test", nodes, {0}, {}).ok());
  nodes[1].next[0] = 2;
  EXPECT_TRUE(walker.Build("test", nodes, {0}, {}).ok());
  EXPECT_FALSE(walker.Build("test", nodes, {3}, {}).ok());
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
