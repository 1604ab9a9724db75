// Corpus cases per op (not per family): every op with a parallel path that corpus.cc and
// corpus_families.cc do not already measure, at small, crossover and large sizes, for the
// element types users run (float; float16 where the op has it; int8/uint8 for the
// quantized ops). //tools:kernel_baseline_test fails when an op with a parallel path has
// no case and is not listed there with a reason. Work units: what the family's
// parallel.minimum_* counts (output elements for the elementwise and data-movement ops).
#include <algorithm>
#include <cmath>

#include "benchmarks/kernel_baseline/corpus_inputs.h"

namespace onnx_light {
namespace baseline {
namespace {

constexpr int kLatest = 24;  // ai.onnx opset of the cases (each op's newest version up to it)


const std::vector<DataType> kFloat16Too = {DataType::kFloat, DataType::kFloat16};
const std::vector<DataType> kFloatOnly = {DataType::kFloat};
const std::vector<DataType> kQuantized = {DataType::kUint8, DataType::kInt8};
// Data movement that quantized (QDQ) graphs run on int8/uint8 tensors too.
const std::vector<DataType> kMovement = {DataType::kFloat, DataType::kFloat16, DataType::kUint8, DataType::kInt8};
const std::vector<DataType> kMovementNoFloat = {DataType::kFloat16, DataType::kUint8, DataType::kInt8};

// n elements per input, `inputs` inputs, values in [lo, hi].
void Elementwise(std::vector<CorpusCase>* corpus, const std::string& op, int opset, int inputs,
                 std::vector<DataType> types, float lo, float hi,
                 std::function<void(KernelRunner&)> extra = nullptr) {
  PerType(corpus, op, "", opset, std::move(types), [=](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    std::vector<Shape> shapes(inputs, Shape({n}));
    return CorpusSize{"", n, ShapeText(shapes), [=](KernelRunner& r) {
                        for (int i = 0; i < inputs; ++i) r.Input(Typed(t, Shape({n}), lo, hi, 7 + i));
                        if (extra) extra(r);
                      }};
  });
}

// Rows x 1024 (4, 256, 4096 rows), reduced or normalised over the last axis (elements).
void RowWise(std::vector<CorpusCase>* corpus, const std::string& op, int opset, std::vector<DataType> types,
             std::function<void(KernelRunner&, DataType, int64_t, int64_t)> extra) {
  PerType(corpus, op, "", opset, std::move(types), [=](DataType t, int s) {
    const int64_t rows = std::vector<int64_t>{4, 256, 4096}[s], cols = 1024;
    return CorpusSize{"", rows * cols, ShapeText({Shape({rows, cols})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({rows, cols}), -2, 2, 11));
                        if (extra) extra(r, t, rows, cols);
                      }};
  });
}

// An NCHW image of 32 channels, h x h (8, 56, 112): elements of the input.
void Image(std::vector<CorpusCase>* corpus, const std::string& op, const std::string& domain, int opset,
           std::vector<DataType> types, std::function<void(KernelRunner&, DataType, int64_t)> setup,
           int64_t work_factor_num = 1, int64_t work_factor_den = 1) {
  PerType(corpus, op, domain, opset, std::move(types), [=](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 56, 112}[s];
    const Shape x({1, 32, h, h});
    return CorpusSize{"", 32 * h * h * work_factor_num / work_factor_den, ShapeText({x}),
                      [=](KernelRunner& r) { setup(r, t, h); }};
  });
}

Tensor Scalar(DataType t, float v) { return Typed(t, Shape(), v, v, 1); }
Tensor FloatScalar(float v) { return Values<float>(DataType::kFloat, {v}, true); }
Tensor ZeroPoint(DataType t, int v) {
  return t == DataType::kUint8 ? Values<uint8_t>(t, {static_cast<uint8_t>(v)}, true)
                               : Values<int8_t>(t, {static_cast<int8_t>(v - 128)}, true);
}
// Quantized values of type t (uint8: 0..255, int8: -128..127).
Tensor Quantized(DataType t, Shape shape, uint32_t seed) {
  return t == DataType::kUint8 ? RandomInts<uint8_t>(t, shape, 0, 255, seed) : RandomInts<int8_t>(t, shape, -128, 127, seed);
}

void Unary(std::vector<CorpusCase>* corpus) {
  struct U {  // every one has float and float16
    const char* op;
    float lo, hi;
  };
  const U ops[] = {
      {"Abs", -4, 4},       {"Acos", -0.9f, 0.9f}, {"Acosh", 1.1f, 8},   {"Asin", -0.9f, 0.9f},
      {"Asinh", -4, 4},     {"Atan", -4, 4},       {"Atanh", -0.9f, 0.9f}, {"Ceil", -4, 4},
      {"Celu", -4, 4},      {"Clip", -4, 4},       {"Cos", -4, 4},       {"Cosh", -4, 4},
      {"Elu", -4, 4},       {"Erf", -4, 4},        {"Exp", -4, 4},       {"Floor", -4, 4},
      {"Gelu", -4, 4},      {"HardSigmoid", -4, 4}, {"HardSwish", -4, 4}, {"IsInf", -4, 4},
      {"IsNaN", -4, 4},     {"LeakyRelu", -4, 4},  {"Log", 0.1f, 8},     {"Mish", -4, 4},
      {"Neg", -4, 4},       {"Reciprocal", 0.5f, 4}, {"Relu", -4, 4},    {"Round", -4, 4},
      {"Selu", -4, 4},      {"Shrink", -4, 4},     {"Sign", -4, 4},      {"Sin", -4, 4},
      {"Sinh", -4, 4},      {"Softplus", -4, 4},   {"Softsign", -4, 4},  {"Sqrt", 0.1f, 8},
      {"Swish", -4, 4},     {"Tan", -1, 1},        {"Tanh", -4, 4},      {"ThresholdedRelu", -4, 4},
  };
  for (const U& u : ops) {
    // Celu has float16 from opset 28 on.
    const int opset = std::string(u.op) == "Celu" ? 28 : kLatest;
    Elementwise(corpus, u.op, opset, 1, kFloat16Too, u.lo, u.hi);
  }
  Elementwise(corpus, "Sigmoid", 13, 1, {DataType::kFloat16}, -4, 4);  // float: corpus.cc
  Elementwise(corpus, "BitwiseNot", 18, 1, {DataType::kInt32}, -1000, 1000);
  Elementwise(corpus, "Not", 1, 1, {DataType::kBool}, 0, 1);
  for (const char* op : {"FastGelu", "Gelu"}) {
    PerType(corpus, op, "com.microsoft", 1, kFloatOnly, [=](DataType t, int s) {
      const int64_t n = kElementSizes[s];
      return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) { r.Input(Typed(t, Shape({n}), -4, 4, 1)); }};
    });
  }
}

void Binary(std::vector<CorpusCase>* corpus) {
  for (const char* op : {"Sub", "Mul", "Div", "Max", "Min", "Mean", "Sum"}) {
    Elementwise(corpus, op, kLatest, 2, kFloat16Too, 0.5f, 2);
  }
  Elementwise(corpus, "Add", 14, 2, {DataType::kFloat16, DataType::kUint8}, 0, 100);  // float: corpus.cc
  Elementwise(corpus, "Pow", kLatest, 2, kFloat16Too, 0.5f, 2);
  Elementwise(corpus, "Mod", kLatest, 2, {DataType::kInt32}, 1, 1000);
  Elementwise(corpus, "PRelu", kLatest, 2, kFloat16Too, -2, 2);
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "LessOrEqual"}) {
    Elementwise(corpus, op, kLatest, 2, kFloat16Too, -1, 1);
  }
  Elementwise(corpus, "Less", 13, 2, {DataType::kFloat16}, -1, 1);  // float: corpus.cc
  for (const char* op : {"And", "Or", "Xor"}) Elementwise(corpus, op, kLatest, 2, {DataType::kBool}, 0, 1);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    Elementwise(corpus, op, kLatest, 2, {DataType::kInt32}, -1000, 1000);
  }
  Elementwise(corpus, "BitShift", kLatest, 2, {DataType::kUint32}, 0, 7,
              [](KernelRunner& r) { r.Attr("direction", std::string("LEFT")); });
}

void Reductions(std::vector<CorpusCase>* corpus) {
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    RowWise(corpus, op, 18, kFloat16Too, [](KernelRunner& r, DataType, int64_t, int64_t) { r.Input(Int64s({1})); });
  }
  RowWise(corpus, "ReduceSum", 13, {DataType::kFloat16},
          [](KernelRunner& r, DataType, int64_t, int64_t) { r.Input(Int64s({1})); });
  for (const char* op : {"ArgMax", "ArgMin"}) {
    RowWise(corpus, op, 13, kFloat16Too, [](KernelRunner& r, DataType, int64_t, int64_t) { r.Attr("axis", int64_t{1}); });
  }
  for (const char* op : {"LogSoftmax", "Hardmax"}) RowWise(corpus, op, 13, kFloat16Too, nullptr);
  RowWise(corpus, "Softmax", 13, {DataType::kFloat16}, nullptr);
  for (const char* op : {"CumSum", "CumProd"}) {
    RowWise(corpus, op, op == std::string("CumSum") ? 14 : 26, kFloat16Too,
            [](KernelRunner& r, DataType, int64_t, int64_t) { r.Input(Values<int64_t>(DataType::kInt64, {1}, true)); });
  }
  RowWise(corpus, "TopK", 11, {DataType::kFloat16},
          [](KernelRunner& r, DataType, int64_t, int64_t) { r.Input(Int64s({8})).Outputs(2); });
}

void Normalizations(std::vector<CorpusCase>* corpus) {
  RowWise(corpus, "LayerNormalization", 17, {DataType::kFloat16}, [](KernelRunner& r, DataType t, int64_t, int64_t c) {
    r.Input(Typed(t, Shape({c}), 0.5f, 1.5f, 5)).Input(Typed(t, Shape({c}), -0.5f, 0.5f, 6));
  });
  RowWise(corpus, "RMSNormalization", 23, kFloat16Too,
          [](KernelRunner& r, DataType t, int64_t, int64_t c) { r.Input(Typed(t, Shape({c}), 0.5f, 1.5f, 5)); });
  RowWise(corpus, "LpNormalization", 22, kFloat16Too,
          [](KernelRunner& r, DataType, int64_t, int64_t) { r.Attr("axis", int64_t{-1}); });
  const auto channels = [](KernelRunner& r, DataType t, int n, float lo, float hi) {
    for (int i = 0; i < n; ++i) r.Input(Typed(t, Shape({32}), lo, hi, 20 + i));
  };
  Image(corpus, "BatchNormalization", "", 15, kFloat16Too, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -2, 2, 1));
    channels(r, t, 3, -1, 1);                      // scale, B, mean
    r.Input(Typed(t, Shape({32}), 0.5f, 2, 30));  // var
  });
  Image(corpus, "InstanceNormalization", "", 22, kFloat16Too, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -2, 2, 1));
    channels(r, t, 2, -1, 1);
  });
  Image(corpus, "GroupNormalization", "", 21, kFloat16Too, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -2, 2, 1));
    channels(r, t, 2, -1, 1);
    r.Attr("num_groups", int64_t{8});
  });
  Image(corpus, "MeanVarianceNormalization", "", 13, kFloat16Too,
        [](KernelRunner& r, DataType t, int64_t h) { r.Input(Typed(t, Shape({1, 32, h, h}), -2, 2, 1)); });
  Image(corpus, "LRN", "", 13, {DataType::kFloat16}, [](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1)).Attr("size", int64_t{5});
  }, 5);
}

void Pools(std::vector<CorpusCase>* corpus) {
  const auto window = [](KernelRunner& r) {
    r.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("strides", std::vector<int64_t>{2, 2});
    r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  };
  Image(corpus, "AveragePool", "", 22, kFloat16Too, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1));
    window(r);
  }, 1, 4);
  Image(corpus, "LpPool", "", 22, kFloat16Too, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1));
    window(r);
  }, 1, 4);
  Image(corpus, "MaxPool", "", 12, {DataType::kFloat16, DataType::kUint8, DataType::kInt8},
        [=](KernelRunner& r, DataType t, int64_t h) {
          r.Input(t == DataType::kFloat16 ? Typed(t, Shape({1, 32, h, h}), -1, 1, 1) : Quantized(t, Shape({1, 32, h, h}), 1));
          window(r);
        }, 1, 4);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    Image(corpus, op, "", 22, kFloat16Too,
          [](KernelRunner& r, DataType t, int64_t h) { r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1)); });
  }
  // 64 regions of interest pooled to 7 x 7 over a 32-channel map (output elements).
  const auto rois = [](int64_t h, bool with_batch) {
    std::vector<float> v;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(0, static_cast<float>(h - 1));
    for (int i = 0; i < 64; ++i) {
      float a = d(rng), b = d(rng), c = d(rng), e = d(rng);
      if (with_batch) v.push_back(0);
      v.push_back(std::min(a, c));
      v.push_back(std::min(b, e));
      v.push_back(std::max(a, c));
      v.push_back(std::max(b, e));
    }
    return v;
  };
  PerType(corpus, "RoiAlign", "", 22, kFloat16Too, [=](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 56, 112}[s], n = std::vector<int64_t>{1, 16, 64}[s];
    return CorpusSize{"", n * 32 * 49, ShapeText({Shape({1, 32, h, h}), Shape({n, 4})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1));
                        std::vector<float> box = rois(h, false);
                        box.resize(n * 4);
                        auto boxes = Tensor::Allocate(t, Shape({n, 4}), Allocator::Default());
                        for (int64_t i = 0; i < n * 4; ++i) {
                          if (t == DataType::kFloat) boxes->data<float>()[i] = box[i];
                          else boxes->data<Float16>()[i] = Float16::FromFloat(box[i]);
                        }
                        r.Input(*boxes).Input(Int64s(std::vector<int64_t>(n, 0)));
                        r.Attr("output_height", int64_t{7}).Attr("output_width", int64_t{7});
                      }};
  });
  PerType(corpus, "MaxRoiPool", "", 22, kFloat16Too, [=](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 56, 112}[s], n = std::vector<int64_t>{1, 16, 64}[s];
    return CorpusSize{"", n * 32 * 49, ShapeText({Shape({1, 32, h, h}), Shape({n, 5})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1));
                        std::vector<float> box = rois(h, true);
                        box.resize(n * 5);
                        auto boxes = Tensor::Allocate(t, Shape({n, 5}), Allocator::Default());
                        for (int64_t i = 0; i < n * 5; ++i) {
                          if (t == DataType::kFloat) boxes->data<float>()[i] = box[i];
                          else boxes->data<Float16>()[i] = Float16::FromFloat(box[i]);
                        }
                        r.Input(*boxes).Attr("pooled_shape", std::vector<int64_t>{7, 7});
                      }};
  });
}

// Data movement over rows x 256 (4, 256, 16384 rows): output elements.
void Movement(std::vector<CorpusCase>* corpus) {
  const auto rows_of = [](int s) { return kElementSizes[s] / 256; };
  const auto rows_case = [&](const std::string& op, int opset, std::vector<DataType> types, int64_t out_num,
                             int64_t out_den, std::function<void(KernelRunner&, DataType, int64_t)> setup) {
    PerType(corpus, op, "", opset, std::move(types), [=](DataType t, int s) {
      const int64_t rows = rows_of(s);
      return CorpusSize{"", rows * 256 * out_num / out_den, ShapeText({Shape({rows, 256})}),
                        [=](KernelRunner& r) { setup(r, t, rows); }};
    });
  };
  const auto x = [](DataType t, int64_t rows) { return Typed(t, Shape({rows, 256}), -1, 1, 1); };
  rows_case("Split", 18, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(Int64s({128, 128})).Attr("axis", int64_t{1}).Outputs(2);
  });
  rows_case("Slice", 13, kMovement, 1, 2, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(Int64s({64})).Input(Int64s({192})).Input(Int64s({1}));
  });
  rows_case("Tile", 13, kMovement, 2, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(Int64s({1, 2}));
  });
  rows_case("Concat", 13, kMovementNoFloat, 2, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(x(t, rows)).Attr("axis", int64_t{0});
  });
  rows_case("Transpose", 13, kMovementNoFloat, 1, 1,
            [=](KernelRunner& r, DataType t, int64_t rows) { r.Input(x(t, rows)); });
  rows_case("GatherElements", 13, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(RandomInts<int64_t>(DataType::kInt64, Shape({rows, 256}), 0, 255, 2));
    r.Attr("axis", int64_t{1});
  });
  rows_case("GatherND", 13, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(RandomInts<int64_t>(DataType::kInt64, Shape({rows, 1}), 0, rows - 1, 2));
  });
  rows_case("Gather", 13, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    std::vector<int64_t> idx(rows);
    for (int64_t i = 0; i < rows; ++i) idx[i] = (i * 7919) % rows;
    r.Input(x(t, rows)).Input(Int64s(idx));
  });
  rows_case("ScatterElements", 18, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    std::vector<int64_t> idx(rows * 256);
    for (int64_t i = 0; i < rows * 256; ++i) idx[i] = (i * 37) % 256;  // a permutation of each row
    auto indices = Tensor::Allocate(DataType::kInt64, Shape({rows, 256}), Allocator::Default());
    std::copy(idx.begin(), idx.end(), indices->data<int64_t>());
    r.Input(x(t, rows)).Input(*indices).Input(Typed(t, Shape({rows, 256}), -1, 1, 3)).Attr("axis", int64_t{1});
  });
  rows_case("Scatter", 10, kFloat16Too, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    auto indices = Tensor::Allocate(DataType::kInt64, Shape({rows, 256}), Allocator::Default());
    for (int64_t i = 0; i < rows * 256; ++i) indices->data<int64_t>()[i] = (i * 37) % 256;
    r.Input(x(t, rows)).Input(*indices).Input(Typed(t, Shape({rows, 256}), -1, 1, 3)).Attr("axis", int64_t{1});
  });
  rows_case("ScatterND", 18, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    std::vector<int64_t> idx(rows);
    for (int64_t i = 0; i < rows; ++i) idx[i] = (i * 7919) % rows;  // distinct rows
    auto indices = Tensor::Allocate(DataType::kInt64, Shape({rows, 1}), Allocator::Default());
    std::copy(idx.begin(), idx.end(), indices->data<int64_t>());
    r.Input(x(t, rows)).Input(*indices).Input(Typed(t, Shape({rows, 256}), -1, 1, 3));
  });
  rows_case("Expand", 13, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(Typed(t, Shape({1, 256}), -1, 1, 1)).Input(Int64s({rows, 256}));
  });
  rows_case("Pad", 18, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(x(t, rows)).Input(Int64s({0, 1, 0, 1}));
  });
  rows_case("Trilu", 14, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) { r.Input(x(t, rows)); });
  rows_case("Where", 16, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(Bools(Shape({rows, 256}), 3)).Input(x(t, rows)).Input(Typed(t, Shape({rows, 256}), -1, 1, 5));
  });
  rows_case("SpaceToDepth", 13, kMovement, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(Typed(t, Shape({1, 4, rows, 64}), -1, 1, 1)).Attr("blocksize", int64_t{2});
  });
  rows_case("DepthToSpace", 13, kMovementNoFloat, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) {
    r.Input(Typed(t, Shape({1, 4, rows, 64}), -1, 1, 1)).Attr("blocksize", int64_t{2});
  });
  rows_case("EyeLike", 22, kFloat16Too, 1, 1, [=](KernelRunner& r, DataType t, int64_t rows) { r.Input(x(t, rows)); });
  // Range has float16 from opset 27 on.
  PerType(corpus, "Range", "", 27, kFloat16Too, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, "[]x[]x[]", [=](KernelRunner& r) {
                        // A power-of-two step that keeps the limit within float16's range (exact).
                        const float step = std::min(0.25f, 32768.0f / static_cast<float>(n));
                        r.Input(Scalar(t, 0)).Input(Scalar(t, static_cast<float>(n) * step)).Input(Scalar(t, step));
                      }};
  });
  PerType(corpus, "CastLike", "", 21, kFloatOnly, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({n}), -100, 100, 1)).Input(Typed(DataType::kFloat16, Shape({1}), 0, 0, 2));
                      }};
  });
  PerType(corpus, "Cast", "", 21, {DataType::kFloat16}, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({n}), -100, 100, 1)).Attr("to", int64_t{1});  // float
                      }};
  });
  PerType(corpus, "ReverseSequence", "", 10, {DataType::kFloat16}, [](DataType t, int s) {
    const int64_t steps = std::vector<int64_t>{1, 64, 1024}[s], batch = 16;
    const Shape x({steps, batch, 256});
    return CorpusSize{"", steps * batch * 256, ShapeText({x, Shape({batch})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1));
                        r.Input(RandomInts<int64_t>(DataType::kInt64, Shape({batch}), (steps + 1) / 2, steps, 2));
                      }};
  });
}

// d x d x d products (64, 128, 512): GEMM work units (64^3 multiply-adds).
void Gemms(std::vector<CorpusCase>* corpus) {
  const int64_t dims[] = {64, 128, 512};
  PerType(corpus, "MatMul", "", 13, {DataType::kFloat16}, [=](DataType t, int s) {
    const int64_t d = dims[s];
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({d, d}), -1, 1, 1)).Input(Typed(t, Shape({d, d}), -1, 1, 2));
                      }};
  });
  struct G {
    const char* op;
    const char* domain;
    int opset;
    std::vector<DataType> types;
  };
  for (const G& g : {G{"Gemm", "", 13, kFloat16Too}, G{"FusedGemm", "com.microsoft", 1, kFloatOnly}}) {
    const std::string op = g.op;
    PerType(corpus, g.op, g.domain, g.opset, g.types, [=](DataType t, int s) {
      const int64_t d = dims[s];
      return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d}), Shape({d})}),
                        [=](KernelRunner& r) {
                          r.Input(Typed(t, Shape({d, d}), -1, 1, 1)).Input(Typed(t, Shape({d, d}), -1, 1, 2));
                          r.Input(Typed(t, Shape({d}), -1, 1, 3));
                          if (op == "FusedGemm") r.Attr("activation", std::string("Relu"));
                        }};
    });
  }
  // Quantized products: MatMulInteger and QLinearMatMul (ai.onnx), QGemm (com.microsoft).
  PerType(corpus, "MatMulInteger", "", 10, kQuantized, [=](DataType t, int s) {
    const int64_t d = dims[s];
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({d, d}), 1)).Input(Quantized(t, Shape({d, d}), 2));
                        r.Input(ZeroPoint(t, 128)).Input(ZeroPoint(t, 128));
                      }};
  });
  PerType(corpus, "QLinearMatMul", "", 21, {DataType::kInt8}, [=](DataType t, int s) {  // uint8: corpus_families.cc
    const int64_t d = dims[s];
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({d, d}), 1)).Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.Input(Quantized(t, Shape({d, d}), 2)).Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.Input(FloatScalar(0.5f)).Input(ZeroPoint(t, 128));
                      }};
  });
  PerType(corpus, "QGemm", "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
    const int64_t d = dims[s];
    return CorpusSize{"", d * d * d, ShapeText({Shape({d, d}), Shape({d, d})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({d, d}), 1)).Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.Input(Quantized(t, Shape({d, d}), 2)).Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.MissingInput().Input(FloatScalar(0.5f)).Input(ZeroPoint(t, 128));
                      }};
  });
  // ONNX Runtime's dynamic quantization: the product with a float epilogue (bias), and with A
  // quantized in the kernel (A float; the type is B's).
  PerType(corpus, "MatMulIntegerToFloat", "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
    const int64_t d = dims[s];
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d}), Shape({d})}),
                      [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({d, d}), 1)).Input(Quantized(t, Shape({d, d}), 2));
                        r.Input(FloatScalar(0.02f)).Input(FloatScalar(0.02f));
                        r.Input(ZeroPoint(t, 128)).Input(ZeroPoint(t, 128));
                        r.Input(Typed(DataType::kFloat, Shape({d}), -1, 1, 3));
                      }};
  });
  PerType(corpus, "DynamicQuantizeMatMul", "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
    const int64_t d = dims[s];
    return CorpusSize{"", GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d}), Shape({d})}),
                      [=](KernelRunner& r) {
                        r.Input(Typed(DataType::kFloat, Shape({d, d}), -1, 1, 1)).Input(Quantized(t, Shape({d, d}), 2));
                        r.Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.Input(Typed(DataType::kFloat, Shape({d}), -1, 1, 3));
                      }};
  });
}

// 3x3, pad-1 convolutions of 32 -> 32 channels over h x h (8, 28, 56): GEMM work units.
void Convs(std::vector<CorpusCase>* corpus) {
  const int64_t hw[] = {8, 28, 56};
  const auto units = [](int64_t h) { return GemmUnits(32 * 32 * 9 * h * h); };
  PerType(corpus, "Conv", "", 11, {DataType::kFloat16}, [=](DataType t, int s) {
    const int64_t h = hw[s];
    return CorpusSize{"", units(h), ShapeText({Shape({1, 32, h, h}), Shape({32, 32, 3, 3})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1)).Input(Typed(t, Shape({32, 32, 3, 3}), -0.1f, 0.1f, 2));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
  PerType(corpus, "ConvTranspose", "", 11, kFloat16Too, [=](DataType t, int s) {
    const int64_t h = hw[s];
    return CorpusSize{"", units(h), ShapeText({Shape({1, 32, h, h}), Shape({32, 32, 3, 3})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1)).Input(Typed(t, Shape({32, 32, 3, 3}), -0.1f, 0.1f, 2));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
  PerType(corpus, "FusedConv", "com.microsoft", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t h = hw[s];
    return CorpusSize{"", units(h), ShapeText({Shape({1, 32, h, h}), Shape({32, 32, 3, 3})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({1, 32, h, h}), -1, 1, 1)).Input(Typed(t, Shape({32, 32, 3, 3}), -0.1f, 0.1f, 2));
                        r.Input(Typed(t, Shape({32}), -0.1f, 0.1f, 3));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("activation", std::string("Relu"));
                      }};
  });
  // The squeeze-and-excitation block (ai.onnx_light): 64 channels reduced to 16, over the
  // element sizes (its parallel.minimum_elements counts X's elements).
  PerType(corpus, "SqueezeExcitation", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s], plane = n / 64;
    const Shape x({1, 64, plane}), w1({16, 64, 1}), w2({64, 16, 1});
    return CorpusSize{"", n, ShapeText({x, w1, w2}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Typed(t, w1, -0.2f, 0.2f, 2));
                        r.Input(Typed(t, Shape({16}), -0.1f, 0.1f, 3)).Input(Typed(t, w2, -0.2f, 0.2f, 4));
                        r.Input(Typed(t, Shape({64}), -0.1f, 0.1f, 5));
                        r.Attr("activation", std::string("Relu")).Attr("gate_activation", std::string("Sigmoid"));
                      }};
  });
  // The blocked-channel (NCHW16c) ops of native/kernels/nchwc (ai.onnx_light), as the
  // layout pass writes them: 32 channels are two blocks of 16, X [1, 2, h, h, 16].
  PerType(corpus, "NchwcConv", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t h = hw[s];
    const Shape x({1, 2, h, h, 16}), w({32, 32, 3, 3});
    return CorpusSize{"", units(h), ShapeText({x, w}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).ConstantInput(Typed(t, w, -0.1f, 0.1f, 2));
                        r.Input(Typed(t, Shape({32}), -0.1f, 0.1f, 3));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("activation", std::string("Relu"));
                      }};
  });
  PerType(corpus, "NchwcDepthwiseConv", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s], h = std::max<int64_t>(3, static_cast<int64_t>(std::sqrt(n / 64.0)));
    const Shape x({1, 4, h, h, 16}), w({64, 1, 3, 3});
    return CorpusSize{"", 9 * 64 * h * h, ShapeText({x, w}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).ConstantInput(Typed(t, w, -0.2f, 0.2f, 2));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("group", int64_t{64});
                        r.Attr("activation", std::string("Swish")).Attr("activation_params", std::vector<float>{1.0f});
                      }};
  });
  PerType(corpus, "NchwcSqueezeExcitation", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s], plane = std::max<int64_t>(1, n / 64);
    const Shape x({1, 4, plane, 1, 16}), w1({16, 64, 1, 1}), w2({64, 16, 1, 1});
    return CorpusSize{"", 64 * plane, ShapeText({x, w1, w2}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Typed(t, w1, -0.2f, 0.2f, 2));
                        r.Input(Typed(t, Shape({16}), -0.1f, 0.1f, 3)).Input(Typed(t, w2, -0.2f, 0.2f, 4));
                        r.Input(Typed(t, Shape({64}), -0.1f, 0.1f, 5));
                        r.Attr("activation", std::string("Relu")).Attr("gate_activation", std::string("Sigmoid"));
                      }};
  });
  PerType(corpus, "ReorderInput", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s], plane = std::max<int64_t>(1, n / 40);
    const Shape x({1, 40, plane, 1});
    return CorpusSize{"", 40 * plane, ShapeText({x}), [=](KernelRunner& r) { r.Input(Typed(t, x, -1, 1, 1)); }};
  });
  PerType(corpus, "ReorderOutput", "ai.onnx_light", 1, kFloatOnly, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s], plane = std::max<int64_t>(1, n / 48);
    const Shape x({1, 3, plane, 1, 16});
    return CorpusSize{"", 48 * plane, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Attr("channels", int64_t{40});
                      }};
  });
  PerType(corpus, "ConvInteger", "", 10, kQuantized, [=](DataType t, int s) {
    const int64_t h = hw[s];
    return CorpusSize{"", units(h), ShapeText({Shape({1, 32, h, h}), Shape({32, 32, 3, 3})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({1, 32, h, h}), 1)).Input(Quantized(t, Shape({32, 32, 3, 3}), 2));
                        r.Input(ZeroPoint(t, 128)).Input(ZeroPoint(t, 128));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
  PerType(corpus, "QLinearConv", "", 10, kQuantized, [=](DataType t, int s) {
    const int64_t h = hw[s];
    return CorpusSize{"", units(h), ShapeText({Shape({1, 32, h, h}), Shape({32, 32, 3, 3})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({1, 32, h, h}), 1)).Input(FloatScalar(0.02f)).Input(ZeroPoint(t, 128));
                        r.Input(Quantized(t, Shape({32, 32, 3, 3}), 2)).Input(FloatScalar(0.01f)).Input(ZeroPoint(t, 128));
                        r.Input(FloatScalar(0.5f)).Input(ZeroPoint(t, 128));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
}

// com.microsoft QLinear* ops of qlinear_ms (elements), uint8 and int8.
void QLinear(std::vector<CorpusCase>* corpus) {
  const auto scale_zero = [](KernelRunner& r, DataType t, float scale, int zero) {
    r.Input(FloatScalar(scale)).Input(ZeroPoint(t, zero));
  };
  PerType(corpus, "QLinearMul", "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n}), Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({n}), 1));
                        scale_zero(r, t, 0.02f, 128);
                        r.Input(Quantized(t, Shape({n}), 2));
                        scale_zero(r, t, 0.03f, 100);
                        scale_zero(r, t, 0.05f, 128);
                      }};
  });
  PerType(corpus, "QLinearAdd", "com.microsoft", 1, {DataType::kInt8}, [=](DataType t, int s) {  // uint8: families
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n}), Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({n}), 1));
                        scale_zero(r, t, 0.02f, 128);
                        r.Input(Quantized(t, Shape({n}), 2));
                        scale_zero(r, t, 0.03f, 100);
                        scale_zero(r, t, 0.05f, 128);
                      }};
  });
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu"}) {
    PerType(corpus, op, "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
      const int64_t n = kElementSizes[s];
      return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                          r.Input(Quantized(t, Shape({n}), 1));
                          scale_zero(r, t, 0.05f, 128);
                          scale_zero(r, t, 0.01f, 128);
                        }};
    });
  }
  PerType(corpus, "QLinearConcat", "com.microsoft", 1, kQuantized, [=](DataType t, int s) {
    const int64_t rows = kElementSizes[s] / 256;
    return CorpusSize{"", rows * 512, ShapeText({Shape({rows, 256}), Shape({rows, 256})}), [=](KernelRunner& r) {
                        scale_zero(r, t, 0.05f, 128);
                        r.Input(Quantized(t, Shape({rows, 256}), 1));
                        scale_zero(r, t, 0.02f, 128);
                        r.Input(Quantized(t, Shape({rows, 256}), 2));
                        scale_zero(r, t, 0.03f, 120);
                        r.Attr("axis", int64_t{1});
                      }};
  });
  Image(corpus, "QLinearAveragePool", "com.microsoft", 1, kQuantized, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Quantized(t, Shape({1, 32, h, h}), 1));
    scale_zero(r, t, 0.05f, 128);
    scale_zero(r, t, 0.05f, 128);
    r.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("strides", std::vector<int64_t>{2, 2});
    r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  }, 1, 4);
  Image(corpus, "QLinearGlobalAveragePool", "com.microsoft", 1, kQuantized, [=](KernelRunner& r, DataType t, int64_t h) {
    r.Input(Quantized(t, Shape({1, 32, h, h}), 1));
    scale_zero(r, t, 0.05f, 128);
    scale_zero(r, t, 0.05f, 128);
  });
}

// Recurrent ops over 16 steps, hidden 256 (4 blocks of the default
// parallel.block_hidden_units, so the hidden-block split is what runs), input 64, batch
// 1, 4 and 16 (the step's product as a GEMV, on the step panels and as a GEMM). Work units:
// what parallel.minimum_multiply_adds counts, one step's recurrent multiply-adds
// (batch x gates x hidden x hidden): a step opens its own region, so the sequence length
// does not move the crossover.
void Recurrent(std::vector<CorpusCase>* corpus) {
  struct R {
    const char* op;
    int64_t gates;
  };
  // GRU float (batch 8, hidden 64: the row split) is in corpus_families.cc.
  for (const R& rnn : {R{"LSTM", 4}, R{"RNN", 1}, R{"GRU", 3}}) {
    const std::vector<DataType> types =
        std::string(rnn.op) == "GRU" ? std::vector<DataType>{DataType::kFloat16} : kFloat16Too;
    PerType(corpus, rnn.op, "", 22, types, [=](DataType t, int s) {
      const int64_t steps = 16, batch = std::vector<int64_t>{1, 4, 16}[s], input = 64, hidden = 256;
      const Shape x({steps, batch, input}), w({1, rnn.gates * hidden, input}), rec({1, rnn.gates * hidden, hidden});
      return CorpusSize{"", batch * rnn.gates * hidden * hidden, ShapeText({x, w, rec}),
                        [=](KernelRunner& r) {
                          r.Input(Typed(t, x, -1, 1, 1));
                          r.Input(Typed(t, w, -0.1f, 0.1f, 2)).Input(Typed(t, rec, -0.1f, 0.1f, 3));
                          r.Attr("hidden_size", hidden);
                        }};
    });
  }
}


// Ops measured with their own inputs: quantization, linear algebra, losses, signal,
// attention helpers, optimizers and the ai.onnx.ml linear/encoder ops.
void Others(std::vector<CorpusCase>* corpus) {
  PerType(corpus, "DequantizeLinear", "", 21, kQuantized, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Quantized(t, Shape({n}), 1)).Input(FloatScalar(0.1f)).Input(ZeroPoint(t, 128));
                      }};
  });
  PerType(corpus, "DynamicQuantizeLinear", "", 11, kFloatOnly, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}),
                      [=](KernelRunner& r) { r.Input(Typed(t, Shape({n}), -10, 10, 1)).Outputs(3); }};
  });
  // Determinants of a batch of 8 x 8 matrices (matrices).
  PerType(corpus, "Det", "", 22, kFloat16Too, [](DataType t, int s) {
    const int64_t batch = std::vector<int64_t>{4, 256, 16384}[s];
    const Shape x({batch, 8, 8});
    return CorpusSize{"", batch, ShapeText({x}), [=](KernelRunner& r) { r.Input(Typed(t, x, -1, 1, 1)); }};
  });
  // Mean negative log-likelihood of a batch of 8 sequences of L positions over 32 classes
  // (lanes: an NLL lane reads one input element, its target's; loss_ops.cc).
  PerType(corpus, "NegativeLogLikelihoodLoss", "", 22, kFloat16Too, [](DataType t, int s) {
    const int64_t n = 8, classes = 32, length = std::vector<int64_t>{128, 4096, 65536}[s];
    const Shape scores({n, classes, length}), targets({n, length});
    return CorpusSize{"", n * length, ShapeText({scores, targets}), [=](KernelRunner& r) {
                        r.Input(Typed(t, scores, -4, 0, 1));
                        r.Input(RandomInts<int64_t>(DataType::kInt64, targets, 0, classes - 1, 2));
                      }};
  });
  // A 2-D sampling grid of h x h points for 4 images (output elements).
  PerType(corpus, "AffineGrid", "", 20, kFloat16Too, [](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 64, 512}[s], n = 4;
    return CorpusSize{"", n * h * h * 2, ShapeText({Shape({n, 2, 3})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({n, 2, 3}), -1, 1, 1)).Input(Int64s({n, 3, h, h}));
                      }};
  });
  // A real DFT of 16 signals of length L over axis 1 (output bins x length).
  PerType(corpus, "DFT", "", 20, kFloat16Too, [](DataType t, int s) {
    const int64_t length = std::vector<int64_t>{16, 128, 1024}[s], batch = 16;
    const Shape x({batch, length, 1});
    return CorpusSize{"", batch * length * length, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).MissingInput().Input(Values<int64_t>(DataType::kInt64, {1}, true));
                      }};
  });
  // Frames of 64 samples every 16 of a signal (frames x frame length x bins).
  PerType(corpus, "STFT", "", 17, kFloat16Too, [](DataType t, int s) {
    const int64_t length = std::vector<int64_t>{128, 2048, 32768}[s], frame = 64, step = 16;
    const int64_t frames = (length - frame) / step + 1;
    const Shape x({1, length, 1});
    return CorpusSize{"", frames * frame * (frame / 2 + 1), ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Values<int64_t>(DataType::kInt64, {step}, true));
                        r.MissingInput().Input(Values<int64_t>(DataType::kInt64, {frame}, true));
                      }};
  });
  // Rotary embedding of 8 heads of 64 over S positions (elements).
  PerType(corpus, "RotaryEmbedding", "", 23, kFloat16Too, [](DataType t, int s) {
    const int64_t seq = std::vector<int64_t>{4, 128, 4096}[s], heads = 8, dim = 64;
    const Shape x({1, heads, seq, dim}), cache({seq, dim / 2});
    return CorpusSize{"", heads * seq * dim, ShapeText({x, cache, cache}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Typed(t, cache, -1, 1, 2)).Input(Typed(t, cache, -1, 1, 3));
                        std::vector<int64_t> positions(seq);
                        for (int64_t i = 0; i < seq; ++i) positions[i] = i;
                        auto ids = Tensor::Allocate(DataType::kInt64, Shape({1, seq}), Allocator::Default());
                        std::copy(positions.begin(), positions.end(), ids->data<int64_t>());
                        r.Input(*ids);
                      }};
  });
  // One optimizer step of an n-element parameter (parameter elements).
  for (const char* op : {"Adagrad", "Momentum"}) {
    const std::string name = op;
    PerType(corpus, op, "ai.onnx.preview.training", 1, kFloatOnly, [=](DataType t, int s) {
      const int64_t n = std::vector<int64_t>{1 << 10, 1 << 16, 1 << 20}[s];
      const Shape p({n});
      return CorpusSize{"", n, ShapeText({p, p, p}), [=](KernelRunner& r) {
                          r.Input(FloatScalar(0.01f)).Input(Values<int64_t>(DataType::kInt64, {3}, true));
                          r.Input(Typed(t, p, -1, 1, 1)).Input(Typed(t, p, -0.1f, 0.1f, 2));
                          r.Input(Typed(t, p, 0, 0.01f, 3)).Outputs(2);
                          if (name == "Momentum") {
                            r.Attr("alpha", 0.9f).Attr("beta", 1.0f).Attr("norm_coefficient", 0.0f);
                            r.Attr("mode", std::string("standard"));
                          }
                        }};
    });
  }
  // ai.onnx.ml over rows of 16 features (input elements).
  const auto ml = [&](const std::string& op, std::function<void(KernelRunner&)> attrs) {
    PerType(corpus, op, "ai.onnx.ml", 1, kFloatOnly, [=](DataType t, int s) {
      const int64_t rows = std::vector<int64_t>{8, 1024, 65536}[s], features = 16;
      const Shape x({rows, features});
      return CorpusSize{"", rows * features, ShapeText({x}), [=](KernelRunner& r) {
                          r.Input(Typed(t, x, -1, 1, 1));
                          attrs(r);
                        }};
    });
  };
  const std::vector<float> coefficients = [] {
    std::vector<float> c(3 * 16);
    for (size_t i = 0; i < c.size(); ++i) c[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
    return c;
  }();
  ml("LinearRegressor", [=](KernelRunner& r) {
    r.Attr("coefficients", std::vector<float>(coefficients.begin(), coefficients.begin() + 16));
    r.Attr("intercepts", std::vector<float>{0.5f});
  });
  ml("LinearClassifier", [=](KernelRunner& r) {
    r.Attr("coefficients", coefficients).Attr("intercepts", std::vector<float>{0.1f, 0.2f, 0.3f});
    r.Attr("classlabels_ints", std::vector<int64_t>{0, 1, 2}).Outputs(2);
  });
  ml("Scaler", [](KernelRunner& r) {
    r.Attr("offset", std::vector<float>{0.5f}).Attr("scale", std::vector<float>{2.0f});
  });
  ml("Normalizer", [](KernelRunner& r) { r.Attr("norm", std::string("L2")); });
  ml("Imputer", [](KernelRunner& r) {
    r.Attr("imputed_value_floats", std::vector<float>{0.0f}).Attr("replaced_value_float", 0.5f);
  });
  ml("FeatureVectorizer", [](KernelRunner& r) { r.Attr("inputdimensions", std::vector<int64_t>{16}); });
  // int64 codes mapped through a 64-entry table (input elements).
  const auto codes = [&](const std::string& op, std::function<void(KernelRunner&)> attrs) {
    PerType(corpus, op, "ai.onnx.ml", op == "LabelEncoder" ? 4 : 1, {DataType::kInt64}, [=](DataType t, int s) {
      const int64_t n = kElementSizes[s];
      return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                          r.Input(RandomInts<int64_t>(t, Shape({n}), 0, 63, 1));
                          attrs(r);
                        }};
    });
  };
  std::vector<int64_t> keys(64), values(64);
  for (int64_t i = 0; i < 64; ++i) keys[i] = i, values[i] = (i * 37) % 64;
  codes("LabelEncoder", [=](KernelRunner& r) {
    r.Attr("keys_int64s", keys).Attr("values_int64s", values).Attr("default_int64", int64_t{-1});
  });
  std::vector<std::string> names(64);
  for (int64_t i = 0; i < 64; ++i) names[i] = "c" + std::to_string(i);
  codes("CategoryMapper", [=](KernelRunner& r) { r.Attr("cats_int64s", keys).Attr("cats_strings", names); });
}


// float16 cases of ops whose float case is in corpus.cc or corpus_families.cc (same shapes
// and work units as there).
void Float16Cases(std::vector<CorpusCase>* corpus) {
  const std::vector<DataType> half = {DataType::kFloat16};
  PerType(corpus, "Attention", "", 23, half, [](DataType t, int s) {
    const int64_t L = std::vector<int64_t>{16, 128, 512}[s];
    const Shape qkv({1, 12, L, 64});
    return CorpusSize{"", 12 * L * L * 64 * 2, ShapeText({qkv, qkv, qkv}), [=](KernelRunner& r) {
                        for (uint32_t i = 1; i <= 3; ++i) r.Input(Typed(t, qkv, -1, 1, i));
                      }};
  });
  PerType(corpus, "CausalConvWithState", "", 27, half, [](DataType t, int s) {
    const int64_t L = std::vector<int64_t>{16, 256, 4096}[s];
    const Shape x({1, 256, L}), w({256, 1, 4}), past({1, 256, 3});
    return CorpusSize{"", 256 * L * 4, ShapeText({x, w}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Typed(t, w, -1, 1, 2)).Input(Typed(t, Shape({256}), -1, 1, 3));
                        r.Input(Typed(t, past, -1, 1, 4)).Attr("activation", std::string("silu")).Outputs(2);
                      }};
  });
  PerType(corpus, "CenterCropPad", "", 18, half, [](DataType t, int s) {
    const int64_t side = std::vector<int64_t>{16, 128, 1536}[s];
    const Shape x({3, side * 3 / 2, side / 2});
    return CorpusSize{"", 3 * side * side, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, 0, 1, 1)).Input(Int64s({side, side})).Attr("axes", std::vector<int64_t>{1, 2});
                      }};
  });
  PerType(corpus, "Col2Im", "", 18, half, [](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 32, 64}[s];
    const Shape columns({1, 16 * 9, h * h});
    return CorpusSize{"", 16 * h * h, ShapeText({columns}), [=](KernelRunner& r) {
                        r.Input(Typed(t, columns, -1, 1, 1)).Input(Int64s({h, h})).Input(Int64s({3, 3}));
                        r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                      }};
  });
  PerType(corpus, "Einsum", "", 12, half, [](DataType t, int s) {
    const int64_t d = std::vector<int64_t>{8, 32, 64}[s], batch = 8;
    const Shape m({batch, d, d});
    return CorpusSize{"", batch * d * d * d * 2, ShapeText({m, m}), [=](KernelRunner& r) {
                        r.Input(Typed(t, m, -1, 1, 1)).Input(Typed(t, m, -1, 1, 2));
                        r.Attr("equation", std::string("bij,bjk->bik"));
                      }};
  });
  PerType(corpus, "GridSample", "", 22, half, [](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{8, 32, 128}[s];
    const Shape x({1, 16, h, h}), grid({1, h, h, 2});
    return CorpusSize{"", 16 * h * h, ShapeText({x, grid}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, -1, 1, 1)).Input(Typed(t, grid, -1, 1, 2)).Attr("mode", std::string("linear"));
                      }};
  });
  PerType(corpus, "QuantizeLinear", "", 21, half, [](DataType t, int s) {
    const int64_t n = kElementSizes[s];
    return CorpusSize{"", n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, Shape({n}), -10, 10, 1)).Input(Scalar(t, 0.1f)).Input(ZeroPoint(DataType::kUint8, 128));
                      }};
  });
  PerType(corpus, "Resize", "", 19, half, [](DataType t, int s) {
    const int64_t h = std::vector<int64_t>{16, 64, 128}[s];
    const Shape x({1, 3, h, h});
    return CorpusSize{"", 3 * (2 * h) * (2 * h) * 16, ShapeText({x}), [=](KernelRunner& r) {
                        r.Input(Typed(t, x, 0, 1, 1)).MissingInput().Input(Values<float>(DataType::kFloat, {1, 1, 2, 2}));
                        r.Attr("mode", std::string("linear"));
                      }};
  });
  PerType(corpus, "SoftmaxCrossEntropyLoss", "", 13, half, [](DataType t, int s) {
    const int64_t n = std::vector<int64_t>{4, 64, 1024}[s], classes = 1000;
    const Shape scores({n, classes});
    return CorpusSize{"", n * classes, ShapeText({scores, Shape({n})}), [=](KernelRunner& r) {
                        r.Input(Typed(t, scores, -4, 4, 1));
                        r.Input(RandomInts<int64_t>(DataType::kInt64, Shape({n}), 0, classes - 1, 2));
                      }};
  });
  PerType(corpus, "TensorScatter", "", 24, half, [](DataType t, int s) {
    const int64_t L = std::vector<int64_t>{16, 512, 8192}[s];
    const Shape cache({1, 12, L, 64}), update({1, 12, 4, 64});
    return CorpusSize{"", 12 * L * 64, ShapeText({cache, update}), [=](KernelRunner& r) {
                        r.Input(Typed(t, cache, -1, 1, 1)).Input(Typed(t, update, -1, 1, 2)).Input(Int64s({L - 4}));
                      }};
  });
}

}  // namespace

void AddOpCases(std::vector<CorpusCase>* corpus) {
  Unary(corpus);
  Binary(corpus);
  Reductions(corpus);
  Normalizations(corpus);
  Pools(corpus);
  Movement(corpus);
  Gemms(corpus);
  Convs(corpus);
  QLinear(corpus);
  Recurrent(corpus);
  Others(corpus);
  Float16Cases(corpus);
}

}  // namespace baseline
}  // namespace onnx_light
