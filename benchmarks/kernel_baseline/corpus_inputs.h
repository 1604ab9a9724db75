// Input builders, size labels and PerType shared by the corpus files (corpus.cc,
// corpus_families.cc, corpus_ops.cc, corpus_models.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/kernel_baseline/corpus.h"

namespace onnx_light {
namespace baseline {

// Sizes of an elementwise-like case over n elements: small, crossover, large.
inline constexpr int64_t kElementSizes[] = {1 << 10, 1 << 16, 1 << 22};

// Work of a GEMM-based case in the unit its `parallel.minimum_tasks` counts (64^3
// multiply-adds), so that its crossover compares with the schema default.
inline int64_t GemmUnits(int64_t multiply_adds) { return multiply_adds / (int64_t{64} * 64 * 64); }
inline const char* const kLabels[] = {"small", "crossover", "large"};

inline Tensor RandomFloats(Shape shape, float lo, float hi, uint32_t seed) {
  auto t = Tensor::Allocate(DataType::kFloat, shape, Allocator::Default());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data<float>()[i] = dist(rng);
  return *t;
}

// Uniform integers in [lo, hi] of an integer element type T.
template <typename T>
Tensor RandomInts(DataType type, Shape shape, int64_t lo, int64_t hi, uint32_t seed) {
  auto t = Tensor::Allocate(type, shape, Allocator::Default());
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data<T>()[i] = static_cast<T>(dist(rng));
  return *t;
}

// A tensor of the given values of element type T ([n], or a scalar with `scalar`).
template <typename T>
Tensor Values(DataType type, std::vector<T> values, bool scalar = false) {
  const Shape shape = scalar ? Shape() : Shape({static_cast<int64_t>(values.size())});
  auto t = Tensor::Allocate(type, shape, Allocator::Default());
  for (size_t i = 0; i < values.size(); ++i) t->data<T>()[i] = values[i];
  return *t;
}

// Uniform values in [lo, hi] of a float type (float, float16, bfloat16, double) or, rounded,
// of an integer type; "type" is the name the corpus records (TypeName below).
inline Tensor Typed(DataType type, Shape shape, float lo, float hi, uint32_t seed) {
  auto t = Tensor::Allocate(type, shape, Allocator::Default());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  const int64_t n = t->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    switch (type) {
      case DataType::kFloat: t->data<float>()[i] = v; break;
      case DataType::kFloat16: t->data<Float16>()[i] = Float16::FromFloat(v); break;
      case DataType::kBFloat16: t->data<BFloat16>()[i] = BFloat16::FromFloat(v); break;
      case DataType::kDouble: t->data<double>()[i] = v; break;
      case DataType::kInt8: t->data<int8_t>()[i] = static_cast<int8_t>(std::lround(v)); break;
      case DataType::kUint8: t->data<uint8_t>()[i] = static_cast<uint8_t>(std::lround(v)); break;
      case DataType::kInt32: t->data<int32_t>()[i] = static_cast<int32_t>(std::lround(v)); break;
      case DataType::kUint32: t->data<uint32_t>()[i] = static_cast<uint32_t>(std::lround(v)); break;
      case DataType::kInt64: t->data<int64_t>()[i] = std::lround(v); break;
      case DataType::kBool: t->data<bool>()[i] = v > 0.5f * (lo + hi); break;
      default: break;  // not used by the corpus
    }
  }
  return *t;
}

inline const char* TypeName(DataType type) {
  switch (type) {
    case DataType::kFloat: return "float";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kDouble: return "double";
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kBool: return "bool";
    default: return "other";
  }
}

inline Tensor Int64s(std::vector<int64_t> values) { return Values<int64_t>(DataType::kInt64, std::move(values)); }

inline Tensor Bools(Shape shape, uint32_t seed) {
  auto t = Tensor::Allocate(DataType::kBool, shape, Allocator::Default());
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data<bool>()[i] = rng() & 1;
  return *t;
}

inline std::string ShapeText(const std::vector<Shape>& shapes) {
  std::string s;
  for (const auto& shape : shapes) s += (s.empty() ? "" : "x") + shape.ToString();
  return s;
}

// Appends the cases defined in corpus_families.cc.
void AddFamilyCases(std::vector<CorpusCase>* corpus);
// Appends the per-op cases defined in corpus_ops.cc (every op with a parallel path).
void AddOpCases(std::vector<CorpusCase>* corpus);
// Appends the cases defined in corpus_models.cc (whole models' attributes, map inputs).
void AddModelCases(std::vector<CorpusCase>* corpus);

// A case per element type of `types`; size s (0 = small .. 2 = large) of type t is made by
// size(t, s), its label filled in.
inline void PerType(std::vector<CorpusCase>* corpus, const std::string& op, const std::string& domain, int opset,
                    const std::vector<DataType>& types, const std::function<CorpusSize(DataType, int)>& size) {
  for (DataType t : types) {
    CorpusCase c{op, domain, opset, TypeName(t), {}};
    for (int s = 0; s < 3; ++s) {
      c.sizes.push_back(size(t, s));
      c.sizes.back().label = kLabels[s];
    }
    corpus->push_back(std::move(c));
  }
}

}  // namespace baseline
}  // namespace onnx_light
