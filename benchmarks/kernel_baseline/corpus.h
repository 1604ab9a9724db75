// The kernel_baseline corpus: a case for every op with a parallel path (corpus.cc,
// corpus_families.cc, corpus_ops.cc, corpus_models.cc), per element type users run, each at a small, a
// crossover and a large size. A case names its op; the family is whatever the
// registry says implements it, so the corpus follows the code.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/registry/kernel_runner.h"

namespace onnx_light {
namespace baseline {

struct CorpusSize {
  std::string label;   // "small", "crossover", "large"
  int64_t work_units;  // what the family's parallel.minimum_elements counts
  std::string shapes;  // human-readable input shapes, e.g. "[1024]x[1024]"
  // Adds inputs and attributes to a fresh runner.
  std::function<void(KernelRunner&)> setup;
};

struct CorpusCase {
  std::string op;
  std::string domain;  // "" = ai.onnx
  int opset;
  std::string element_type;
  std::vector<CorpusSize> sizes;
};

// `smallest`: only each case's smallest size (for the test that runs the tool).
std::vector<CorpusCase> KernelCorpus(bool smallest);

}  // namespace baseline
}  // namespace onnx_light
