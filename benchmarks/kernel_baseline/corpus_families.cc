// Corpus cases of the families added after the first session (image ops, einsum, loss,
// LRN, one-hot, quantized matmul, resize, recurrent, tree ensemble, ML encoders, optimizers, nms). Each
// size's work_units is what the family's parallel.minimum_* parameter counts, as its
// ParamSpec meaning states, so crossovers compare with the schema default.
#include "benchmarks/kernel_baseline/corpus_inputs.h"

namespace onnx_light {
namespace baseline {
namespace {

// A case whose size s (0 = small .. 2 = large) is made by size(s); the label is filled in.
CorpusCase Sized(const std::string& op, const std::string& domain, int opset, const std::string& element_type,
                 const std::function<CorpusSize(int)>& size) {
  CorpusCase c{op, domain, opset, element_type, {}};
  for (int s = 0; s < 3; ++s) {
    c.sizes.push_back(size(s));
    c.sizes.back().label = kLabels[s];
  }
  return c;
}

Tensor FloatScalar(float v) { return Values<float>(DataType::kFloat, {v}, true); }
Tensor Uint8Scalar(uint8_t v) { return Values<uint8_t>(DataType::kUint8, {v}, true); }

// n uint8 mask bytes re-encoded as bool (output elements). Casts between types that
// store bits alike alias the input and do no work, so the case takes a re-encoding one.
CorpusCase BitCast() {
  return Sized("BitCast", "", 26, "uint8", [](int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(RandomInts<uint8_t>(DataType::kUint8, Shape({n}), 0, 3, 1)).Attr("to", int64_t{9});
                      }};
  });
}

// A [3, 1.5S, S/2] image cropped in height and padded in width to [3, S, S] (output elements).
CorpusCase CenterCropPad() {
  return Sized("CenterCropPad", "", 18, "float", [](int s) {
    const int64_t side = std::vector<int64_t>{16, 128, 1536}[s];
    const Shape x({3, side * 3 / 2, side / 2});
    return CorpusSize{"", 3 * side * side, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(x, 0, 1, 1)).Input(Int64s({side, side}));
                        r.Attr("axes", std::vector<int64_t>{1, 2});
                      }};
  });
}

// The 3x3, pad-1 columns of a 16-channel h x h image folded back (output elements).
CorpusCase Col2Im() {
  return Sized("Col2Im", "", 18, "float", [](int s) {
    const int64_t h = std::vector<int64_t>{8, 32, 64}[s];
    const Shape columns({1, 16 * 9, h * h});
    return CorpusSize{"", 16 * h * h, ShapeText({columns}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(columns, -1, 1, 1)).Input(Int64s({h, h})).Input(Int64s({3, 3}));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
}

// A batched matrix product bij,bjk->bik (output elements x contraction x inputs).
CorpusCase Einsum() {
  return Sized("Einsum", "", 12, "float", [](int s) {
    const int64_t d = std::vector<int64_t>{8, 32, 64}[s], batch = 8;
    const Shape m({batch, d, d});
    return CorpusSize{"", batch * d * d * d * 2, ShapeText({m, m}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(m, -1, 1, 1)).Input(RandomFloats(m, -1, 1, 2));
                        r.Attr("equation", std::string("bij,bjk->bik"));
                      }};
  });
}

// Bilinear sampling of a 16-channel h x h map at h x h random points (output elements).
CorpusCase GridSample() {
  return Sized("GridSample", "", 22, "float", [](int s) {
    const int64_t h = std::vector<int64_t>{8, 32, 128}[s];
    const Shape x({1, 16, h, h}), grid({1, h, h, 2});
    return CorpusSize{"", 16 * h * h, ShapeText({x, grid}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(x, -1, 1, 1)).Input(RandomFloats(grid, -1, 1, 2));
                        r.Attr("mode", std::string("linear"));
                      }};
  });
}

// Mean cross-entropy of N rows over 1000 classes (input elements).
CorpusCase SoftmaxCrossEntropyLoss() {
  return Sized("SoftmaxCrossEntropyLoss", "", 13, "float", [](int s) {
    const int64_t n = std::vector<int64_t>{4, 64, 1024}[s], classes = 1000;
    const Shape scores({n, classes});
    return CorpusSize{"", n * classes, ShapeText({scores, Shape({n})}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(scores, -4, 4, 1));
                        r.Input(RandomInts<int64_t>(DataType::kInt64, Shape({n}), 0, classes - 1, 2));
                      }};
  });
}

// Cross-channel normalisation over 5 channels of a 64-channel map (output elements x size).
CorpusCase Lrn() {
  return Sized("LRN", "", 13, "float", [](int s) {
    const int64_t h = std::vector<int64_t>{8, 32, 64}[s], size = 5;
    const Shape x({1, 64, h, h});
    return CorpusSize{"", 64 * h * h * size, ShapeText({x}),
                      [=](KernelRunner& r) { r.Input(RandomFloats(x, -1, 1, 1)).Attr("size", size); }};
  });
}

// N class ids expanded to N x 1000 floats (output elements).
CorpusCase OneHot() {
  return Sized("OneHot", "", 11, "int64", [](int s) {
    const int64_t n = std::vector<int64_t>{1, 64, 1024}[s], depth = 1000;
    return CorpusSize{"", n * depth, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(RandomInts<int64_t>(DataType::kInt64, Shape({n}), 0, depth - 1, 1));
                        r.Input(Values<int64_t>(DataType::kInt64, {depth}, true));
                        r.Input(Values<float>(DataType::kFloat, {0.0f, 1.0f}));
                      }};
  });
}

// T steps x 16 sequences of 256 features, each reversed over a random length (output elements).
CorpusCase ReverseSequence() {
  return Sized("ReverseSequence", "", 10, "float", [](int s) {
    const int64_t steps = std::vector<int64_t>{1, 64, 1024}[s], batch = 16;
    const Shape x({steps, batch, 256});
    return CorpusSize{"", steps * batch * 256, ShapeText({x, Shape({batch})}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(x, -1, 1, 1));
                        r.Input(RandomInts<int64_t>(DataType::kInt64, Shape({batch}), (steps + 1) / 2, steps, 2));
                      }};
  });
}

// A forward GRU, input and hidden 64, 32 steps, batch 8, 32 and 128 (the row split). Work
// units: what parallel.minimum_multiply_adds counts, one step's recurrent multiply-adds
// (batch x 3 hidden x hidden; a step opens its own region).
CorpusCase Gru() {
  return Sized("GRU", "", 22, "float", [](int s) {
    const int64_t steps = 32, batch = std::vector<int64_t>{8, 32, 128}[s], input = 64, hidden = 64;
    const Shape x({steps, batch, input}), w({1, 3 * hidden, input}), rec({1, 3 * hidden, hidden});
    return CorpusSize{"", batch * 3 * hidden * hidden, ShapeText({x, w, rec}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(x, -1, 1, 1));
                        r.Input(RandomFloats(w, -0.2f, 0.2f, 2)).Input(RandomFloats(rec, -0.2f, 0.2f, 3));
                        r.Attr("hidden_size", hidden);
                      }};
  });
}

// A d x d x d uint8 product requantized to uint8 (GEMM work units of 64^3 multiply-adds).
CorpusCase QLinearMatMul() {
  return Sized("QLinearMatMul", "", 21, "uint8", [](int s) {
    const int64_t d = std::vector<int64_t>{64, 128, 256}[s];
    const Shape m({d, d});
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({m, m}), [=](KernelRunner& r) {
                        r.Input(RandomInts<uint8_t>(DataType::kUint8, m, 0, 255, 1));
                        r.Input(FloatScalar(0.02f)).Input(Uint8Scalar(128));
                        r.Input(RandomInts<uint8_t>(DataType::kUint8, m, 0, 255, 2));
                        r.Input(FloatScalar(0.02f)).Input(Uint8Scalar(128));
                        r.Input(FloatScalar(0.5f)).Input(Uint8Scalar(128));
                      }};
  });
}

// Linear 2x upsampling of a 3-channel h x h image (output elements x taps; the kernel
// counts 2 linear taps on every axis, so 16 for rank 4).
CorpusCase Resize() {
  return Sized("Resize", "", 19, "float", [](int s) {
    const int64_t h = std::vector<int64_t>{16, 64, 128}[s];
    const Shape x({1, 3, h, h});
    return CorpusSize{"", 3 * (2 * h) * (2 * h) * 16, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(x, 0, 1, 1)).MissingInput();
                        r.Input(Values<float>(DataType::kFloat, {1, 1, 2, 2}));
                        r.Attr("mode", std::string("linear"));
                      }};
  });
}

// Attributes of `trees` complete binary trees of `depth` levels over `features` features.
void AddTrees(KernelRunner& r, int64_t trees, int depth, int64_t features) {
  const int64_t internal = (int64_t{1} << depth) - 1, leaves = internal + 1;
  std::vector<int64_t> feature_ids, true_ids, false_ids, true_leafs, false_leafs, roots;
  std::mt19937 rng(5);
  for (int64_t t = 0; t < trees; ++t) {
    roots.push_back(t * internal);
    for (int64_t i = 0; i < internal; ++i) {  // heap order: children of i are 2i+1, 2i+2
      feature_ids.push_back(static_cast<int64_t>(rng() % features));
      const int64_t left = 2 * i + 1, right = 2 * i + 2;
      const bool leaf = left >= internal;
      true_leafs.push_back(leaf);
      false_leafs.push_back(leaf);
      true_ids.push_back(leaf ? t * leaves + left - internal : t * internal + left);
      false_ids.push_back(leaf ? t * leaves + right - internal : t * internal + right);
    }
  }
  const int64_t nodes = trees * internal;
  r.Attr("nodes_featureids", feature_ids).Attr("nodes_truenodeids", true_ids).Attr("nodes_falsenodeids", false_ids);
  r.Attr("nodes_trueleafs", true_leafs).Attr("nodes_falseleafs", false_leafs).Attr("tree_roots", roots);
  r.Attr("nodes_splits", RandomFloats(Shape({nodes}), -1, 1, 6));
  r.Attr("nodes_modes", Values<uint8_t>(DataType::kUint8, std::vector<uint8_t>(nodes, 0)));  // BRANCH_LEQ
  r.Attr("leaf_targetids", std::vector<int64_t>(trees * leaves, 0));
  r.Attr("leaf_weights", RandomFloats(Shape({trees * leaves}), -1, 1, 8));
  r.Attr("n_targets", int64_t{1}).Attr("aggregate_function", int64_t{1});  // SUM
}

// A 64-tree, depth-6 regression ensemble over rows of 16 features (tree walks: rows x
// trees), float and float16 rows (the thresholds and weights stay float tensors, as the
// converters write them; the kernel walks float16 rows as floats).
void TreeEnsembles(std::vector<CorpusCase>* corpus) {
  PerType(corpus, "TreeEnsemble", "ai.onnx.ml", 5, {DataType::kFloat, DataType::kFloat16}, [](DataType t, int s) {
    const int64_t rows = std::vector<int64_t>{8, 128, 2048}[s], trees = 64, features = 16;
    const Shape x({rows, features});
    return CorpusSize{"", rows * trees, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(t == DataType::kFloat ? RandomFloats(x, -1, 1, 1) : Typed(t, x, -1, 1, 1));
                        AddTrees(r, trees, 6, features);
                      }};
  });
}

// N rows of 8 int64 category codes one-hot encoded over 16 categories (ai.onnx.ml
// OneHotEncoder, family ml_encoders; output elements).
CorpusCase OneHotEncoder() {
  return Sized("OneHotEncoder", "ai.onnx.ml", 1, "int64", [](int s) {
    const int64_t rows = std::vector<int64_t>{4, 64, 1024}[s], cols = 8, categories = 16;
    const Shape x({rows, cols});
    return CorpusSize{"", rows * cols * categories, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(RandomInts<int64_t>(DataType::kInt64, x, 0, categories - 1, 1));
                        std::vector<int64_t> cats(categories);
                        for (int64_t i = 0; i < categories; ++i) cats[i] = i;
                        r.Attr("cats_int64s", cats);
                      }};
  });
}

// One Adam step of an n-element parameter (parameter elements).
CorpusCase Adam() {
  return Sized("Adam", "ai.onnx.preview.training", 1, "float", [](int s) {
    const int64_t n = std::vector<int64_t>{1 << 10, 1 << 16, 1 << 20}[s];
    const Shape p({n});
    return CorpusSize{"", n, ShapeText({p, p, p, p}), [=](KernelRunner& r) {
                        r.Input(FloatScalar(0.01f)).Input(Values<int64_t>(DataType::kInt64, {3}, true));
                        r.Input(RandomFloats(p, -1, 1, 1)).Input(RandomFloats(p, -0.1f, 0.1f, 2));
                        r.Input(RandomFloats(p, -0.1f, 0.1f, 3)).Input(RandomFloats(p, 0, 0.01f, 4));
                        r.Outputs(3);
                      }};
  });
}

// com.microsoft QLinearAdd of two uint8 vectors with their own scales (output elements).
CorpusCase QLinearAdd() {
  return Sized("QLinearAdd", "com.microsoft", 1, "uint8", [](int s) {
    const int64_t n = kElementSizes[s];
    const Shape x({n});
    return CorpusSize{"", n, ShapeText({x, x}), [=](KernelRunner& r) {
                        r.Input(RandomInts<uint8_t>(DataType::kUint8, x, 0, 255, 1));
                        r.Input(FloatScalar(0.02f)).Input(Uint8Scalar(128));
                        r.Input(RandomInts<uint8_t>(DataType::kUint8, x, 0, 255, 2));
                        r.Input(FloatScalar(0.03f)).Input(Uint8Scalar(100));
                        r.Input(FloatScalar(0.05f)).Input(Uint8Scalar(128));
                      }};
  });
}

// NonMaxSuppression over `boxes` random boxes scored for `classes` classes (candidate
// boxes: (batch, class) pairs x boxes), up to 100 kept per class at IoU 0.5.
CorpusCase NonMaxSuppression() {
  return Sized("NonMaxSuppression", "", 11, "float", [](int s) {
    const int64_t classes = std::vector<int64_t>{3, 8, 16}[s], boxes = std::vector<int64_t>{100, 1000, 2000}[s];
    const Shape b({1, boxes, 4}), sc({1, classes, boxes});
    return CorpusSize{"", classes * boxes, ShapeText({b, sc}), [=](KernelRunner& r) {
                        r.Input(RandomFloats(b, 0, 1, 1)).Input(RandomFloats(sc, 0, 1, 2));
                        r.Input(Int64s({100})).Input(Values<float>(DataType::kFloat, {0.5f}));
                        r.Input(Values<float>(DataType::kFloat, {0.05f}));
                      }};
  });
}

}  // namespace

void AddFamilyCases(std::vector<CorpusCase>* corpus) {
  for (auto make : {BitCast, CenterCropPad, Col2Im, Einsum, GridSample, SoftmaxCrossEntropyLoss, Lrn, OneHot,
                    ReverseSequence, Gru, QLinearMatMul, QLinearAdd, Resize, OneHotEncoder, Adam, NonMaxSuppression}) {
    corpus->push_back(make());
  }
  TreeEnsembles(corpus);
}

}  // namespace baseline
}  // namespace onnx_light
