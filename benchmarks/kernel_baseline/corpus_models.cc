// Corpus cases of the ops that need a whole model's attributes or non-tensor inputs:
// SVMs, the legacy tree ensembles (ai.onnx.ml 1/3), the map and sequence encoders
// (ZipMap, CastMap, DictVectorizer), LinearAttention and FlexAttention (with a score_mod
// subgraph). As in the other corpus files, each size's work_units is what the op's
// parallel.minimum_* parameter counts, so crossovers compare with the schema default.
#include <map>
#include <memory>

#include "benchmarks/kernel_baseline/corpus_inputs.h"
#include "native/graph/graph.h"

namespace onnx_light {
namespace baseline {
namespace {

constexpr char kMl[] = "ai.onnx.ml";


// n uniform floats in [lo, hi] as an attribute list (these ops take floats, not tensors).
std::vector<float> FloatList(int64_t n, float lo, float hi, uint32_t seed) {
  const Tensor t = RandomFloats(Shape({n}), lo, hi, seed);
  return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

// An RBF SVM over rows of 16 features with 64 support vectors (kernel evaluations x
// features: rows x 64 x 16).
constexpr int64_t kSvmVectors = 64, kSvmFeatures = 16;

void AddSvmModel(KernelRunner& r) {
  r.Attr("kernel_type", std::string("RBF")).Attr("kernel_params", std::vector<float>{0.1f, 0.0f, 3.0f});
  r.Attr("support_vectors", FloatList(kSvmVectors * kSvmFeatures, -1, 1, 11));
}

void Svms(std::vector<CorpusCase>* corpus) {
  const auto rows_of = [](int s) { return std::vector<int64_t>{8, 32, 1024}[s]; };
  PerType(corpus, "SVMClassifier", kMl, 1, {DataType::kFloat}, [=](DataType t, int s) {
    const Shape x({rows_of(s), kSvmFeatures});
    return CorpusSize{"", rows_of(s) * kSvmVectors * kSvmFeatures, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1));
                        AddSvmModel(r);
                        r.Attr("classlabels_ints", std::vector<int64_t>{0, 1, 2});
                        r.Attr("vectors_per_class", std::vector<int64_t>{22, 21, 21});
                        r.Attr("coefficients", FloatList(2 * kSvmVectors, -1, 1, 12));
                        r.Attr("rho", std::vector<float>{0.1f, -0.2f, 0.3f}).Outputs(2);
                      }};
  });
  PerType(corpus, "SVMRegressor", kMl, 1, {DataType::kFloat}, [=](DataType t, int s) {
    const Shape x({rows_of(s), kSvmFeatures});
    return CorpusSize{"", rows_of(s) * kSvmVectors * kSvmFeatures, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1));
                        AddSvmModel(r);
                        r.Attr("n_supports", kSvmVectors);
                        r.Attr("coefficients", FloatList(kSvmVectors, -1, 1, 12));
                        r.Attr("rho", std::vector<float>{0.1f});
                      }};
  });
}

// Attributes of a legacy (ai.onnx.ml 1/3) ensemble of `trees` complete binary trees of
// `depth` levels over `features` features, node ids in heap order within each tree;
// leaves score class (leaf % classes) or the single target.
void AddLegacyTrees(KernelRunner& r, bool classifier, int64_t trees, int depth, int64_t features, int64_t classes) {
  const int64_t internal = (int64_t{1} << depth) - 1, nodes = 2 * internal + 1;
  std::vector<int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids, leaf_trees, leaf_nodes, leaf_targets;
  std::vector<std::string> modes;
  std::mt19937 rng(5);
  for (int64_t t = 0; t < trees; ++t) {
    for (int64_t i = 0; i < nodes; ++i) {
      const bool leaf = i >= internal;
      tree_ids.push_back(t);
      node_ids.push_back(i);
      feature_ids.push_back(leaf ? 0 : static_cast<int64_t>(rng() % features));
      true_ids.push_back(leaf ? 0 : 2 * i + 1);
      false_ids.push_back(leaf ? 0 : 2 * i + 2);
      modes.push_back(leaf ? "LEAF" : "BRANCH_LEQ");
      if (leaf) {
        leaf_trees.push_back(t);
        leaf_nodes.push_back(i);
        leaf_targets.push_back(classifier ? i % classes : 0);
      }
    }
  }
  const int64_t leaves = static_cast<int64_t>(leaf_trees.size());
  r.Attr("nodes_treeids", tree_ids).Attr("nodes_nodeids", node_ids).Attr("nodes_featureids", feature_ids);
  r.Attr("nodes_truenodeids", true_ids).Attr("nodes_falsenodeids", false_ids).Attr("nodes_modes", modes);
  r.Attr("nodes_values", FloatList(trees * nodes, -1, 1, 6));
  const std::string prefix = classifier ? "class_" : "target_";
  r.Attr(prefix + "treeids", leaf_trees).Attr(prefix + "nodeids", leaf_nodes);
  r.Attr(classifier ? "class_ids" : "target_ids", leaf_targets);
  r.Attr(classifier ? "class_weights" : "target_weights", FloatList(leaves, -1, 1, 8));
}

// 64 trees of depth 6 over rows of 16 features, as the TreeEnsemble (ai.onnx.ml 5) case
// (tree walks: rows x trees).
void LegacyTrees(std::vector<CorpusCase>* corpus) {
  for (bool classifier : {false, true}) {
    PerType(corpus, classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor", kMl, 3, {DataType::kFloat},
           [=](DataType t, int s) {
             const int64_t rows = std::vector<int64_t>{8, 128, 2048}[s], trees = 64, features = 16;
             const Shape x({rows, features});
             return CorpusSize{"", rows * trees, ShapeText({x}), [=](KernelRunner& r) {
                                 r.Input(Typed(t, x, -1, 1, 1));
                                 AddLegacyTrees(r, classifier, trees, 6, features, 3);
                                 if (classifier) {
                                   r.Attr("classlabels_int64s", std::vector<int64_t>{0, 1, 2}).Outputs(2);
                                 } else {
                                   r.Attr("n_targets", int64_t{1});
                                 }
                               }};
           });
  }
}

// The map and sequence encoders (output elements).
void MapEncoders(std::vector<CorpusCase>* corpus) {
  // ZipMap: N rows of 8 class probabilities -> a sequence of N maps (rows x classes).
  PerType(corpus, "ZipMap", kMl, 1, {DataType::kFloat}, [](DataType t, int s) {
    const int64_t rows = std::vector<int64_t>{64, 4096, 131072}[s], classes = 8;
    const Shape x({rows, classes});
    return CorpusSize{"", rows * classes, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, 0, 1, 1));
                        r.Attr("classlabels_int64s", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
                      }};
  });
  // A map of n int64 keys (shuffled) to float values (output columns: n).
  const auto map_of = [](int64_t n) {
    std::vector<int64_t> keys(n);
    for (int64_t i = 0; i < n; ++i) keys[i] = (i * 7919) % n;
    return Value::Map(Int64s(keys), RandomFloats(Shape({n}), -1, 1, 2));
  };
  const auto columns = [](int s) { return std::vector<int64_t>{1 << 10, 1 << 15, 1 << 20}[s]; };
  PerType(corpus, "CastMap", kMl, 1, {DataType::kInt64}, [=](DataType, int s) {
    const int64_t n = columns(s);
    return CorpusSize{"", n, "map(int64,float)[" + std::to_string(n) + "]",
                      [=](KernelRunner& r) { r.InputValue(map_of(n)).Attr("cast_to", std::string("TO_FLOAT")); }};
  });
  PerType(corpus, "DictVectorizer", kMl, 1, {DataType::kInt64}, [=](DataType, int s) {
    const int64_t n = columns(s);
    return CorpusSize{"", n, "map(int64,float)[" + std::to_string(n) + "]", [=](KernelRunner& r) {
                        std::vector<int64_t> vocabulary(n);
                        for (int64_t i = 0; i < n; ++i) vocabulary[i] = i;
                        r.InputValue(map_of(n)).Attr("int64_vocabulary", vocabulary);
                      }};
  });
}

const std::vector<DataType> kHalfToo = {DataType::kFloat, DataType::kFloat16};

// LinearAttention (gated delta rule, its default): 8 heads of d_k = d_v = 64 over T steps
// (state update and read multiply-adds: T x 8 x 64 x 64 x (1 + 3)).
void LinearAttention(std::vector<CorpusCase>* corpus) {
  PerType(corpus, "LinearAttention", "", 27, kHalfToo, [](DataType t, int s) {
    const int64_t steps = std::vector<int64_t>{4, 32, 512}[s], heads = 8, d = 64;
    const Shape qkv({1, steps, heads * d}), gate({1, steps, heads});
    return CorpusSize{"", steps * heads * d * d * 4, ShapeText({qkv, qkv, qkv, gate, gate}), [=](KernelRunner& r) {
                        r.Input(Typed(t, qkv, -0.1f, 0.1f, 1)).Input(Typed(t, qkv, -0.1f, 0.1f, 2));
                        r.Input(Typed(t, qkv, -1, 1, 3)).MissingInput();
                        r.Input(Typed(t, gate, 0.9f, 1.0f, 4)).Input(Typed(t, gate, 0, 1, 5));
                        r.Attr("q_num_heads", heads).Attr("kv_num_heads", heads).Outputs(2);
                      }};
  });
}

// Runs a subgraph's nodes in order, each through its own KernelRunner, serially: enough for
// a modifier of a few elementwise nodes, and the same in every policy of a cell, so that a
// cell compares the outer kernel's own split.
class NodeByNodeRunner : public SubgraphRunner {
 public:
  StatusOr<std::vector<Value>> Run(const Graph& graph, const std::vector<Value>& inputs) override {
    std::map<std::string, Value> values;
    for (const auto& [name, tensor] : graph.initializers) values[name] = Value(tensor);
    for (size_t i = 0; i < graph.inputs.size() && i < inputs.size(); ++i) values[graph.inputs[i].name] = inputs[i];
    for (const Node& node : graph.nodes) {
      OL_ASSIGN_OR_RETURN(int opset, graph.OpsetFor(node.domain));
      KernelRunner runner(node.op, opset, node.domain);
      for (const std::string& name : node.inputs) {
        auto it = values.find(name);
        if (it == values.end()) return InvalidArgument("NodeByNodeRunner: no value ", name);
        runner.InputValue(it->second);
      }
      for (const auto& [name, attribute] : node.attributes) runner.Attr(attribute);
      runner.Outputs(static_cast<int>(node.outputs.size()));
      OL_ASSIGN_OR_RETURN(KernelRunResult result, runner.Run(1));
      for (size_t o = 0; o < node.outputs.size(); ++o) values[node.outputs[o]] = result.outputs.at(o);
    }
    std::vector<Value> outputs;
    for (const ValueInfo& output : graph.outputs) outputs.push_back(values.at(output.name));
    return outputs;
  }
};

// Gemma 2's logit soft-capping as a score_mod: cap * tanh(s / cap), cap = 30 (three nodes).
std::shared_ptr<const Graph> SoftCap() {
  auto g = std::make_shared<Graph>();
  g->name = "soft_cap";
  g->opset_imports[""] = 21;
  g->initializers["cap"] = Values<float>(DataType::kFloat, {30.0f}, true);
  g->inputs.push_back(ValueInfo{"s", {}});
  g->outputs.push_back(ValueInfo{"y", {}});
  g->nodes.push_back(Node{"Div", "", "capped", {"s", "cap"}, {"d"}, {}});
  g->nodes.push_back(Node{"Tanh", "", "tanh", {"d"}, {"t"}, {}});
  g->nodes.push_back(Node{"Mul", "", "scaled", {"t", "cap"}, {"y"}, {}});
  return g;
}

// FlexAttention with a score_mod (soft-capping): the modifier path, which runs the engine
// split (scores, then PV) around the modifier and its own parallel row softmax. Without a
// modifier FlexAttention is one run of the attention engine, the Attention case's code at
// the same shapes, so the case measures the path that is FlexAttention's own. Work units as
// the Attention case (the engine's multiply-adds); the modifier runs serially in every arm.
void FlexAttention(std::vector<CorpusCase>* corpus) {
  PerType(corpus, "FlexAttention", "ai.onnx.preview", 1, kHalfToo, [](DataType t, int s) {
    const int64_t L = std::vector<int64_t>{16, 128, 512}[s];
    const Shape qkv({1, 12, L, 64});
    const std::string shapes = ShapeText({qkv, qkv, qkv}) + " score_mod=soft_cap";
    return CorpusSize{"", 12 * L * L * 64 * 2, shapes, [=](KernelRunner& r) {
                        static NodeByNodeRunner subgraphs;  // stateless: shared by every cell
                        for (uint32_t i = 1; i <= 3; ++i) r.Input(Typed(t, qkv, -1, 1, i));
                        Attribute mod;
                        mod.name = "score_mod";
                        mod.type = Attribute::Type::kGraph;
                        mod.g = SoftCap();
                        r.Attr(mod).Subgraphs(&subgraphs);
                      }};
  });
}

}  // namespace

void AddModelCases(std::vector<CorpusCase>* corpus) {
  Svms(corpus);
  LegacyTrees(corpus);
  MapEncoders(corpus);
  LinearAttention(corpus);
  FlexAttention(corpus);
}

}  // namespace baseline
}  // namespace onnx_light
