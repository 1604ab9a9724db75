// kernel_baseline (native part): runs the corpus under the serial policy and the session
// thread count, and writes one JSON document with every raw sample. The Python tool
// //tools:kernel_baseline adds the source revision and Bazel config and drives it; this
// binary is also what runs on aarch64 under qemu.
//
//   kernel_baseline_native --threads=0 --repetitions=15 --min_time_ms=200 [--smallest]
//                          [--ops=Add,MatMul] [--revision=...] [--output=path]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "benchmarks/kernel_baseline/corpus.h"
#include "benchmarks/kernel_baseline/json_writer.h"
#include "native/tuning/processor.h"

namespace onnx_light {
namespace baseline {
namespace {

struct Options {
  int threads = 0;
  int repetitions = 15;       // samples per cell at least
  int max_repetitions = 200;  // and at most
  int64_t min_time_ms = 200;  // keep sampling until this much time per cell
  bool smallest = false;
  std::set<std::string> ops;
  std::string revision = "unknown";
  std::string build_config = "unknown";
  std::string output;
};

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (ParseFlag(argv[i], "--threads", &v)) o.threads = std::atoi(v.c_str());
    else if (ParseFlag(argv[i], "--repetitions", &v)) o.repetitions = std::max(1, std::atoi(v.c_str()));
    else if (ParseFlag(argv[i], "--max_repetitions", &v)) o.max_repetitions = std::max(1, std::atoi(v.c_str()));
    else if (ParseFlag(argv[i], "--min_time_ms", &v)) o.min_time_ms = std::atoll(v.c_str());
    else if (ParseFlag(argv[i], "--revision", &v)) o.revision = v;
    else if (ParseFlag(argv[i], "--build_config", &v)) o.build_config = v;
    else if (ParseFlag(argv[i], "--output", &v)) o.output = v;
    else if (ParseFlag(argv[i], "--ops", &v)) {
      std::stringstream ss(v);
      std::string op;
      while (std::getline(ss, op, ',')) o.ops.insert(op);
    } else if (std::strcmp(argv[i], "--smallest") == 0) o.smallest = true;
    else {
      std::fprintf(stderr, "kernel_baseline_native: unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct CellResult {
  std::vector<int64_t> samples_ns;  // Compute wall time per repetition
  std::vector<int64_t> cpu_ns;      // process CPU time per repetition
  std::vector<int64_t> wall_ns;     // wall time of the whole run (incl. kernel creation)
  KernelRunResult last;
  Status status;
};

CellResult Measure(KernelRunner& runner, int threads, const Options& o) {
  CellResult cell;
  auto warm = runner.Run(threads);
  if (!warm.ok()) {
    cell.status = warm.status();
    return cell;
  }
  const auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(cell.samples_ns.size()) < o.max_repetitions) {
    const int64_t cpu0 = ProcessCpuNanos();
    const auto t0 = std::chrono::steady_clock::now();
    auto r = runner.Run(threads);
    const auto t1 = std::chrono::steady_clock::now();
    const int64_t cpu1 = ProcessCpuNanos();
    if (!r.ok()) {
      cell.status = r.status();
      return cell;
    }
    cell.samples_ns.push_back(r->compute_ns);
    cell.cpu_ns.push_back(cpu1 - cpu0);
    cell.wall_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    cell.last = std::move(r).value();
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(t1 - start).count();
    if (static_cast<int>(cell.samples_ns.size()) >= o.repetitions && elapsed >= o.min_time_ms) break;
  }
  return cell;
}

int64_t MedianOf(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool SameOutputs(const KernelRunResult& a, const KernelRunResult& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const Value &x = a.outputs[i], &y = b.outputs[i];
    if (!x.is_tensor() || !y.is_tensor()) continue;
    if (x.tensor().dtype() != y.tensor().dtype() || x.tensor().shape() != y.tensor().shape()) return false;
    if (x.tensor().dtype() == DataType::kString) continue;
    if (std::memcmp(x.tensor().raw_data(), y.tensor().raw_data(), x.tensor().byte_size()) != 0) return false;
  }
  return true;
}

void WriteProcessor(JsonWriter& w) {
  const ProcessorDescriptor& p = HostProcessor();
  w.BeginObject();
  w.Field("architecture", p.architecture).Field("vendor", p.vendor).Field("family", p.family);
  w.Field("model", p.model).Field("stepping", p.stepping).Field("microarchitecture", p.microarchitecture);
  w.Field("model_name", p.model_name).Key("isa_features").Array(p.isa_features).Field("isa_level", p.isa_level);
  w.Key("caches").BeginArray();
  for (const auto& c : p.caches) {
    w.BeginObject().Field("level", c.level).Field("type", c.type).Field("size_bytes", c.size_bytes).EndObject();
  }
  w.EndArray();
  w.Field("physical_cores", p.physical_cores).Field("logical_cores", p.logical_cores);
  w.EndObject();
}

void WriteCell(JsonWriter& w, const std::string& family, const CorpusCase& c, const CorpusSize& size,
               const char* policy, int threads, const CellResult& cell, bool outputs_identical) {
  w.BeginObject();
  w.Field("family", family).Field("op", c.op).Field("domain", c.domain.empty() ? "ai.onnx" : c.domain);
  w.Field("opset", c.opset).Field("element_type", c.element_type).Field("size", size.label);
  w.Field("work_units", size.work_units).Field("shapes", size.shapes).Field("policy", policy);
  w.Field("threads", threads);
  if (!cell.status.ok()) {
    w.Field("error", cell.status.ToString()).EndObject();
    return;
  }
  w.Key("samples_ns").Array(cell.samples_ns).Field("median_ns", MedianOf(cell.samples_ns));
  w.Key("cpu_ns").Array(cell.cpu_ns).Key("run_wall_ns").Array(cell.wall_ns);
  int64_t cpu = 0, wall = 0;
  for (size_t i = 0; i < cell.cpu_ns.size(); ++i) cpu += cell.cpu_ns[i], wall += cell.wall_ns[i];
  w.Field("cpu_utilization", wall > 0 ? static_cast<double>(cpu) / wall : 0.0);
  // Participants and grain from the run's region events (the widest region).
  int requested = 0, admitted = 0, observed = 0, nested = 0;
  int64_t grain = 0;
  for (const auto& r : cell.last.regions) {
    if (r.admitted_participants >= admitted) {
      requested = r.requested_participants;
      admitted = r.admitted_participants;
      observed = r.observed_participants;
      grain = r.grain;
    }
    nested += r.nested;
  }
  w.Field("regions", static_cast<int64_t>(cell.last.regions.size())).Field("nested_regions", nested);
  w.Key("participants").BeginObject().Field("requested", requested).Field("admitted", admitted);
  w.Field("observed", observed).EndObject();
  w.Field("grain", grain).Field("peak_scratch_bytes", cell.last.peak_scratch);
  w.Field("allocations", cell.last.allocation.allocations);
  w.Field("bytes_allocated", cell.last.allocation.bytes_allocated);
  w.Field("copies", cell.last.copies);
  w.Field("outputs_identical_to_serial", outputs_identical);
  w.EndObject();
}

int Main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  CpuExecutionPolicy policy;
  policy.num_threads = o.threads;
  if (Status s = policy.Validate(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  const int threads = policy.EffectiveThreads();
  std::vector<CorpusCase> corpus = KernelCorpus(o.smallest);
  if (!o.ops.empty()) {
    corpus.erase(std::remove_if(corpus.begin(), corpus.end(), [&](const CorpusCase& c) { return !o.ops.count(c.op); }),
                 corpus.end());
  }

  std::ofstream file;
  if (!o.output.empty()) file.open(o.output);
  std::ostream& out = o.output.empty() ? std::cout : file;
  JsonWriter w(out);
  w.BeginObject();
  w.Field("schema", "onnx_light.kernel_baseline/1");
  w.Key("metadata").BeginObject();
  w.Field("revision", o.revision).Field("build_config", o.build_config);
  w.Key("processor");
  WriteProcessor(w);
  w.Key("execution").BeginObject().Field("serial_threads", 1).Field("session_threads", threads);
  w.Field("affinity", "none").Field("spin_microseconds", policy.spin_microseconds).EndObject();
  w.Field("repetitions", o.repetitions).Field("min_time_ms", o.min_time_ms);
  w.EndObject();

  w.Key("missing").BeginArray();
  std::vector<std::pair<const CorpusCase*, std::string>> present;
  for (const auto& c : corpus) {
    auto def = KernelRegistry::Global().Find(c.domain, c.op, c.opset, DataType::kUndefined);
    if (def.ok()) {
      present.emplace_back(&c, (*def)->family);
    } else {
      w.BeginObject().Field("op", c.op).Field("reason", def.status().ToString()).EndObject();
    }
  }
  w.EndArray();

  int done = 0, total = 0;
  for (const auto& [c, family] : present) total += static_cast<int>(c->sizes.size());
  w.Key("cases").BeginArray();
  for (const auto& [c, family] : present) {
    for (const auto& size : c->sizes) {
      std::fprintf(stderr, "\r[%3d/%3d] %-20s %-10s %-9s", ++done, total, c->op.c_str(), size.label.c_str(), "serial");
      KernelRunner runner(c->op, c->opset, c->domain);
      size.setup(runner);
      CellResult serial = Measure(runner, 1, o);
      std::fprintf(stderr, "\r[%3d/%3d] %-20s %-10s %-9s", done, total, c->op.c_str(), size.label.c_str(), "parallel");
      CellResult parallel = Measure(runner, threads, o);
      const bool identical = serial.status.ok() && parallel.status.ok() && SameOutputs(serial.last, parallel.last);
      WriteCell(w, family, *c, size, "serial", 1, serial, true);
      WriteCell(w, family, *c, size, "parallel", threads, parallel, identical);
    }
  }
  w.EndArray();
  w.EndObject();
  out << "\n";
  std::fprintf(stderr, "\rkernel_baseline: %d cells in %zu cases measured%30s\n", 2 * total, present.size(), "");
  return 0;
}

}  // namespace
}  // namespace baseline
}  // namespace onnx_light

int main(int argc, char** argv) { return onnx_light::baseline::Main(argc, argv); }
