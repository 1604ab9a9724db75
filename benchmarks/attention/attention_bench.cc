// Times one Attention node (the kernel alone, created once, outputs allocated per run as
// a session would) and prints one JSON line of raw samples per thread count (wall and
// process CPU milliseconds), for
// attention_vs_ort.py to set beside ONNX Runtime.
//
//   attention_bench --batch=1 --heads=12 --seq=512 --head_size=64 --threads=1,2 --reps=20
//   (--tile=N and --minimum_multiply_adds=N override the tuning values)
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

int64_t Flag(int argc, char** argv, const char* name, int64_t fallback) {
  const size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) == 0 && std::strncmp(argv[i] + 2, name, len) == 0 && argv[i][2 + len] == '=') {
      return std::atoll(argv[i] + 3 + len);
    }
  }
  return fallback;
}

std::vector<int> ThreadList(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      std::vector<int> out;
      for (const char* p = argv[i] + 10; *p;) {
        out.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
      return out;
    }
  }
  return {1, 2};
}

Tensor Random(Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat, shape, Allocator::Default());
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

Attribute IntAttribute(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kInt;
  a.i = value;
  return a;
}

// Creates the kernel once (as a session does per node) and times Compute alone.
int Main(int argc, char** argv) {
  const int64_t batch = Flag(argc, argv, "batch", 1), heads = Flag(argc, argv, "heads", 12);
  const int64_t seq = Flag(argc, argv, "seq", 512), head_size = Flag(argc, argv, "head_size", 64);
  const int64_t reps = Flag(argc, argv, "reps", 20), tile = Flag(argc, argv, "tile", 0);
  const std::string op = "Attention", node = "bench";
  AttributeMap attributes;
  if (Flag(argc, argv, "causal", 0)) attributes["is_causal"] = IntAttribute("is_causal", 1);
  std::vector<Value> values;
  for (uint32_t i = 0; i < 3; ++i) values.emplace_back(Random(Shape{batch, heads, seq, head_size}, i + 1));
  std::vector<const Value*> inputs = {&values[0], &values[1], &values[2]};

  KernelRegistry& registry = KernelRegistry::Global();
  auto def = registry.Find("", op, 23, DataType::kFloat);
  if (!def.ok()) return std::fprintf(stderr, "%s\n", def.status().ToString().c_str()), 1;
  ResolvedTuning tuning = ResolvedTuning::Defaults(registry.SchemaFor(**def, DataType::kFloat));
  if (tile > 0 && !tuning.Set("algorithm.query_tile_rows", tile, ValueSource::kExplicitProfile).ok()) return 1;
  // --minimum_multiply_adds=1 forces the parallel path (crossover sweeps).
  if (const int64_t minimum = Flag(argc, argv, "minimum_multiply_adds", 0)) {
    if (!tuning.Set("parallel.minimum_multiply_adds", minimum, ValueSource::kExplicitProfile).ok()) return 1;
  }
  KernelInfo info("", op, node, 23, &attributes, {DataType::kFloat, DataType::kFloat, DataType::kFloat}, 1, tuning);
  auto kernel = (*def)->factory(info);
  if (!kernel.ok()) return std::fprintf(stderr, "%s\n", kernel.status().ToString().c_str()), 1;

  Allocator allocator;
  for (int threads : ThreadList(argc, argv)) {
    std::shared_ptr<CpuExecutor> executor;
    if (threads > 1) {
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      executor = *ExecutorRegistry::Global().Acquire(policy);
    }
    std::vector<double> samples, cpu_samples;
    for (int64_t r = 0; r < reps + 2; ++r) {
      KernelContext ctx(&op, &node, inputs, 1, &allocator, ParallelContext{executor.get(), nullptr, nullptr, "Attention"});
      const std::clock_t cpu_start = std::clock();
      const auto start = std::chrono::steady_clock::now();
      const Status status = (*kernel)->Compute(ctx);
      const auto stop = std::chrono::steady_clock::now();
      const std::clock_t cpu_stop = std::clock();
      if (!status.ok()) return std::fprintf(stderr, "%s\n", status.ToString().c_str()), 1;
      if (r >= 2) {  // after 2 warm-ups
        samples.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
        cpu_samples.push_back(1e3 * static_cast<double>(cpu_stop - cpu_start) / CLOCKS_PER_SEC);
      }
    }
    std::printf("{\"runtime\": \"onnx_light\", \"threads\": %d, \"samples_ms\": [", threads);
    for (size_t i = 0; i < samples.size(); ++i) std::printf("%s%.4f", i ? ", " : "", samples[i]);
    std::printf("], \"cpu_ms\": [");
    for (size_t i = 0; i < cpu_samples.size(); ++i) std::printf("%s%.4f", i ? ", " : "", cpu_samples[i]);
    std::printf("]}\n");
  }
  return 0;
}

}  // namespace
}  // namespace onnx_light

int main(int argc, char** argv) { return onnx_light::Main(argc, argv); }
