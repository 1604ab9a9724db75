// The tree walk shared by TreeEnsemble (ai.onnx.ml 5) and TreeEnsembleClassifier /
// TreeEnsembleRegressor (ai.onnx.ml 1, 3). A kernel reads its attributes into SourceNodes
// (its own numbering, leaves as nodes) and a weight list; TreeWalker::Build compiles them
// once into a node array laid out for the walk, and Accumulate merges, for every row and
// tree, the weights of the leaf the row reaches into the row's aggregates.
//
// Layout: each tree is laid out depth-first from its root, false branch first (so a node's
// false child usually follows it), trees in order; a node reached from several parents or
// trees is stored once, nodes no root reaches are dropped. A node is its threshold, its
// feature id (bit 31: NaN takes the true branch) and the positions of its two children:
// 16 bytes with float thresholds, 24 with double. A leaf is a node whose children are
// itself, so a walk steps without testing for leaves (as many steps as the tree is deep,
// fewer when no row moves); its
// threshold holds its leaf number, so the node the walk ends on (in cache) leads straight
// to the weights. Leaves are numbered in layout order, so a tree's weights are contiguous:
// as one row of K doubles per leaf when every leaf gives targets 0..K-1 in order (a
// random forest classifier's class weights), else as (target, weight) lists, found by
// position when every leaf has the same number (one, in gradient boosting) and through a
// table of ranges otherwise. Cycles are rejected by Build.
//
// Walk: the trees are the outer loop over the rows given (the caller passes blocks of
// rows, so a tree's nodes stay in cache while its rows pass), and kLanes rows step through
// a tree together: their load chains are independent and overlap, and the branch is a
// select, not a jump. Rows left over (a batch of one row, say) step through kLanes trees
// together instead. When every node compares the same way (all BRANCH_LEQ, as
// scikit-learn and LightGBM write them, all BRANCH_LT as XGBoost does, ...) the comparison
// is a template parameter; otherwise (mixed modes, set membership) each row walks with a
// per-node switch. Every row merges its leaves in tree order, whatever the blocking.
//
// Comparisons are those of the double threshold against the row value as a double (the
// kernels' semantics). For float rows the walk compares floats against a float copy of
// each threshold rounded toward the side that keeps every outcome (x <= t exactly when
// x <= the largest float <= t, and likewise for <, >=, >), so no row is converted; when a
// threshold cannot be made exact that way (BRANCH_EQ/NEQ against a value that is not a
// float) the float rows are compared in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/status.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {

enum class NodeMode : uint8_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };

// One node as a kernel reads it from its attributes.
struct SourceNode {
  NodeMode mode = NodeMode::kLeaf;
  int64_t feature = 0;
  double threshold = 0;
  bool missing_goes_true = false;
  int64_t next[2] = {-1, -1};   // branch: [false, true] indices of SourceNodes
  std::vector<double> members;  // kMember: the set, sorted
  int64_t weights_begin = 0;    // leaf: its entries [begin, end) of the weight list
  int64_t weights_end = 0;
};

struct LeafWeight {
  int64_t target;
  double weight;
};

template <typename V>
struct WalkNode {
  V threshold;
  int32_t feature;  // bit 31: NaN goes to the true branch
  int32_t next[2];  // [false, true] positions; a leaf's are its own
};

// The schema parameter both ensemble kernels declare: how many rows pass each tree before
// the next tree starts, as the bytes of those rows and their aggregates (a cache block:
// the rows stream by while the tree's nodes and leaf weights stay in cache). A rough A/B on
// the shared 2-core AMD EPYC (load average ~5, so indicative only): 100 depth-12 trees over
// 20-feature rows ran fastest with blocks of 2,000-10,000 rows and ~1.4x slower with 128.
inline constexpr int64_t kWalkBytes = 256 * 1024;
inline ParamSpec WalkBytesParam() {
  return ParamSpec::Int64("algorithm.walk_bytes", kWalkBytes, 1, int64_t{1} << 40,
                          "bytes of rows (and their aggregates) that walk each tree before the next tree starts "
                          "(a cache block: changes no result)");
}
// Rows per block for rows of `row_bytes` bytes: at least 1, at most `rows`.
inline int64_t WalkBlockRows(int64_t walk_bytes, int64_t row_bytes, int64_t rows) {
  return std::max<int64_t>(1, std::min(rows, walk_bytes / std::max<int64_t>(row_bytes, 1)));
}

class TreeWalker {
 public:
  static constexpr int kLanes = 8;
  static constexpr int32_t kMissingBit = std::numeric_limits<int32_t>::min();

  // InvalidArgument (prefixed by `where`) for out-of-range roots, children, weights or
  // features, unknown modes and cycles.
  Status Build(const std::string& where, const std::vector<SourceNode>& nodes, const std::vector<int64_t>& roots,
               const std::vector<LeafWeight>& weights) {
    const int64_t n = static_cast<int64_t>(nodes.size());
    int64_t max_feature = -1;  // over every node, reached or not
    if (n >= std::numeric_limits<int32_t>::max()) return InvalidArgument(where, ": too many nodes (", n, ")");
    for (int64_t i = 0; i < n; ++i) {
      const SourceNode& s = nodes[i];
      if (s.mode > NodeMode::kLeaf) {
        return InvalidArgument(where, ": node ", i, " has unknown mode ", int{static_cast<uint8_t>(s.mode)});
      }
      if (s.mode == NodeMode::kLeaf) {
        if (s.weights_begin < 0 || s.weights_begin > s.weights_end ||
            s.weights_end > static_cast<int64_t>(weights.size())) {
          return InvalidArgument(where, ": leaf ", i, " has weights [", s.weights_begin, ", ", s.weights_end, ")");
        }
        continue;
      }
      if (s.feature < 0 || s.feature >= std::numeric_limits<int32_t>::max()) {
        return InvalidArgument(where, ": node ", i, " reads feature ", s.feature);
      }
      max_feature = std::max(max_feature, s.feature);
      for (int b = 0; b < 2; ++b) {
        if (s.next[b] < 0 || s.next[b] >= n) {
          return InvalidArgument(where, ": node ", i, " branches to ", s.next[b], ", out of range");
        }
      }
    }
    // Positions: depth-first from each root in tree order, false branch first.
    std::vector<int32_t> position(static_cast<size_t>(n), -1);
    std::vector<int64_t> source, stack;
    roots_.clear();
    for (int64_t root : roots) {
      if (root < 0 || root >= n) return InvalidArgument(where, ": tree root ", root, " out of range");
      stack.push_back(root);
      while (!stack.empty()) {
        const int64_t s = stack.back();
        stack.pop_back();
        if (position[s] >= 0) continue;
        position[s] = static_cast<int32_t>(source.size());
        source.push_back(s);
        if (nodes[s].mode != NodeMode::kLeaf) {
          stack.push_back(nodes[s].next[1]);
          stack.push_back(nodes[s].next[0]);
        }
      }
      roots_.push_back(position[root]);
    }
    const size_t count = source.size();
    dnodes_.assign(count, WalkNode<double>{});
    fnodes_.clear();
    modes_.assign(count, NodeMode::kLeaf);
    member_set_.assign(count, -1);
    members_.clear();
    leaf_begin_.clear();
    weights_.clear();
    int64_t leaves = 0;
    max_feature_ = max_feature;
    bool float_exact = true, uniform = true;
    NodeMode mode = NodeMode::kLeaf;
    missing_ = false;
    std::vector<float> fthreshold(count, 0.0f);
    for (size_t p = 0; p < count; ++p) {
      const SourceNode& s = nodes[source[p]];
      WalkNode<double>& d = dnodes_[p];
      modes_[p] = s.mode;
      if (s.mode == NodeMode::kLeaf) {
        // Leaf number `leaves` in the threshold (exact in double; in float below 2^24).
        d = WalkNode<double>{static_cast<double>(leaves), 0, {static_cast<int32_t>(p), static_cast<int32_t>(p)}};
        fthreshold[p] = static_cast<float>(leaves);
        float_exact = float_exact && leaves < (int64_t{1} << 24);
        ++leaves;
        leaf_begin_.push_back(static_cast<int64_t>(weights_.size()));
        weights_.insert(weights_.end(), weights.begin() + s.weights_begin, weights.begin() + s.weights_end);
        continue;
      }
      d.threshold = s.threshold;
      d.feature = static_cast<int32_t>(s.feature) | (s.missing_goes_true ? kMissingBit : 0);
      d.next[0] = position[s.next[0]];
      d.next[1] = position[s.next[1]];
      missing_ = missing_ || s.missing_goes_true;
      if (mode == NodeMode::kLeaf) mode = s.mode;
      uniform = uniform && s.mode == mode && s.mode != NodeMode::kMember;
      if (s.mode == NodeMode::kMember) {
        member_set_[p] = static_cast<int32_t>(members_.size());
        members_.push_back(s.members);
      }
      float_exact = float_exact && FloatThreshold(s.mode, s.threshold, &fthreshold[p]);
    }
    leaf_begin_.push_back(static_cast<int64_t>(weights_.size()));
    // Every leaf with K weights: leaf l's are [l * K, (l + 1) * K); dense rows when they
    // are for targets 0..K-1 in order.
    fixed_k_ = leaves > 0 ? leaf_begin_[1] - leaf_begin_[0] : 0;
    for (int64_t l = 0; l < leaves && fixed_k_ > 0; ++l) {
      if (leaf_begin_[l + 1] - leaf_begin_[l] != fixed_k_) fixed_k_ = 0;
    }
    dense_k_ = fixed_k_;
    for (int64_t l = 0; l < leaves && dense_k_ > 0; ++l) {
      for (int64_t k = 0; k < dense_k_; ++k) {
        if (weights_[leaf_begin_[l] + k].target != k) dense_k_ = 0;
      }
    }
    dense_.clear();
    if (dense_k_ > 0) {
      for (const LeafWeight& w : weights_) dense_.push_back(w.weight);
    }
    uniform_ = uniform ? mode : NodeMode::kMember;  // kLeaf: no branch at all
    if (uniform && float_exact) {
      fnodes_.resize(count);
      for (size_t p = 0; p < count; ++p) {
        fnodes_[p] = WalkNode<float>{fthreshold[p], dnodes_[p].feature, {dnodes_[p].next[0], dnodes_[p].next[1]}};
      }
    }
    return ComputeDepths(where);
  }

  int64_t trees() const { return static_cast<int64_t>(roots_.size()); }
  int64_t max_feature() const { return max_feature_; }  // of every branch node; -1 if none

  // Rows [0, rows) of x (row r at x + r * stride, V float or double), trees [t0, t1):
  // merge(acc[r * acc_stride + target], weight) for each weight of the leaf each row
  // reaches, trees in order for each row; with flags >= 0 also
  // acc[r * acc_stride + flags + target] = 1 (the target got a weight).
  template <typename V, typename Merge>
  void Accumulate(const V* x, int64_t stride, int64_t rows, int64_t t0, int64_t t1, double* acc, int64_t acc_stride,
                  int64_t flags, Merge&& merge) const {
    static_assert(std::is_same_v<V, float> || std::is_same_v<V, double>, "rows are float or double");
    if (rows <= 0 || t0 >= t1) return;
    auto report = [&](int64_t r, int32_t leaf) {
      double* a = acc + r * acc_stride;
      if (dense_k_ > 0) {
        const double* w = dense_.data() + static_cast<int64_t>(leaf) * dense_k_;
        for (int64_t k = 0; k < dense_k_; ++k) merge(a[k], w[k]);
        if (flags >= 0) std::fill(a + flags, a + flags + dense_k_, 1.0);
        return;
      }
      const int64_t begin = fixed_k_ > 0 ? leaf * fixed_k_ : leaf_begin_[leaf];
      const int64_t end = fixed_k_ > 0 ? begin + fixed_k_ : leaf_begin_[leaf + 1];
      for (int64_t i = begin; i < end; ++i) {
        merge(a[weights_[i].target], weights_[i].weight);
        if (flags >= 0) a[flags + weights_[i].target] = 1;
      }
    };
    if (uniform_ == NodeMode::kMember) return WalkMixed(x, stride, rows, t0, t1, report);
    if constexpr (std::is_same_v<V, float>) {
      if (!fnodes_.empty()) return WalkUniformModes(fnodes_.data(), x, stride, rows, t0, t1, report);
    }
    return WalkUniformModes(dnodes_.data(), x, stride, rows, t0, t1, report);
  }

 private:
  // The float threshold that gives every float x the outcome of (double) x against t.
  static bool FloatThreshold(NodeMode mode, double t, float* out) {
    if (std::isnan(t)) {
      *out = std::numeric_limits<float>::quiet_NaN();
      return true;
    }
    float f = static_cast<float>(t);
    const bool down = mode == NodeMode::kLeq || mode == NodeMode::kGt;  // the largest float <= t
    const bool up = mode == NodeMode::kLt || mode == NodeMode::kGte;    // the smallest float >= t
    if (static_cast<double>(f) > t && down) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    if (static_cast<double>(f) < t && up) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    *out = f;
    return down || up || static_cast<double>(f) == t;
  }

  // Each tree's depth (branch nodes on its longest path: the steps a walk can take), by an
  // iterative depth-first search; a child still on the path (state 1) closes a cycle.
  Status ComputeDepths(const std::string& where) {
    std::vector<uint8_t> state(dnodes_.size(), 0);
    std::vector<int32_t> height(dnodes_.size(), 0);
    std::vector<int32_t> stack;
    depth_.clear();
    for (int32_t root : roots_) {
      stack.push_back(root);
      while (!stack.empty()) {
        const int32_t p = stack.back();
        const bool leaf = modes_[p] == NodeMode::kLeaf;
        if (state[p] == 2) {
          stack.pop_back();
          continue;
        }
        if (state[p] == 1) {  // its children are done
          height[p] = leaf ? 0 : 1 + std::max(height[dnodes_[p].next[0]], height[dnodes_[p].next[1]]);
          state[p] = 2;
          stack.pop_back();
          continue;
        }
        state[p] = 1;
        if (leaf) continue;
        for (int32_t c : dnodes_[p].next) {
          if (state[c] == 1) return InvalidArgument(where, ": the tree at root position ", root, " has a cycle");
          if (state[c] == 0) stack.push_back(c);
        }
      }
      depth_.push_back(height[root]);
    }
    return Status::Ok();
  }

  template <NodeMode M, typename N>
  static bool Compare(N v, N t) {
    if constexpr (M == NodeMode::kLeq) return v <= t;
    if constexpr (M == NodeMode::kLt) return v < t;
    if constexpr (M == NodeMode::kGte) return v >= t;
    if constexpr (M == NodeMode::kGt) return v > t;
    if constexpr (M == NodeMode::kEq) return v == t;
    return v != t;
  }

  template <typename N, typename V, typename Report>
  void WalkUniformModes(const WalkNode<N>* nodes, const V* x, int64_t stride, int64_t rows, int64_t t0, int64_t t1,
                        Report& report) const {
    switch (uniform_) {
      case NodeMode::kLeq:
        return WalkUniformMissing<NodeMode::kLeq>(nodes, x, stride, rows, t0, t1, report);
      case NodeMode::kLt:
        return WalkUniformMissing<NodeMode::kLt>(nodes, x, stride, rows, t0, t1, report);
      case NodeMode::kGte:
        return WalkUniformMissing<NodeMode::kGte>(nodes, x, stride, rows, t0, t1, report);
      case NodeMode::kGt:
        return WalkUniformMissing<NodeMode::kGt>(nodes, x, stride, rows, t0, t1, report);
      case NodeMode::kEq:
        return WalkUniformMissing<NodeMode::kEq>(nodes, x, stride, rows, t0, t1, report);
      case NodeMode::kNeq:
        return WalkUniformMissing<NodeMode::kNeq>(nodes, x, stride, rows, t0, t1, report);
      default:  // kLeaf: every tree is a single leaf
        for (int64_t t = t0; t < t1; ++t) {
          for (int64_t r = 0; r < rows; ++r) report(r, LeafNumber(dnodes_[roots_[t]]));
        }
        return;
    }
  }

  template <NodeMode M, typename N, typename V, typename Report>
  void WalkUniformMissing(const WalkNode<N>* nodes, const V* x, int64_t stride, int64_t rows, int64_t t0, int64_t t1,
                          Report& report) const {
    if (missing_) return WalkUniform<M, true>(nodes, x, stride, rows, t0, t1, report);
    return WalkUniform<M, false>(nodes, x, stride, rows, t0, t1, report);
  }

  template <typename N>
  static int32_t LeafNumber(const WalkNode<N>& leaf) {
    return static_cast<int32_t>(leaf.threshold);
  }

  // One step from node n for value v: the child's position.
  template <NodeMode M, bool Missing, typename N>
  static int32_t Step(const WalkNode<N>& n, N v) {
    bool go = Compare<M>(v, n.threshold);
    if constexpr (Missing) go = go | ((n.feature < 0) & std::isnan(v));
    return n.next[go];
  }

  template <NodeMode M, bool Missing, typename N, typename V, typename Report>
  void WalkUniform(const WalkNode<N>* nodes, const V* x, int64_t stride, int64_t rows, int64_t t0, int64_t t1,
                   Report& report) const {
    constexpr int32_t kFeature = Missing ? ~kMissingBit : -1;
    // Groups of kLanes rows, one tree at a time.
    const int64_t grouped = rows / kLanes * kLanes;
    for (int64_t t = t0; t < t1 && grouped > 0; ++t) {
      for (int64_t r = 0; r < grouped; r += kLanes) {
        const V* row = x + r * stride;
        int32_t at[kLanes];
        for (int g = 0; g < kLanes; ++g) at[g] = roots_[t];
        for (int32_t step = 0; step < depth_[t]; ++step) {
          int32_t moved = 0;
          for (int g = 0; g < kLanes; ++g) {
            const WalkNode<N>& n = nodes[at[g]];
            const int32_t next = Step<M, Missing>(n, static_cast<N>(row[g * stride + (n.feature & kFeature)]));
            moved |= next ^ at[g];
            at[g] = next;
          }
          if (moved == 0) break;
        }
        for (int g = 0; g < kLanes; ++g) report(r + g, LeafNumber(nodes[at[g]]));
      }
    }
    // The other rows (all of them in a batch of fewer than kLanes) one at a time, kLanes
    // trees stepping together (a short last group repeats its last tree, unreported).
    for (int64_t r = grouped; r < rows; ++r) {
      const V* row = x + r * stride;
      for (int64_t t = t0; t < t1; t += kLanes) {
        const int lanes = static_cast<int>(std::min<int64_t>(kLanes, t1 - t));
        int32_t at[kLanes];
        int32_t depth = 0;
        for (int g = 0; g < kLanes; ++g) {
          at[g] = roots_[t + std::min(g, lanes - 1)];
          depth = std::max(depth, depth_[t + std::min(g, lanes - 1)]);
        }
        for (int32_t step = 0; step < depth; ++step) {
          int32_t moved = 0;
          for (int g = 0; g < kLanes; ++g) {
            const WalkNode<N>& n = nodes[at[g]];
            const int32_t next = Step<M, Missing>(n, static_cast<N>(row[n.feature & kFeature]));
            moved |= next ^ at[g];
            at[g] = next;
          }
          if (moved == 0) break;
        }
        for (int g = 0; g < lanes; ++g) report(r, LeafNumber(nodes[at[g]]));
      }
    }
  }

  bool Goes(int32_t p, double v) const {
    const WalkNode<double>& n = dnodes_[p];
    if (std::isnan(v) && n.feature < 0) return true;
    switch (modes_[p]) {
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
      default: {
        const std::vector<double>& set = members_[member_set_[p]];
        // NaN is in no set (ONNX Runtime, onnx.reference); binary_search would find it.
        return !std::isnan(v) && std::binary_search(set.begin(), set.end(), v);
      }
    }
  }

  template <typename V, typename Report>
  void WalkMixed(const V* x, int64_t stride, int64_t rows, int64_t t0, int64_t t1, Report& report) const {
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        const V* row = x + r * stride;
        int32_t p = roots_[t];
        while (modes_[p] != NodeMode::kLeaf) {
          const WalkNode<double>& n = dnodes_[p];
          p = n.next[Goes(p, static_cast<double>(row[n.feature & ~kMissingBit])) ? 1 : 0];
        }
        report(r, LeafNumber(dnodes_[p]));
      }
    }
  }

  std::vector<int32_t> roots_;            // tree t's root position
  std::vector<int32_t> depth_;            // tree t's depth (the most steps a walk takes)
  std::vector<WalkNode<double>> dnodes_;  // every position
  std::vector<WalkNode<float>> fnodes_;   // the same with float thresholds, when exact and uniform
  std::vector<NodeMode> modes_;           // kLeaf for leaves
  std::vector<int32_t> member_set_;       // kMember: index into members_
  std::vector<std::vector<double>> members_;
  std::vector<int64_t> leaf_begin_;  // leaf l's weights: [leaf_begin_[l], leaf_begin_[l + 1])
  std::vector<LeafWeight> weights_;
  int64_t fixed_k_ = 0;                 // > 0: every leaf has K weights
  int64_t dense_k_ = 0;                 // > 0: every leaf gives targets 0..K-1 in order,
  std::vector<double> dense_;           // leaf l's weights at dense_[l * K ...]
  NodeMode uniform_ = NodeMode::kLeaf;  // the one branch mode, kLeaf if none, kMember if mixed
  bool missing_ = false;                // some node sends NaN to its true branch
  int64_t max_feature_ = -1;
};

}  // namespace ml
}  // namespace onnx_light
