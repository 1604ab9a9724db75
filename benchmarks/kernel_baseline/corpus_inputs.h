// Input builders and size labels shared by the corpus files (corpus.cc, corpus_families.cc).
#pragma once

#include <cstdint>
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

}  // namespace baseline
}  // namespace onnx_light
