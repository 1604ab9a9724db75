#include "benchmarks/kernel_baseline/measure.h"

#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

namespace onnx_light {
namespace baseline {
namespace {

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t MinorFaults() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

bool SameTensor(const Tensor& x, const Tensor& y) {
  if (x.defined() != y.defined()) return false;
  if (!x.defined()) return true;
  if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
  if (x.dtype() == DataType::kString) {
    const std::string* a = x.data<std::string>();
    const std::string* b = y.data<std::string>();
    return std::equal(a, a + x.num_elements(), b);
  }
  return x.byte_size() == 0 || std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()) == 0;
}

bool SameValue(const Value& x, const Value& y) {
  if (x.kind() != y.kind()) return false;
  switch (x.kind()) {
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kTensor:
      return SameTensor(x.tensor(), y.tensor());
    case Value::Kind::kMap:
      return SameTensor(x.map_keys(), y.map_keys()) && SameTensor(x.map_values(), y.map_values());
    case Value::Kind::kSequence:
      return SameOutputs(x.items(), y.items());
  }
  return false;
}

// The outputs of the cell's first serial run, kept for the whole cell.
struct Reference {
  std::vector<Value> outputs;
  bool taken = false;
};

// Runs policy `p` once. Timed samples go to `cell` when `record`; the outputs are compared
// with the reference (taken from this run when it is the first serial one), then released
// before returning, so that no run's outputs are alive during the next one.
bool RunOnce(KernelRunner& runner, const Policy& p, bool serial, bool shared_allocator, Reference& reference,
             CellResult& cell, bool record) {
  runner.Source(p.source);
  const int64_t live = LiveHeapBytes();
  const int64_t faults0 = MinorFaults();
  const int64_t cpu0 = ProcessCpuNanos();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = runner.Run(p.threads);
  const auto t1 = std::chrono::steady_clock::now();
  const int64_t cpu1 = ProcessCpuNanos();
  const int64_t faults1 = MinorFaults();
  if (!r.ok()) {
    cell.status = r.status();
    return false;
  }
  KernelRunResult result = std::move(r).value();
  if (serial && !reference.taken) {
    reference.outputs = std::move(result.outputs);
    reference.taken = true;
  } else if (reference.taken && !cell.compared) {
    // Once per policy (its first run after the reference; the warm-up's when there is
    // one, outside the cell's time cap): comparing a large output every run would take
    // as long as the run itself, and the kernels are deterministic.
    cell.outputs_identical = SameOutputs(reference.outputs, result.outputs);
    cell.compared = true;
  }
  // Released now, not when the policy runs next: the outputs, then (with an allocator of
  // its own) what the run's allocator cached: its scratch; the reference's outputs keep
  // that allocator alive. The cell's shared allocator keeps its cache for the next run.
  result.outputs.clear();
  if (!shared_allocator) result.allocator->ReleaseCached();
  result.allocator.reset();
  if (!record) return true;
  cell.samples_ns.push_back(std::max<int64_t>(result.compute_ns, 1));
  cell.cpu_ns.push_back(cpu1 - cpu0);
  cell.wall_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  cell.live_bytes_before.push_back(live);
  cell.minor_faults.push_back(faults1 - faults0);
  cell.last = std::move(result);
  return true;
}

}  // namespace

int64_t LiveHeapBytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameValue(a[i], b[i])) return false;
  }
  return true;
}

Interleaved MeasureInterleaved(KernelRunner& runner, const std::vector<Policy>& policies, const MeasureOptions& o) {
  Interleaved m;
  const int count = static_cast<int>(policies.size());
  m.cells.resize(count);
  for (CellResult& c : m.cells) {
    // Sized up front: vectors growing between runs would change the state runs start from.
    for (auto* v : {&c.samples_ns, &c.cpu_ns, &c.wall_ns, &c.live_bytes_before, &c.minor_faults}) {
      v->reserve(o.max_blocks);
    }
    c.speedups.reserve(o.max_blocks);
  }
  // With a warm-up every run allocates from one allocator for the cell, warmed by it (see
  // measure.h); without, each run from a fresh one. Restored on every return.
  struct AllocatorScope {
    KernelRunner& runner;
    explicit AllocatorScope(KernelRunner& r, bool shared) : runner(r) {
      runner.SharedAllocator(shared ? std::make_shared<Allocator>() : nullptr);
    }
    ~AllocatorScope() { runner.SharedAllocator(nullptr); }
  } scope(runner, o.warmup);
  Reference reference;
  // Warm-up: one run of each (kernel code, executor threads, allocator), not recorded.
  for (int i = 0; i < count && o.warmup; ++i) {
    if (!RunOnce(runner, policies[i], i == 0, o.warmup, reference, m.cells[i], /*record=*/false)) {
      m.stopped_by = "error";
      return m;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    for (int i : BlockOrder(m.blocks, count)) {
      if (!RunOnce(runner, policies[i], i == 0, o.warmup, reference, m.cells[i], /*record=*/true)) {
        m.stopped_by = "error";
        return m;
      }
    }
    ++m.blocks;
    const double serial = static_cast<double>(m.cells[0].samples_ns.back());
    bool narrow = true;
    for (int i = 1; i < count; ++i) {
      CellResult& c = m.cells[i];
      c.speedups.push_back(serial / static_cast<double>(c.samples_ns.back()));
      c.speedup = MedianInterval(c.speedups);
      narrow = narrow && Narrow(c.speedup, o.ci_width);
    }
    if (m.blocks >= o.min_blocks && narrow) {
      m.decided = true;
      m.stopped_by = "interval";
      return m;
    }
    if (m.blocks >= o.max_blocks) {
      m.stopped_by = "max_blocks";
      return m;
    }
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    // The cap ends a cell only once it holds min_blocks blocks: fewer decide nothing in
    // the report (tools/onnx_light_dev/report.py, MIN_BLOCKS), so stopping earlier would
    // spend the blocks it took for no result.
    if (elapsed >= o.cell_time_cap_ms && m.blocks >= o.min_blocks) {
      m.stopped_by = "time_cap";
      return m;
    }
  }
}

}  // namespace baseline
}  // namespace onnx_light
