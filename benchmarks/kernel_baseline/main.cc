// kernel_baseline (native part): runs the corpus under the serial policy, the session
// thread count and (with --calibrated) a calibrated profile, interleaved block by block
// (the rule is in interleave.h; every run starts from the same state, measure.h), and
// writes one JSON document with every raw sample (with the live heap each run started
// from and the minor page faults it took) and the per-block speed-ups. The Python tools //tools:kernel_baseline and
// //tools:kernel_report drive it; this binary is also what runs on aarch64 under qemu.
//
//   kernel_baseline_native --threads=0 --min_blocks=6 --max_blocks=200 --ci_width=0.04
//                          --cell_time_cap_ms=1000 [--deadline_ms=0] [--smallest]
//                          [--ops=Add,MatMul] [--calibrated=values.tsv] [--list] [--nowarmup] [--by_size]
//                          [--revision=...] [--build_config=...] [--output=path]
//
// --calibrated: lines "schema_key<TAB>parameter<TAB>i|d|b|s<TAB>value" (what
// onnx_light.kernel_tuning resolves from the machine's profile document).
// --list: the cells the corpus holds (no kernel runs), for estimates and coverage tests.
// --deadline_ms: cells not started by then are written as skipped (never as measured).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "benchmarks/kernel_baseline/corpus.h"
#include "benchmarks/kernel_baseline/interleave.h"
#include "benchmarks/kernel_baseline/json_writer.h"
#include "benchmarks/kernel_baseline/measure.h"
#include "native/core/cpu_features.h"
#include "native/tuning/processor.h"
#include "native/tuning/table_tuning_source.h"

namespace onnx_light {
namespace baseline {
namespace {

struct Options {
  int threads = 0;
  int min_blocks = 6;           // blocks per cell at least (6: the fewest with a 95% interval)
  int max_blocks = 200;         // and at most
  double ci_width = 0.04;       // decided when high / low of the speed-up interval <= 1 + this
  int64_t cell_time_cap_ms = 1000;  // a cell stops (undecided) after this much sampling
  int64_t deadline_ms = 0;      // 0: none; else cells not started by then are skipped
  bool warmup = true;           // one unrecorded run of each policy first (off: qemu checks)
  bool by_size = false;         // all small cells first, then crossover, then large
  bool smallest = false;
  bool list = false;
  std::set<std::string> ops;
  std::string calibrated;  // values file (see the top of this file)
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
    else if (ParseFlag(argv[i], "--min_blocks", &v)) o.min_blocks = std::max(1, std::atoi(v.c_str()));
    else if (ParseFlag(argv[i], "--max_blocks", &v)) o.max_blocks = std::max(1, std::atoi(v.c_str()));
    else if (ParseFlag(argv[i], "--ci_width", &v)) o.ci_width = std::atof(v.c_str());
    else if (ParseFlag(argv[i], "--cell_time_cap_ms", &v)) o.cell_time_cap_ms = std::atoll(v.c_str());
    else if (ParseFlag(argv[i], "--deadline_ms", &v)) o.deadline_ms = std::atoll(v.c_str());
    else if (ParseFlag(argv[i], "--calibrated", &v)) o.calibrated = v;
    else if (ParseFlag(argv[i], "--revision", &v)) o.revision = v;
    else if (ParseFlag(argv[i], "--build_config", &v)) o.build_config = v;
    else if (ParseFlag(argv[i], "--output", &v)) o.output = v;
    else if (ParseFlag(argv[i], "--ops", &v)) {
      std::stringstream ss(v);
      std::string op;
      while (std::getline(ss, op, ',')) o.ops.insert(op);
    } else if (std::strcmp(argv[i], "--smallest") == 0) o.smallest = true;
    else if (std::strcmp(argv[i], "--list") == 0) o.list = true;
    else if (std::strcmp(argv[i], "--nowarmup") == 0) o.warmup = false;
    else if (std::strcmp(argv[i], "--by_size") == 0) o.by_size = true;
    else {
      std::fprintf(stderr, "kernel_baseline_native: unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  o.max_blocks = std::max(o.max_blocks, 1);
  o.min_blocks = std::min(o.min_blocks, o.max_blocks);
  return o;
}

// Reads the --calibrated values file into a table (as an explicit profile).
StatusOr<std::unique_ptr<TableTuningSource>> ReadCalibrated(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("kernel_baseline: cannot read calibrated values ", path);
  auto table = std::make_unique<TableTuningSource>();
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) f.push_back(field);
    if (f.size() != 4 || f[2].size() != 1) {
      return InvalidArgument("kernel_baseline: ", path, ":", number, ": expected key, parameter, kind, value");
    }
    ParamValue value;
    switch (f[2][0]) {
      case 'i': value = static_cast<int64_t>(std::atoll(f[3].c_str())); break;
      case 'd': value = std::atof(f[3].c_str()); break;
      case 'b': value = f[3] == "true"; break;
      case 's': value = f[3]; break;
      default: return InvalidArgument("kernel_baseline: ", path, ":", number, ": unknown kind ", f[2]);
    }
    OL_RETURN_IF_ERROR(table->Add(f[0], f[1], value, ValueSource::kExplicitProfile)
                           .WithContext(path + ":" + std::to_string(number) + ": "));
  }
  return table;
}

int64_t MedianOf(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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

void WriteCaseFields(JsonWriter& w, const std::string& family, const CorpusCase& c, const CorpusSize& size) {
  w.Field("family", family).Field("op", c.op).Field("domain", c.domain.empty() ? "ai.onnx" : c.domain);
  w.Field("opset", c.opset).Field("element_type", c.element_type).Field("size", size.label);
  w.Field("work_units", size.work_units).Field("shapes", size.shapes);
}

void WriteCell(JsonWriter& w, const std::string& family, const CorpusCase& c, const CorpusSize& size,
               const Policy& policy, const Interleaved& m, const CellResult& cell, bool outputs_identical) {
  w.BeginObject();
  WriteCaseFields(w, family, c, size);
  w.Field("policy", policy.name).Field("threads", policy.threads);
  if (!cell.status.ok()) {
    w.Field("error", cell.status.ToString()).EndObject();
    return;
  }
  w.Field("blocks", m.blocks).Field("stopped_by", m.stopped_by).Field("decided", m.decided);
  w.Key("samples_ns").Array(cell.samples_ns).Field("median_ns", MedianOf(cell.samples_ns));
  if (policy.threads > 1) {
    w.Key("speedups_vs_serial").BeginArray();
    for (double r : cell.speedups) w.Value(r);
    w.EndArray();
    w.Key("speedup").BeginObject().Field("median", cell.speedup.median).Field("low", cell.speedup.low);
    w.Field("high", cell.speedup.high).Field("exact", cell.speedup.exact).EndObject();
  }
  w.Key("cpu_ns").Array(cell.cpu_ns).Key("run_wall_ns").Array(cell.wall_ns);
  w.Key("live_bytes_before").Array(cell.live_bytes_before).Key("minor_faults").Array(cell.minor_faults);
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
  const auto program_start = std::chrono::steady_clock::now();
  CpuExecutionPolicy policy;
  policy.num_threads = o.threads;
  if (Status s = policy.Validate(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  const int threads = policy.EffectiveThreads();
  std::unique_ptr<TableTuningSource> calibrated;
  if (!o.calibrated.empty()) {
    auto table = ReadCalibrated(o.calibrated);
    if (!table.ok()) {
      std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
      return 2;
    }
    calibrated = std::move(table).value();
  }
  std::vector<Policy> policies = {{"serial", 1, nullptr}, {"parallel", threads, nullptr}};
  const MeasureOptions measure{o.min_blocks, o.max_blocks, o.ci_width, o.cell_time_cap_ms, o.warmup};
  if (calibrated) policies.push_back({"calibrated", threads, calibrated.get()});

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
  w.Field("schema", "onnx_light.kernel_baseline/2");
  w.Key("metadata").BeginObject();
  w.Field("revision", o.revision).Field("build_config", o.build_config);
  w.Key("processor");
  WriteProcessor(w);
  w.Field("isa_selected", IsaName(MaxIsa()));
  w.Key("execution").BeginObject().Field("serial_threads", 1).Field("session_threads", threads);
  w.Field("affinity", "none").Field("spin_microseconds", policy.spin_microseconds).EndObject();
  w.Key("measurement").BeginObject().Field(
      "method", "interleaved blocks (interleave.h); each run's outputs released before the next (measure.h)");
  w.Field("min_blocks", o.min_blocks).Field("max_blocks", o.max_blocks).Field("ci_width", o.ci_width);
  w.Field("cell_time_cap_ms", o.cell_time_cap_ms).Field("deadline_ms", o.deadline_ms).Field("warmup", o.warmup);
  w.Field("calibrated", !o.calibrated.empty()).EndObject();
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

  int done = 0, total = 0, skipped = 0;
  for (const auto& [c, family] : present) total += static_cast<int>(c->sizes.size());
  w.Key("cases").BeginArray();
  // Cells in corpus order, or (--by_size) every case's small size first, then crossover,
  // then large: a deadline then leaves the largest sizes out, not whole ops.
  struct CellRef {
    const CorpusCase* c;
    const std::string* family;
    size_t size;
  };
  std::vector<CellRef> order;
  for (const auto& [c, family] : present) {
    for (size_t i = 0; i < c->sizes.size(); ++i) order.push_back({c, &family, i});
  }
  if (o.by_size) {
    std::stable_sort(order.begin(), order.end(), [](const CellRef& a, const CellRef& b) { return a.size < b.size; });
  }
  for (const CellRef& ref : order) {
    const CorpusCase* c = ref.c;
    const std::string& family = *ref.family;
    const CorpusSize& size = c->sizes[ref.size];
    {
      ++done;
      if (o.list) {
        w.BeginObject();
        WriteCaseFields(w, family, *c, size);
        w.EndObject();
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (o.deadline_ms > 0 &&
          std::chrono::duration_cast<std::chrono::milliseconds>(now - program_start).count() >= o.deadline_ms) {
        ++skipped;
        for (const Policy& p : policies) {
          w.BeginObject();
          WriteCaseFields(w, family, *c, size);
          w.Field("policy", p.name).Field("threads", p.threads).Field("skipped", "time budget spent").EndObject();
        }
        continue;
      }
      std::fprintf(stderr, "\r[%3d/%3d] %-24s %-8s %-10s", done, total, c->op.c_str(), c->element_type.c_str(),
                   size.label.c_str());
      KernelRunner runner(c->op, c->opset, c->domain);
      size.setup(runner);
      const Interleaved m = MeasureInterleaved(runner, policies, measure);
      for (size_t i = 0; i < policies.size(); ++i) {
        const bool identical =
            i == 0 || (m.cells[0].status.ok() && m.cells[i].status.ok() && m.cells[i].compared &&
                       m.cells[i].outputs_identical);
        // A cell that failed before its own policy ran reports the first error.
        CellResult cell = m.cells[i];
        if (cell.status.ok() && m.stopped_by == "error") {
          for (const auto& other : m.cells) {
            if (!other.status.ok()) cell.status = other.status;
          }
        }
        WriteCell(w, family, *c, size, policies[i], m, cell, identical);
      }
    }
  }
  w.EndArray();
  w.EndObject();
  out << "\n";
  std::fprintf(stderr, "\rkernel_baseline: %d cells in %zu cases %s%s%30s\n", total, present.size(),
               o.list ? "listed" : "measured", skipped ? (", " + std::to_string(skipped) + " skipped").c_str() : "",
               "");
  return 0;
}

}  // namespace
}  // namespace baseline
}  // namespace onnx_light

int main(int argc, char** argv) { return onnx_light::baseline::Main(argc, argv); }
