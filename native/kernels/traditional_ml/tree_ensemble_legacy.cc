// TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml 1 and 3): the ensembles
// scikit-learn, LightGBM and XGBoost converters write. Nodes are named by (tree id, node
// id); every row walks every tree to a leaf, whose (target, weight) pairs aggregate per
// target (regressor: SUM, AVERAGE, MIN, MAX; classifier: SUM), then base_values and the
// post_transform apply. Two-label classifiers follow ONNX Runtime exactly (which class got
// weights, how many base values, whether all weights are >= 0 decide the label rule and the
// second score: [1 - s, s], [-s, s] or their logistic forms), except that where ONNX
// Runtime returns the literal 1 / 0 for int64 labels we return the labels themselves.
//
// Parallel work (family traditional_ml), deterministic for every participant count:
// - many rows: rows split through ParallelFor, each row computed whole by one participant;
// - few rows (< parallel.tree_split_rows) and many trees: the trees are cut into chunks of
//   algorithm.trees_per_chunk (a schema value, never the participant count), each chunk's
//   partial aggregates go to their own scratch slot, and the chunks merge in chunk order.
//   The serial path computes the same chunks, so the result is the same either way.
// The walk is TreeWalker's (tree_walk.h, shared with TreeEnsemble 5): within a
// participant's rows, blocks of rows (algorithm.walk_bytes of them) pass each tree in
// turn, every row still adding its trees in tree order, so the blocking changes no result.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/traditional_ml/ml_common.h"
#include "native/kernels/traditional_ml/tree_walk.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {
namespace {

constexpr int64_t kMinimumWalks = 4096;  // rows x trees below which everything is serial
constexpr int64_t kBlockRows = 16;
constexpr int64_t kTreeSplitRows = 8;  // fewer rows than this: split the trees instead
constexpr int64_t kTreesPerChunk = 16;

enum Aggregate : uint8_t { kSum = 0, kAverage, kMin, kMax };

class LegacyTreeEnsembleKernel : public OpKernel {
 public:
  explicit LegacyTreeEnsembleKernel(bool classifier) : classifier_(classifier) {}

  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(minimum_walks_, info.tuning().Int64(param::kMinimumElements));
    OL_ASSIGN_OR_RETURN(block_rows_, info.tuning().Int64(param::kBlockRows));
    OL_ASSIGN_OR_RETURN(tree_split_rows_, info.tuning().Int64(param::kTreeSplitRows));
    OL_ASSIGN_OR_RETURN(trees_per_chunk_, info.tuning().Int64("algorithm.trees_per_chunk"));
    OL_ASSIGN_OR_RETURN(walk_bytes_, info.tuning().Int64("algorithm.walk_bytes"));
    OL_ASSIGN_OR_RETURN(post_, ReadPostTransform(info));
    OL_ASSIGN_OR_RETURN(base_values_, FloatsOrTensor(info, "base_values", false));
    const char* prefix = classifier_ ? "class_" : "target_";
    std::vector<int64_t> leaf_trees, leaf_nodes, leaf_targets;
    OL_ASSIGN_OR_RETURN(leaf_trees, info.GetInts(std::string(prefix) + "treeids"));
    OL_ASSIGN_OR_RETURN(leaf_nodes, info.GetInts(std::string(prefix) + "nodeids"));
    OL_ASSIGN_OR_RETURN(leaf_targets, info.GetInts(classifier_ ? "class_ids" : "target_ids"));
    OL_ASSIGN_OR_RETURN(std::vector<double> leaf_weights,
                        FloatsOrTensor(info, classifier_ ? "class_weights" : "target_weights", true));
    if (leaf_trees.size() != leaf_nodes.size() || leaf_trees.size() != leaf_targets.size() ||
        leaf_trees.size() != leaf_weights.size()) {
      return InvalidArgument(where_, ": the ", prefix, "* attributes must have one entry per leaf weight");
    }
    if (classifier_) {
      if (info.HasAttribute("classlabels_strings")) {
        OL_ASSIGN_OR_RETURN(string_labels_, info.GetStrings("classlabels_strings"));
        n_targets_ = static_cast<int64_t>(string_labels_.size());
      } else {
        OL_ASSIGN_OR_RETURN(int_labels_, info.GetInts("classlabels_int64s"));
        n_targets_ = static_cast<int64_t>(int_labels_.size());
      }
      if (n_targets_ < 1) return InvalidArgument(where_, ": needs class labels");
      aggregate_ = kSum;
      std::vector<int64_t> distinct = leaf_targets;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      binary_ = n_targets_ == 2 && distinct.size() == 1;
      all_weights_positive_ = std::all_of(leaf_weights.begin(), leaf_weights.end(), [](double w) { return w >= 0; });
    } else {
      OL_ASSIGN_OR_RETURN(n_targets_, info.GetInt("n_targets", 1));
      OL_ASSIGN_OR_RETURN(std::string aggregate, info.GetString("aggregate_function", "SUM"));
      if (aggregate == "SUM")
        aggregate_ = kSum;
      else if (aggregate == "AVERAGE")
        aggregate_ = kAverage;
      else if (aggregate == "MIN")
        aggregate_ = kMin;
      else if (aggregate == "MAX")
        aggregate_ = kMax;
      else
        return InvalidArgument(where_, ": unknown aggregate_function '", aggregate, "'");
      if (n_targets_ < 1) return InvalidArgument(where_, ": n_targets must be >= 1");
    }
    for (int64_t t : leaf_targets) {
      if (t < 0 || t >= n_targets_)
        return InvalidArgument(where_, ": target/class id ", t, " outside [0, ", n_targets_, ")");
    }
    if (!base_values_.empty() && static_cast<int64_t>(base_values_.size()) != n_targets_ &&
        !(classifier_ && n_targets_ == 2 && base_values_.size() == 1)) {
      return InvalidArgument(where_, ": base_values has ", base_values_.size(), " entries for ", n_targets_,
                             " targets");
    }
    OL_RETURN_IF_ERROR(ReadNodes(info, leaf_trees, leaf_nodes, leaf_targets, leaf_weights));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    const int64_t max_feature = walker_.max_feature();
    if (features <= max_feature) {
      return InvalidArgument(where_, ": X has ", features, " features, the trees read feature ", max_feature);
    }
    const int64_t trees = walker_.trees();
    const int64_t chunks = (trees + trees_per_chunk_ - 1) / trees_per_chunk_;
    const bool tree_split = rows < tree_split_rows_ && chunks > 1 && rows * trees >= minimum_walks_;
    // Per row: the aggregates, then (two-class classifiers) whether each class got a weight.
    const int64_t width = stride();
    const ParallelPlan row_plan{"TreeEnsembleLegacyRows", block_rows_};
    const bool row_parallel = !tree_split && rows * trees >= minimum_walks_ && rows > block_rows_;
    const int participants = row_parallel ? AvailableParticipants(ctx.parallel(), row_plan) : 1;
    // Float and double rows walk in place; int64 and int32 rows as doubles, converted a
    // block at a time (all rows in the tree split).
    const bool convert = x->dtype() != DataType::kFloat && x->dtype() != DataType::kDouble;
    const int64_t value_bytes = x->dtype() == DataType::kFloat ? sizeof(float) : sizeof(double);
    const int64_t row_bytes = features * value_bytes + width * static_cast<int64_t>(sizeof(double));
    const int64_t block = tree_split ? rows : WalkBlockRows(walk_bytes_, row_bytes, rows);
    // Aggregates: [rows, width] (row split) or [chunks, rows, width] (tree split).
    const size_t acc_count = static_cast<size_t>((tree_split ? chunks : 1) * rows * width);
    const size_t row_count = convert ? static_cast<size_t>(features * block * (tree_split ? 1 : participants)) : 0;
    ScratchArena arena(ctx.allocator(), sizeof(double) * (acc_count + row_count) + 128);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(double* acc, arena.AllocateArray<double>(std::max<size_t>(acc_count, 1)));
    OL_ASSIGN_OR_RETURN(double* xrows, arena.AllocateArray<double>(std::max<size_t>(row_count, 1)));
    ctx.RecordScratch(static_cast<int64_t>(sizeof(double) * (acc_count + row_count)));

    // Rows [begin, begin + n), trees [t0, t1) into a[n, width]; `converted`: those rows
    // as doubles, for int64 and int32 X.
    auto walk = [&](int64_t begin, int64_t n, int64_t t0, int64_t t1, double* a, const double* converted) {
      for (int64_t r = 0; r < n; ++r) InitAggregate(a + r * width);
      const int64_t flags = width != n_targets_ ? n_targets_ : -1;  // "has a score" after the aggregates
      auto merge = [&](double& into, double w) { Merge(into, w); };
      if (converted != nullptr) {
        walker_.Accumulate(converted, features, n, t0, t1, a, width, flags, merge);
      } else if (x->dtype() == DataType::kFloat) {
        walker_.Accumulate(x->data<float>() + begin * features, features, n, t0, t1, a, width, flags, merge);
      } else {
        walker_.Accumulate(x->data<double>() + begin * features, features, n, t0, t1, a, width, flags, merge);
      }
    };
    if (tree_split) {
      if (convert) OL_RETURN_IF_ERROR(ReadRowsAsDouble(*x, 0, rows, features, where_, xrows));
      auto run_chunks = [&](int64_t begin, int64_t end) -> Status {
        for (int64_t c = begin; c < end; ++c) {
          const int64_t t0 = c * trees_per_chunk_, t1 = std::min(trees, t0 + trees_per_chunk_);
          walk(0, rows, t0, t1, acc + c * rows * width, convert ? xrows : nullptr);
        }
        return Status::Ok();
      };
      OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), chunks, ParallelPlan{"TreeEnsembleLegacyTrees", 1}, run_chunks));
      for (int64_t c = 1; c < chunks; ++c) {  // merge in chunk order
        for (int64_t i = 0; i < rows * width; ++i) {
          double& into = acc[i];
          const double from = acc[c * rows * width + i];
          if (i % width < n_targets_)
            Merge(into, from);
          else
            into = std::max(into, from);  // "has a score" flags
        }
      }
      return Finish(ctx, rows, acc);
    }
    // Each row's trees in order, the trees the outer loop over blocks of rows.
    auto run_rows = [&](int participant, int64_t begin, int64_t end) -> Status {
      double* buffer = xrows + (convert ? participant * block * features : 0);
      for (int64_t b = begin; b < end; b += block) {
        const int64_t n = std::min(block, end - b);
        if (convert) OL_RETURN_IF_ERROR(ReadRowsAsDouble(*x, b, b + n, features, where_, buffer));
        walk(b, n, 0, trees, acc + b * width, convert ? buffer : nullptr);
      }
      return Status::Ok();
    };
    if (row_parallel) {
      OL_RETURN_IF_ERROR(ParallelForWithParticipant(ctx.parallel(), rows, row_plan, run_rows));
    } else {
      OL_RETURN_IF_ERROR(run_rows(0, 0, rows));
    }
    return Finish(ctx, rows, acc);
  }

 private:
  Status ReadNodes(const KernelInfo& info, const std::vector<int64_t>& leaf_trees,
                   const std::vector<int64_t>& leaf_nodes, const std::vector<int64_t>& leaf_targets,
                   const std::vector<double>& leaf_weights) {
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> tree_ids, info.GetInts("nodes_treeids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> node_ids, info.GetInts("nodes_nodeids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> features, info.GetInts("nodes_featureids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> true_ids, info.GetInts("nodes_truenodeids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> false_ids, info.GetInts("nodes_falsenodeids"));
    OL_ASSIGN_OR_RETURN(std::vector<std::string> modes, info.GetStrings("nodes_modes"));
    OL_ASSIGN_OR_RETURN(std::vector<double> values, FloatsOrTensor(info, "nodes_values", false));
    std::vector<int64_t> missing;
    if (info.HasAttribute("nodes_missing_value_tracks_true")) {
      OL_ASSIGN_OR_RETURN(missing, info.GetInts("nodes_missing_value_tracks_true"));
    }
    const size_t n = tree_ids.size();
    if (node_ids.size() != n || features.size() != n || true_ids.size() != n || false_ids.size() != n ||
        modes.size() != n || (!values.empty() && values.size() != n) || (!missing.empty() && missing.size() != n)) {
      return InvalidArgument(where_, ": the nodes_* attributes must all have one entry per node (", n, ")");
    }
    std::map<std::pair<int64_t, int64_t>, int64_t> index;
    std::map<int64_t, int64_t> roots;  // tree id -> its first node (trees in id order)
    for (size_t i = 0; i < n; ++i) {
      if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second) {
        return InvalidArgument(where_, ": node (tree ", tree_ids[i], ", id ", node_ids[i], ") appears twice");
      }
      roots.emplace(tree_ids[i], static_cast<int64_t>(i));
    }
    std::vector<SourceNode> nodes(n);
    for (size_t i = 0; i < n; ++i) {
      SourceNode& node = nodes[i];
      static const char* kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
      node.mode = NodeMode::kMember;  // unknown
      for (uint8_t m = 0; m < 6; ++m) {
        if (modes[i] == kModes[m]) node.mode = static_cast<NodeMode>(m);
      }
      if (modes[i] == "LEAF") node.mode = NodeMode::kLeaf;
      if (node.mode == NodeMode::kMember)
        return InvalidArgument(where_, ": node ", i, " has unknown mode '", modes[i], "'");
      if (node.mode == NodeMode::kLeaf) continue;
      node.feature = features[i];
      node.threshold = values.empty() ? 0.0 : values[i];
      node.missing_goes_true = !missing.empty() && missing[i] != 0;
      if (node.feature < 0) return InvalidArgument(where_, ": node ", i, " reads feature ", node.feature);
      const int64_t ids[2] = {false_ids[i], true_ids[i]};
      for (int b = 0; b < 2; ++b) {
        auto it = index.find({tree_ids[i], ids[b]});
        if (it == index.end()) {
          return InvalidArgument(where_, ": node (tree ", tree_ids[i], ", id ", node_ids[i],
                                 ") branches to missing node ", ids[b]);
        }
        node.next[b] = it->second;
      }
    }
    // Leaf weights grouped by leaf, each leaf's in attribute order.
    std::vector<std::vector<LeafWeight>> per_node(n);
    for (size_t k = 0; k < leaf_trees.size(); ++k) {
      auto it = index.find({leaf_trees[k], leaf_nodes[k]});
      if (it == index.end()) {
        return InvalidArgument(where_, ": a weight names missing node (tree ", leaf_trees[k], ", id ", leaf_nodes[k],
                               ")");
      }
      per_node[it->second].push_back(LeafWeight{leaf_targets[k], leaf_weights[k]});
    }
    std::vector<LeafWeight> weights;
    for (size_t i = 0; i < n; ++i) {
      nodes[i].weights_begin = static_cast<int64_t>(weights.size());
      weights.insert(weights.end(), per_node[i].begin(), per_node[i].end());
      nodes[i].weights_end = static_cast<int64_t>(weights.size());
    }
    std::vector<int64_t> tree_roots;
    for (const auto& [tree, root] : roots) tree_roots.push_back(root);
    return walker_.Build(where_, nodes, tree_roots, weights);
  }

  // Two-class classifiers follow ONNX Runtime, whose result depends on which classes got
  // any weight: they keep one flag per class after the aggregates.
  int64_t stride() const { return classifier_ && n_targets_ == 2 ? 2 * n_targets_ : n_targets_; }

  void InitAggregate(double* a) const {
    const double init = aggregate_ == kMin   ? std::numeric_limits<double>::infinity()
                        : aggregate_ == kMax ? -std::numeric_limits<double>::infinity()
                                             : 0.0;
    std::fill(a, a + n_targets_, init);
    std::fill(a + n_targets_, a + stride(), 0.0);
  }

  void Merge(double& into, double from) const {
    switch (aggregate_) {
      case kMin:
        into = std::min(into, from);
        break;
      case kMax:
        into = std::max(into, from);
        break;
      default:
        into += from;
        break;
    }
  }

  // Aggregates -> outputs: AVERAGE, base values, the two-class forms, post_transform, labels.
  Status Finish(KernelContext& ctx, int64_t rows, double* acc) {
    const int64_t width = n_targets_;
    const double trees = static_cast<double>(std::max<int64_t>(walker_.trees(), 1));
    if (!classifier_) {
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape{rows, width}));
      for (int64_t r = 0; r < rows; ++r) {
        double* a = acc + r * stride();
        for (int64_t t = 0; t < width; ++t) {
          if (std::isinf(a[t]) && aggregate_ >= kMin) a[t] = 0;  // no tree reached the target
          if (aggregate_ == kAverage) a[t] /= trees;
          if (!base_values_.empty()) a[t] += base_values_[t];
        }
        ApplyPostTransform(post_, a, width);
        for (int64_t t = 0; t < width; ++t) y->data<float>()[r * width + t] = static_cast<float>(a[t]);
      }
      return Status::Ok();
    }
    const bool strings = !string_labels_.empty();
    OL_ASSIGN_OR_RETURN(Tensor * labels,
                        ctx.AllocateOutput(0, strings ? DataType::kString : DataType::kInt64, Shape{rows}));
    OL_ASSIGN_OR_RETURN(Tensor * z, ctx.AllocateOutput(1, DataType::kFloat, Shape{rows, width}));
    for (int64_t r = 0; r < rows; ++r) {
      double* a = acc + r * stride();
      const int64_t label = width == 2 ? TwoClasses(a) : MultiClass(a);
      for (int64_t t = 0; t < width; ++t) z->data<float>()[r * width + t] = static_cast<float>(a[t]);
      if (strings) {
        labels->data<std::string>()[r] = string_labels_[label];
      } else {
        labels->data<int64_t>()[r] = int_labels_[label];
      }
    }
    return Status::Ok();
  }

  int64_t MultiClass(double* a) const {
    for (int64_t t = 0; t < n_targets_ && !base_values_.empty(); ++t) a[t] += base_values_[t];
    const int64_t label = ArgMax(a, n_targets_);
    ApplyPostTransform(post_, a, n_targets_);
    return label;
  }

  // ONNX Runtime's two-label classifier: a[0..1] the class sums, a[2..3] whether each class
  // got any weight. Returns the label index and leaves the two output scores in a[0..1].
  int64_t TwoClasses(double* a) const {
    double p0 = a[0], p1 = a[1];
    const bool has0 = a[2] != 0;
    bool has1 = a[3] != 0;
    int single = 0;   // 1: only p0 carries the score (the positive class's, in the binary case)
    int second = -1;  // how the missing second score is made (ONNX Runtime's add_second_class)
    if (base_values_.size() == 2) {
      if (has1) {
        p1 = base_values_[1] + p0;
        p0 = -p1;
      } else {
        p1 += base_values_[1];
        p0 += base_values_[0];
      }
    } else if (base_values_.size() == 1) {
      p0 += base_values_[0];
      single = has1 ? 0 : 1;
    } else {
      second = 3;
      single = has1 ? 0 : 1;
    }
    const double positive = (!single && has1) ? p1 : (has0 ? p0 : 0.0);
    int64_t label;
    if (binary_) {
      if (all_weights_positive_) {
        label = positive > 0.5 ? 1 : 0;
        second = positive > 0.5 ? 0 : 1;
      } else {
        label = positive > 0 ? 1 : 0;
        second = positive > 0 ? 2 : 3;
      }
    } else {
      label = positive > 0 ? 1 : 0;  // ONNX Runtime: the positive class when its score is > 0
    }
    if (!single) {
      a[0] = p0;
      a[1] = p1;
      ApplyPostTransform(post_, a, 2);
      return label;
    }
    const double s = p0;
    if (post_ == PostTransform::kProbit) {
      a[0] = Probit(s);
      a[1] = 0;
    } else if (second == 0 || second == 1) {  // non-negative weights: [1 - p, p]
      const double p = post_ == PostTransform::kLogistic ? Logistic(s) : s;
      a[0] = 1 - p;
      a[1] = p;
    } else if (second == 2 || second == 3) {  // mixed weights: [-s, s] or its logistic pair
      a[0] = post_ == PostTransform::kLogistic ? Logistic(-s) : -s;
      a[1] = post_ == PostTransform::kLogistic ? Logistic(s) : s;
    } else {
      a[0] = s;
      a[1] = 0;
    }
    return label;
  }

  bool classifier_;
  std::string where_;
  int64_t minimum_walks_ = kMinimumWalks;
  int64_t block_rows_ = kBlockRows;
  int64_t tree_split_rows_ = kTreeSplitRows;
  int64_t trees_per_chunk_ = kTreesPerChunk;
  int64_t walk_bytes_ = kWalkBytes;
  PostTransform post_ = PostTransform::kNone;
  uint8_t aggregate_ = kSum;
  int64_t n_targets_ = 1;
  bool binary_ = false;
  bool all_weights_positive_ = true;
  std::vector<double> base_values_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  TreeWalker walker_;
};

std::vector<ParamSpec> TreeTuning() {
  return {
      MinimumElementsParam(kMinimumWalks, "tree walks (rows x trees) below which the kernel runs serially"),
      ParamSpec::Int64(param::kBlockRows, kBlockRows, 1, int64_t{1} << 30,
                       "rows per block are a multiple of this (the ParallelFor grain of the row split)"),
      ParamSpec::Int64(param::kTreeSplitRows, kTreeSplitRows, 0, int64_t{1} << 30,
                       "batches with fewer rows split the trees into chunks instead of the rows"),
      ParamSpec::Int64("algorithm.trees_per_chunk", kTreesPerChunk, 1, int64_t{1} << 30,
                       "trees per chunk in the tree split (fixes the merge order: changes rounding, not participants)"),
      WalkBytesParam(),
  };
}

OL_REGISTER_KERNELS(ml_tree_ensemble_legacy) {
  for (const char* op : {"TreeEnsembleClassifier", "TreeEnsembleRegressor"}) {
    const bool classifier = std::string(op) == "TreeEnsembleClassifier";
    Kernel(op)
        .Domain("ai.onnx.ml")
        .Types({DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32})
        .Tuning(TreeTuning())
        .Factory([classifier](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
          auto kernel = std::make_unique<LegacyTreeEnsembleKernel>(classifier);
          OL_RETURN_IF_ERROR(kernel->Init(info));
          return std::unique_ptr<OpKernel>(std::move(kernel));
        })
        .AddTo(registry);
  }
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
