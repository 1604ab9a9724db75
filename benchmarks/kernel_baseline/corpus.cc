#include "benchmarks/kernel_baseline/corpus.h"

#include "benchmarks/kernel_baseline/corpus_inputs.h"

namespace onnx_light {
namespace baseline {
namespace {

CorpusCase Elementwise(const std::string& op, int opset, int inputs, float lo, float hi) {
  CorpusCase c{op, "", opset, "float", {}};
  for (int s = 0; s < 3; ++s) {
    const int64_t n = kElementSizes[s];
    std::vector<Shape> shapes(inputs, Shape({n}));
    c.sizes.push_back({kLabels[s], n, ShapeText(shapes), [=](KernelRunner& r) {
                         for (int i = 0; i < inputs; ++i) r.Input(RandomFloats(Shape({n}), lo, hi, 7 + i));
                       }});
  }
  return c;
}

// Rows x columns, reduced or normalised over the last axis.
CorpusCase RowWise(const std::string& op, int opset, std::function<void(KernelRunner&, int64_t, int64_t)> extra) {
  CorpusCase c{op, "", opset, "float", {}};
  const int64_t rows[] = {4, 256, 4096};
  for (int s = 0; s < 3; ++s) {
    const int64_t r = rows[s], cols = 1024;
    c.sizes.push_back({kLabels[s], r * cols, ShapeText({Shape({r, cols})}), [=](KernelRunner& k) {
                         k.Input(RandomFloats(Shape({r, cols}), -2, 2, 11));
                         if (extra) extra(k, r, cols);
                       }});
  }
  return c;
}

// Data movement over rows x 256 floats: work = output elements.
CorpusCase Rows256(const std::string& op, int opset, int64_t output_factor,
                   std::function<void(KernelRunner&, int64_t)> setup) {
  CorpusCase c{op, "", opset, "float", {}};
  for (int s = 0; s < 3; ++s) {
    const int64_t rows = kElementSizes[s] / 256;
    c.sizes.push_back({kLabels[s], rows * 256 * output_factor, ShapeText({Shape({rows, 256})}),
                       [=](KernelRunner& r) { setup(r, rows); }});
  }
  return c;
}

}  // namespace

std::vector<CorpusCase> KernelCorpus(bool smallest) {
  std::vector<CorpusCase> corpus;
  corpus.push_back(Elementwise("Add", 14, 2, -1, 1));
  corpus.push_back(Elementwise("Sigmoid", 13, 1, -4, 4));
  corpus.push_back(Elementwise("Less", 13, 2, -1, 1));
  {
    CorpusCase where{"Where", "", 16, "float", {}};
    for (int s = 0; s < 3; ++s) {
      const int64_t n = kElementSizes[s];
      where.sizes.push_back({kLabels[s], n, ShapeText({Shape({n}), Shape({n}), Shape({n})}), [=](KernelRunner& r) {
                               r.Input(Bools(Shape({n}), 3));
                               r.Input(RandomFloats(Shape({n}), -1, 1, 4));
                               r.Input(RandomFloats(Shape({n}), -1, 1, 5));
                             }});
    }
    corpus.push_back(where);
  }
  {
    CorpusCase cast{"Cast", "", 21, "float", {}};
    for (int s = 0; s < 3; ++s) {
      const int64_t n = kElementSizes[s];
      cast.sizes.push_back({kLabels[s], n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                              r.Input(RandomFloats(Shape({n}), -100, 100, 9));
                              r.Attr("to", int64_t{10});  // float16
                            }});
    }
    corpus.push_back(cast);
  }
  {
    CorpusCase fill{"ConstantOfShape", "", 21, "int64", {}};
    for (int s = 0; s < 3; ++s) {
      const int64_t n = kElementSizes[s];
      fill.sizes.push_back({kLabels[s], n, "[" + std::to_string(n) + "]", [=](KernelRunner& r) {
                              r.Input(Int64s({n}));
                            }});
    }
    corpus.push_back(fill);
  }
  {
    CorpusCase gemm{"MatMul", "", 13, "float", {}};
    const int64_t dims[] = {64, 128, 512};  // 1, 8 and 512 GEMM work units
    for (int s = 0; s < 3; ++s) {
      const int64_t d = dims[s];
      gemm.sizes.push_back({kLabels[s], GemmUnits(d * d * d), ShapeText({Shape({d, d}), Shape({d, d})}), [=](KernelRunner& r) {
                              r.Input(RandomFloats(Shape({d, d}), -1, 1, 1));
                              r.Input(RandomFloats(Shape({d, d}), -1, 1, 2));
                            }});
    }
    corpus.push_back(gemm);
  }
  {
    CorpusCase conv{"Conv", "", 11, "float", {}};
    const int64_t hw[] = {8, 28, 56};
    for (int s = 0; s < 3; ++s) {
      const int64_t h = hw[s];
      conv.sizes.push_back({kLabels[s], GemmUnits(64 * 64 * 9 * h * h), ShapeText({Shape({1, 64, h, h}), Shape({64, 64, 3, 3})}),
                            [=](KernelRunner& r) {
                              r.Input(RandomFloats(Shape({1, 64, h, h}), -1, 1, 1));
                              r.Input(RandomFloats(Shape({64, 64, 3, 3}), -0.1f, 0.1f, 2));
                              r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                            }});
    }
    corpus.push_back(conv);
  }
  {
    CorpusCase deform{"DeformConv", "", 19, "float", {}};
    const int64_t hw[] = {8, 28, 56};
    for (int s = 0; s < 3; ++s) {
      const int64_t h = hw[s];
      const Shape x({1, 64, h, h}), w({64, 64, 3, 3}), offset({1, 18, h, h});
      deform.sizes.push_back({kLabels[s], GemmUnits(64 * 64 * 9 * h * h), ShapeText({x, w, offset}), [=](KernelRunner& r) {
                                r.Input(RandomFloats(x, -1, 1, 1));
                                r.Input(RandomFloats(w, -0.1f, 0.1f, 2));
                                r.Input(RandomFloats(offset, -2, 2, 3));
                                r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                              }});
    }
    corpus.push_back(deform);
  }
  {
    // A decode-step KV-cache write: 4 new rows into a (1, 12, L, 64) cache.
    CorpusCase scatter{"TensorScatter", "", 24, "float", {}};
    const int64_t lengths[] = {16, 512, 8192};
    for (int s = 0; s < 3; ++s) {
      const int64_t L = lengths[s];
      const Shape cache({1, 12, L, 64}), update({1, 12, 4, 64});
      scatter.sizes.push_back({kLabels[s], 12 * L * 64, ShapeText({cache, update}), [=](KernelRunner& r) {
                                 r.Input(RandomFloats(cache, -1, 1, 1));
                                 r.Input(RandomFloats(update, -1, 1, 2));
                                 r.Input(Int64s({L - 4}));
                               }});
    }
    corpus.push_back(scatter);
  }
  {
    CorpusCase causal{"CausalConvWithState", "", 27, "float", {}};
    const int64_t lengths[] = {16, 256, 4096};
    for (int s = 0; s < 3; ++s) {
      const int64_t L = lengths[s];
      const Shape x({1, 256, L}), w({256, 1, 4}), past({1, 256, 3});
      causal.sizes.push_back({kLabels[s], 256 * L * 4, ShapeText({x, w}), [=](KernelRunner& r) {
                                r.Input(RandomFloats(x, -1, 1, 1));
                                r.Input(RandomFloats(w, -1, 1, 2));
                                r.Input(RandomFloats(Shape({256}), -1, 1, 3));
                                r.Input(RandomFloats(past, -1, 1, 4));
                                r.Attr("activation", std::string("silu"));
                                r.Outputs(2);
                              }});
    }
    corpus.push_back(causal);
  }
  {
    CorpusCase attention{"Attention", "", 23, "float", {}};
    const int64_t seqs[] = {16, 128, 512};
    for (int s = 0; s < 3; ++s) {
      const int64_t L = seqs[s];
      const Shape qkv({1, 12, L, 64});
      attention.sizes.push_back({kLabels[s], 12 * L * L * 64 * 2, ShapeText({qkv, qkv, qkv}), [=](KernelRunner& r) {
                                   r.Input(RandomFloats(qkv, -1, 1, 1));
                                   r.Input(RandomFloats(qkv, -1, 1, 2));
                                   r.Input(RandomFloats(qkv, -1, 1, 3));
                                 }});
    }
    corpus.push_back(attention);
  }
  corpus.push_back(RowWise("Transpose", 13, nullptr));
  corpus.push_back(RowWise("ReduceSum", 13, [](KernelRunner& r, int64_t, int64_t) { r.Input(Int64s({1})); }));
  corpus.push_back(RowWise("Softmax", 13, nullptr));
  corpus.push_back(RowWise("LayerNormalization", 17, [](KernelRunner& r, int64_t, int64_t cols) {
    r.Input(RandomFloats(Shape({cols}), 0.5f, 1.5f, 5));
    r.Input(RandomFloats(Shape({cols}), -0.5f, 0.5f, 6));
  }));
  corpus.push_back(RowWise("TopK", 11, [](KernelRunner& r, int64_t, int64_t) { r.Input(Int64s({8})).Outputs(2); }));
  {
    CorpusCase pool{"MaxPool", "", 12, "float", {}};
    const int64_t hw[] = {8, 56, 112};
    for (int s = 0; s < 3; ++s) {
      const int64_t h = hw[s];
      pool.sizes.push_back({kLabels[s], 64 * h * h, ShapeText({Shape({1, 64, h, h})}), [=](KernelRunner& r) {
                              r.Input(RandomFloats(Shape({1, 64, h, h}), -1, 1, 1));
                              r.Attr("kernel_shape", std::vector<int64_t>{3, 3});
                              r.Attr("strides", std::vector<int64_t>{2, 2});
                              r.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                            }});
    }
    corpus.push_back(pool);
  }
  {
    CorpusCase gather{"Gather", "", 13, "float", {}};
    for (int s = 0; s < 3; ++s) {
      const int64_t rows = kElementSizes[s] / 256;
      gather.sizes.push_back({kLabels[s], rows * 256, ShapeText({Shape({rows, 256}), Shape({rows})}),
                              [=](KernelRunner& r) {
                                r.Input(RandomFloats(Shape({rows, 256}), -1, 1, 1));
                                std::vector<int64_t> idx(rows);
                                for (int64_t i = 0; i < rows; ++i) idx[i] = (i * 7919) % rows;
                                r.Input(Int64s(idx));
                              }});
    }
    corpus.push_back(gather);
  }
  corpus.push_back(Rows256("Concat", 13, 2, [](KernelRunner& r, int64_t rows) {
    r.Input(RandomFloats(Shape({rows, 256}), -1, 1, 1)).Input(RandomFloats(Shape({rows, 256}), -1, 1, 2));
    r.Attr("axis", int64_t{0});
  }));
  corpus.push_back(Rows256("Expand", 13, 1, [](KernelRunner& r, int64_t rows) {
    r.Input(RandomFloats(Shape({1, 256}), -1, 1, 1)).Input(Int64s({rows, 256}));
  }));
  corpus.push_back(Rows256("Pad", 18, 1, [](KernelRunner& r, int64_t rows) {
    r.Input(RandomFloats(Shape({rows, 256}), -1, 1, 1)).Input(Int64s({0, 1, 0, 1}));
  }));
  corpus.push_back(Rows256("Trilu", 14, 1, [](KernelRunner& r, int64_t rows) {
    r.Input(RandomFloats(Shape({rows, 256}), -1, 1, 1));
  }));
  corpus.push_back(Rows256("DepthToSpace", 13, 1, [](KernelRunner& r, int64_t rows) {
    r.Input(RandomFloats(Shape({1, 4, rows, 64}), -1, 1, 1)).Attr("blocksize", int64_t{2});
  }));
  {
    CorpusCase quantize{"QuantizeLinear", "", 21, "float", {}};
    for (int s = 0; s < 3; ++s) {
      const int64_t n = kElementSizes[s];
      quantize.sizes.push_back({kLabels[s], n, ShapeText({Shape({n})}), [=](KernelRunner& r) {
                                  r.Input(RandomFloats(Shape({n}), -10, 10, 1));
                                  auto scale = Tensor::Allocate(DataType::kFloat, Shape(), Allocator::Default());
                                  scale->data<float>()[0] = 0.1f;
                                  auto zero = Tensor::Allocate(DataType::kUint8, Shape(), Allocator::Default());
                                  zero->data<uint8_t>()[0] = 128;
                                  r.Input(*scale).Input(*zero);
                                }});
    }
    corpus.push_back(quantize);
  }
  AddFamilyCases(&corpus);
  AddOpCases(&corpus);
  AddModelCases(&corpus);
  if (smallest) {
    for (auto& c : corpus) c.sizes.resize(1);
  }
  return corpus;
}

}  // namespace baseline
}  // namespace onnx_light
