// One cell of kernel_baseline: its policies timed interleaved (the rule is in
// interleave.h) on one KernelRunner.
//
// Identical work must measure identical, so every timed run starts from the same state,
// whichever policy it belongs to and wherever it falls in the rotation:
// - no run's outputs outlive it: they are released before the next run starts (a
//   policy's first run's outputs are first compared with the serial reference: bitwise,
//   strings by value, sequences and maps item by item). Were
//   each policy to keep its last outputs, as the harness once did, the first blocks would
//   grow the live set by one output per policy, and the runs that follow an allocation
//   rather than a release (never the serial one, which leads block 0 right after the
//   warm-up) would pay fresh pages: CategoryMapper large measured 44 ms serial and
//   311-420 ms in those positions, LabelEncoder large 0.75x with no region opened;
// - the serial reference is the first serial run's outputs (the warm-up's when there is
//   one) and stays alive for the whole cell, so it is part of every timed run's state;
// - with a warm-up, every run of the cell allocates from one allocator, which the warm-up
//   fills: a run's outputs and scratch go back to its cache and the next run, whatever its
//   policy, takes the same blocks, already mapped, as a session's runs do after the first.
//   With an allocator per run (the harness before), every run mapped its large blocks
//   afresh and paid their first-touch page faults inside the timed Compute (a 32 MiB
//   output: 18 huge-page faults in every arm, a share of the time that differs between
//   arms because the zeroing runs in whichever thread touches a page first, and ZipMap
//   large took 0, 2048 or 4129 faults from one run to the next). Without
//   a warm-up (the qemu correctness run, whose times decide nothing) every run keeps a
//   fresh allocator, so no run starts warmer than another.
// Each run records the heap bytes in use when it started (live_bytes_before) and the
// minor page faults it took: the test asserts the first is the same for every policy and
// that warmed runs take no fresh pages, and the report can show the second next to the
// times.
//
//   std::vector<Policy> policies = {{"serial", 1, nullptr}, {"parallel", 2, nullptr}};
//   Interleaved m = MeasureInterleaved(runner, policies, {/*min_blocks=*/6, ...});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/kernel_baseline/interleave.h"
#include "native/registry/kernel_runner.h"

namespace onnx_light {
namespace baseline {

// One policy of a cell: how it runs.
struct Policy {
  const char* name;
  int threads;
  const TuningSource* source;  // null: portable defaults
};

struct MeasureOptions {
  int min_blocks = 6;
  int max_blocks = 200;
  double ci_width = 0.04;
  int64_t cell_time_cap_ms = 1000;  // ends a cell once it also holds min_blocks blocks
  bool warmup = true;  // one unrecorded run of each policy first
};

struct CellResult {
  std::vector<int64_t> samples_ns;         // Compute wall time per block
  std::vector<int64_t> cpu_ns;             // process CPU time per block's run
  std::vector<int64_t> wall_ns;            // wall time of the whole run (incl. kernel creation)
  std::vector<int64_t> live_bytes_before;  // heap bytes in use when the run started
  std::vector<int64_t> minor_faults;       // minor page faults the process took during the run
  std::vector<double> speedups;            // per block: serial / this policy (non-serial policies)
  MedianEstimate speedup;
  KernelRunResult last;           // the last run's events and accounting; its outputs are released
  bool outputs_identical = true;  // its outputs equal the serial reference
  bool compared = false;          // whether they were compared (once per policy; serial: a later run)
  Status status;
};

struct Interleaved {
  std::vector<CellResult> cells;  // one per policy, policy 0 = serial
  int blocks = 0;
  bool decided = false;    // every non-serial speed-up interval narrow
  std::string stopped_by;  // "interval", "time_cap", "max_blocks", "error"
};

// Runs the cell by the rule of interleave.h. Policy 0 must be the serial one.
Interleaved MeasureInterleaved(KernelRunner& runner, const std::vector<Policy>& policies, const MeasureOptions& o);

// Whether two runs' outputs are equal: same kinds, types and shapes, bitwise equal
// numeric data, equal strings; sequences and maps item by item.
bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b);

// Bytes the process's main malloc arena and its mmapped chunks hold in use now.
int64_t LiveHeapBytes();

}  // namespace baseline
}  // namespace onnx_light
