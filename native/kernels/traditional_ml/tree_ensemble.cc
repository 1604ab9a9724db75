// TreeEnsemble (ai.onnx.ml 5): every row walks every tree to one leaf and the leaves'
// weights aggregate per target (SUM, AVERAGE, MIN, MAX), then the post_transform applies
// (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT, numbered 0-4 in that order). Rows are independent and each output row
// is written by one participant, so rows split through ParallelFor once rows x trees
// reaches parallel.minimum_elements (family traditional_ml). With fewer rows than
// parallel.tree_split_rows the trees split instead, in chunks of algorithm.trees_per_chunk
// (a schema value, never the participant count) whose partial aggregates merge in chunk
// order, so the result is the same for every participant count. The walk is TreeWalker's
// (tree_walk.h, shared with the ai.onnx.ml 1/3 ensembles): within a participant's rows,
// blocks of rows (algorithm.walk_bytes of them) pass each tree in turn, every row still
// adding its trees in tree order, so the blocking changes no result. Aggregates in double, stores
// float, double or float16.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/narrow_float.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/kernels/traditional_ml/ml_common.h"
#include "native/kernels/traditional_ml/tree_walk.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {
namespace {

// Tree walks per call below which the kernel runs serially: a walk costs ~10-50 ns, a
// region start a few microseconds.
constexpr int64_t kMinimumWalks = 4096;
constexpr int64_t kBlockRows = 16;
constexpr int64_t kTreeSplitRows = 8;
constexpr int64_t kTreesPerChunk = 16;

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return v.ToDouble();
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16::FromDouble(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double Largest() {
  if constexpr (std::is_same_v<T, Float16>) {
    return 65504.0;
  } else {
    return static_cast<double>(std::numeric_limits<T>::max());
  }
}

enum Aggregate : int64_t { kAverage = 0, kSum, kMin, kMax };

StatusOr<std::vector<double>> DoublesOf(const KernelInfo& info, const char* name, bool required) {
  if (!info.HasAttribute(name)) {
    if (required) return InvalidArgument(info.Where(), ": attribute ", name, " is required");
    return std::vector<double>{};
  }
  OL_ASSIGN_OR_RETURN(Tensor t, info.GetTensor(name));
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  Status s = DispatchType(TypeList<float, double, Float16>{}, t.dtype(), info.Where(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < out.size(); ++i) out[i] = ToDouble(t.data<T>()[i]);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

class TreeEnsembleKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(minimum_walks_, info.tuning().Int64(param::kMinimumElements));
    OL_ASSIGN_OR_RETURN(block_rows_, info.tuning().Int64(param::kBlockRows));
    OL_ASSIGN_OR_RETURN(tree_split_rows_, info.tuning().Int64(param::kTreeSplitRows));
    OL_ASSIGN_OR_RETURN(trees_per_chunk_, info.tuning().Int64("algorithm.trees_per_chunk"));
    OL_ASSIGN_OR_RETURN(walk_bytes_, info.tuning().Int64("algorithm.walk_bytes"));
    OL_ASSIGN_OR_RETURN(int64_t post, info.GetInt("post_transform", 0));
    if (post < 0 || post > 4) return InvalidArgument(where_, ": post_transform must be 0..4, got ", post);
    // TreeEnsemble numbers them NONE 0, SOFTMAX 1, LOGISTIC 2, SOFTMAX_ZERO 3, PROBIT 4.
    static constexpr PostTransform kByNumber[] = {PostTransform::kNone, PostTransform::kSoftmax,
                                                  PostTransform::kLogistic, PostTransform::kSoftmaxZero,
                                                  PostTransform::kProbit};
    post_ = kByNumber[post];
    OL_ASSIGN_OR_RETURN(aggregate_, info.GetInt("aggregate_function", kSum));
    if (aggregate_ < kAverage || aggregate_ > kMax) {
      return InvalidArgument(where_, ": aggregate_function must be 0..3, got ", aggregate_);
    }
    OL_ASSIGN_OR_RETURN(n_targets_, info.GetInt("n_targets"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> roots, info.GetInts("tree_roots"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> leaf_targets, info.GetInts("leaf_targetids"));
    OL_ASSIGN_OR_RETURN(std::vector<double> leaf_weights, DoublesOf(info, "leaf_weights", true));
    if (n_targets_ < 1 || leaf_targets.size() != leaf_weights.size()) {
      return InvalidArgument(where_, ": need n_targets >= 1 and one target id per leaf weight");
    }
    std::vector<LeafWeight> weights(leaf_weights.size());
    for (size_t i = 0; i < weights.size(); ++i) {
      const int64_t t = leaf_targets[i];
      if (t < 0 || t >= n_targets_)
        return InvalidArgument(where_, ": leaf target id ", t, " outside [0, ", n_targets_, ")");
      // AVERAGE adds each tree's weight divided by the tree count.
      const double w = leaf_weights[i];
      weights[i] = LeafWeight{t, aggregate_ == kAverage ? w / static_cast<double>(roots.size()) : w};
    }
    OL_ASSIGN_OR_RETURN(std::vector<SourceNode> nodes, ReadNodes(info, weights.size()));
    return walker_.Build(where_, nodes, roots, weights);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& shape = x->shape();
    const int64_t max_feature = walker_.max_feature();
    if (shape.rank() != 2 || shape.dim(1) <= max_feature) {
      return InvalidArgument(where_, ": X must be [N, F] with F > ", max_feature, " (the largest feature id), got ",
                             x->TypeAndShape());
    }
    const int64_t rows = shape.dim(0), features = shape.dim(1);
    return DispatchType(TypeList<float, double, Float16>{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      // Rows walk as T, float16 rows as floats (converted a block at a time).
      constexpr bool kConvert = std::is_same_v<T, Float16>;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape{rows, n_targets_}));
      const T* in = x->data<T>();
      T* out = y->data<T>();
      const int64_t trees = walker_.trees();
      const int64_t chunks = (trees + trees_per_chunk_ - 1) / trees_per_chunk_;
      const bool tree_split = rows < tree_split_rows_ && chunks > 1 && rows * trees >= minimum_walks_;
      const ParallelPlan plan{"TreeEnsembleRows", block_rows_};
      const bool parallel = !tree_split && rows * trees >= minimum_walks_;
      // Row split: per participant, the aggregates of a block of rows (and their converted
      // values). Tree split: [chunks, rows, targets] aggregates (and all rows converted).
      const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
      const int64_t row_bytes = features * static_cast<int64_t>(kConvert ? sizeof(float) : sizeof(T)) +
                                n_targets_ * static_cast<int64_t>(sizeof(double));
      const int64_t block = tree_split ? rows : WalkBlockRows(walk_bytes_, row_bytes, rows);
      const size_t acc_count = static_cast<size_t>(n_targets_ * (tree_split ? chunks * rows : participants * block));
      const size_t row_count = kConvert ? static_cast<size_t>(features * block * (tree_split ? 1 : participants)) : 0;
      const size_t bytes = sizeof(double) * acc_count + sizeof(float) * row_count;
      ScratchArena arena(ctx.allocator(), bytes + 128);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(double* scratch, arena.AllocateArray<double>(std::max<size_t>(acc_count, 1)));
      OL_ASSIGN_OR_RETURN(float* converted, arena.AllocateArray<float>(std::max<size_t>(row_count, 1)));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
      // Rows [begin, begin + n) as the walk reads them.
      auto walk_rows = [&](int64_t begin, int64_t n, float* buffer) {
        if constexpr (kConvert) {
          const T* from = in + begin * features;
          for (int64_t i = 0; i < n * features; ++i) buffer[i] = from[i].ToFloat();
          return static_cast<const float*>(buffer);
        } else {
          (void)buffer;
          return in + begin * features;
        }
      };
      auto walk = [&](const auto* xr, int64_t n, int64_t t0, int64_t t1, double* acc) {
        for (int64_t r = 0; r < n; ++r) InitRow<T>(acc + r * n_targets_);
        walker_.Accumulate(xr, features, n, t0, t1, acc, n_targets_, -1,
                           [&](double& into, double w) { Merge(into, w); });
      };
      auto store = [&](int64_t r, double* acc) {
        ApplyPostTransform(post_, acc, n_targets_);
        for (int64_t t = 0; t < n_targets_; ++t) out[r * n_targets_ + t] = FromDouble<T>(acc[t]);
      };
      if (tree_split) {
        const auto* xr = walk_rows(0, rows, converted);
        auto run_chunks = [&](int64_t begin, int64_t end) -> Status {
          for (int64_t c = begin; c < end; ++c) {
            const int64_t t0 = c * trees_per_chunk_, t1 = std::min(trees, t0 + trees_per_chunk_);
            walk(xr, rows, t0, t1, scratch + c * rows * n_targets_);
          }
          return Status::Ok();
        };
        OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), chunks, ParallelPlan{"TreeEnsembleTrees", 1}, run_chunks));
        for (int64_t c = 1; c < chunks; ++c) {  // merge in chunk order
          for (int64_t i = 0; i < rows * n_targets_; ++i) Merge(scratch[i], scratch[c * rows * n_targets_ + i]);
        }
        for (int64_t r = 0; r < rows; ++r) store(r, scratch + r * n_targets_);
        return Status::Ok();
      }
      // Each row's trees in order, the trees the outer loop over blocks of rows.
      auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
        double* acc = scratch + participant * block * n_targets_;
        float* buffer = converted + (kConvert ? participant * block * features : 0);
        for (int64_t b = begin; b < end; b += block) {
          const int64_t n = std::min(block, end - b);
          walk(walk_rows(b, n, buffer), n, 0, trees, acc);
          for (int64_t r = 0; r < n; ++r) store(b + r, acc + r * n_targets_);
        }
        return Status::Ok();
      };
      if (!parallel) return run(0, 0, rows);
      return ParallelForWithParticipant(ctx.parallel(), rows, plan, run);
    });
  }

 private:
  // Nodes [0, n) then leaves [n, n + leaves) as SourceNodes.
  StatusOr<std::vector<SourceNode>> ReadNodes(const KernelInfo& info, size_t leaves) {
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> features, info.GetInts("nodes_featureids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> true_ids, info.GetInts("nodes_truenodeids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> false_ids, info.GetInts("nodes_falsenodeids"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> true_leafs, info.GetInts("nodes_trueleafs"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> false_leafs, info.GetInts("nodes_falseleafs"));
    OL_ASSIGN_OR_RETURN(std::vector<double> splits, DoublesOf(info, "nodes_splits", true));
    OL_ASSIGN_OR_RETURN(std::vector<double> members, DoublesOf(info, "membership_values", false));
    std::vector<int64_t> missing;
    if (info.HasAttribute("nodes_missing_value_tracks_true")) {
      OL_ASSIGN_OR_RETURN(missing, info.GetInts("nodes_missing_value_tracks_true"));
    }
    OL_ASSIGN_OR_RETURN(Tensor modes, info.GetTensor("nodes_modes"));
    const size_t n = features.size();
    if (modes.dtype() != DataType::kUint8 || static_cast<size_t>(modes.num_elements()) != n || true_ids.size() != n ||
        false_ids.size() != n || true_leafs.size() != n || false_leafs.size() != n || splits.size() != n ||
        (!missing.empty() && missing.size() != n)) {
      return InvalidArgument(where_, ": the nodes_* attributes must all have one entry per node (", n, ")");
    }
    std::vector<SourceNode> nodes(n + leaves);
    size_t member_at = 0;
    for (size_t i = 0; i < n; ++i) {
      SourceNode& node = nodes[i];
      const uint8_t mode = modes.data<uint8_t>()[i];
      if (mode > static_cast<uint8_t>(NodeMode::kMember) || features[i] < 0) {
        return InvalidArgument(where_, ": node ", i, " has mode ", int{mode}, " and feature ", features[i]);
      }
      node.mode = static_cast<NodeMode>(mode);
      node.feature = features[i];
      node.threshold = splits[i];
      node.missing_goes_true = !missing.empty() && missing[i] != 0;
      const int64_t ids[2] = {false_ids[i], true_ids[i]};
      const bool leaf[2] = {false_leafs[i] != 0, true_leafs[i] != 0};
      for (int b = 0; b < 2; ++b) {
        const size_t limit = leaf[b] ? leaves : n;
        if (ids[b] < 0 || static_cast<size_t>(ids[b]) >= limit) {
          return InvalidArgument(where_, ": node ", i, " branches to ", leaf[b] ? "leaf " : "node ", ids[b],
                                 ", out of range");
        }
        node.next[b] = leaf[b] ? static_cast<int64_t>(n) + ids[b] : ids[b];
      }
      if (node.mode == NodeMode::kMember) {  // the k-th member node takes the k-th NaN-terminated set
        while (member_at < members.size() && !std::isnan(members[member_at]))
          node.members.push_back(members[member_at++]);
        if (member_at++ >= members.size())
          return InvalidArgument(where_, ": membership_values lacks a set for node ", i);
        std::sort(node.members.begin(), node.members.end());
      }
    }
    for (size_t k = 0; k < leaves; ++k) {
      nodes[n + k].weights_begin = static_cast<int64_t>(k);
      nodes[n + k].weights_end = static_cast<int64_t>(k + 1);
    }
    return nodes;
  }

  // acc[n_targets] before any tree: 0, or the type's extremes for MIN and MAX.
  template <typename T>
  void InitRow(double* acc) const {
    const double init = aggregate_ == kMin ? Largest<T>() : aggregate_ == kMax ? -Largest<T>() : 0.0;
    std::fill(acc, acc + n_targets_, init);
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

  std::string where_;
  int64_t minimum_walks_ = kMinimumWalks;
  int64_t block_rows_ = kBlockRows;
  int64_t tree_split_rows_ = kTreeSplitRows;
  int64_t trees_per_chunk_ = kTreesPerChunk;
  int64_t walk_bytes_ = kWalkBytes;
  PostTransform post_ = PostTransform::kNone;
  int64_t aggregate_ = kSum;
  int64_t n_targets_ = 1;
  TreeWalker walker_;
};

OL_REGISTER_KERNELS(ml_tree_ensemble) {
  Kernel("TreeEnsemble")
      .Domain("ai.onnx.ml")
      .Versions(5, kOpenEnded)
      .Types({DataType::kFloat, DataType::kDouble, DataType::kFloat16})
      .Tuning({
          MinimumElementsParam(kMinimumWalks, "tree walks (rows x trees) below which the kernel runs serially"),
          ParamSpec::Int64(param::kBlockRows, kBlockRows, 1, int64_t{1} << 30,
                           "rows per block are a multiple of this (the ParallelFor grain)"),
          ParamSpec::Int64(param::kTreeSplitRows, kTreeSplitRows, 0, int64_t{1} << 30,
                           "batches with fewer rows split the trees into chunks instead of the rows"),
          ParamSpec::Int64(
              "algorithm.trees_per_chunk", kTreesPerChunk, 1, int64_t{1} << 30,
              "trees per chunk in the tree split (fixes the merge order: changes rounding, not participants)"),
          WalkBytesParam(),
      })
      .Calibratable()
      .Factory(MakeKernel<TreeEnsembleKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
