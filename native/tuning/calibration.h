// The bounded calibration harness (DESIGN.md, tuning contract): it keeps a time, memory
// and thread budget and accounts it itself; validates every candidate's output against
// the reference (serial) result before any of its timings count; repeats and takes the
// median, keeping the raw samples; and keeps the portable default unless a candidate
// wins by a stated margin on consecutive sizes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/value.h"
#include "native/tuning/schema.h"

namespace onnx_light {

struct CalibrationBudget {
  int64_t time_ns = int64_t{2'000'000'000};   // wall time spent running candidates
  int64_t memory_bytes = int64_t{256} << 20;  // inputs and outputs alive at once
  int threads = 2;                            // participants a parallel candidate may use
  Status Validate() const;
};

// What the harness has spent; it decides before each run whether the run still fits.
class BudgetAccount {
 public:
  using Clock = std::function<int64_t()>;  // nanoseconds, monotonic
  explicit BudgetAccount(CalibrationBudget budget, Clock clock = nullptr);

  const CalibrationBudget& budget() const { return budget_; }
  int64_t Now() const { return clock_(); }
  // True when spending `estimated_ns` more stays within the time budget.
  bool CanAfford(int64_t estimated_ns) const { return spent_ns_ + estimated_ns <= budget_.time_ns; }
  // Records a finished run of `size` work units that took `ns`.
  void ChargeRun(int64_t ns, int64_t size);
  // Harness work between runs (comparing outputs) that the budget also pays for.
  void ChargeOverhead(int64_t ns) { spent_ns_ += ns; }
  // Expected time of a run of `size` units: the last run scaled linearly (0 before any).
  int64_t EstimateRun(int64_t size) const;
  // ResourceExhausted (and nothing reserved) when `bytes` more would exceed the budget.
  Status ReserveMemory(int64_t bytes);
  void ReleaseMemory(int64_t bytes) { reserved_bytes_ -= bytes; }
  void NoteThreads(int participants);

  int64_t spent_ns() const { return spent_ns_; }
  int64_t runs() const { return runs_; }
  int64_t reserved_bytes() const { return reserved_bytes_; }
  int64_t peak_memory_bytes() const { return peak_bytes_; }
  int max_threads_used() const { return max_threads_; }

 private:
  CalibrationBudget budget_;
  Clock clock_;
  int64_t spent_ns_ = 0, runs_ = 0, reserved_bytes_ = 0, peak_bytes_ = 0;
  int64_t last_run_ns_ = 0, last_run_size_ = 0;
  int max_threads_ = 0;
};

// One candidate run at a problem size: its outputs and the time of the measured work.
struct CandidateRun {
  // Whatever the outputs' memory depends on (their allocator); declared first so that it
  // is destroyed after them.
  std::shared_ptr<void> keep_alive;
  std::vector<Value> outputs;
  int64_t compute_ns = 0;
};
using CandidateFn = std::function<StatusOr<CandidateRun>(int64_t size)>;

struct Candidate {
  std::string name;
  CandidateFn run;
};

struct HarnessOptions {
  int repetitions = 5;   // timed runs per candidate and size (the median is used)
  double margin = 0.10;  // a candidate wins when reference / candidate >= 1 + margin
};

// Bitwise equality of outputs (dtype, shape, bytes; strings by content).
bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b, std::string* why);

struct SizeMeasurement {
  int64_t size = 0;
  std::string reference;
  // Per candidate name (the reference included): raw samples in run order, and median.
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> samples_ns;
  std::vector<int64_t> median_ns;
  std::vector<std::string> rejected;  // "name: reason": output differed or run failed

  // Index of `name` in names, -1 when absent or rejected.
  int Find(const std::string& name) const;
  // reference median / candidate median >= 1 + margin.
  bool Wins(const std::string& name, double margin) const;
};

int64_t Median(std::vector<int64_t> samples);

// Validates then times `candidates` against `reference` at one size; the reference and
// the surviving candidates are timed in interleaved rounds. Stops early (returns what it
// has, with `*out_of_budget` set) when the next run's estimated time would exceed the
// budget. Errors of the reference are returned; a candidate's error rejects it.
StatusOr<SizeMeasurement> MeasureAtSize(int64_t size, const Candidate& reference,
                                        const std::vector<Candidate>& candidates, const HarnessOptions& options,
                                        BudgetAccount& account, bool* out_of_budget);

// The crossover search that elementwise-style kernels use for parallel.minimum_elements:
// geometric sizes; serial = the threshold at its maximum, parallel = the threshold at 1;
// the crossover is the first size from which parallel wins by the margin on two
// consecutive sizes.
struct CrossoverOptions {
  HarnessOptions harness;
  int64_t min_size = int64_t{1} << 10;
  int64_t max_size = int64_t{1} << 24;
  int64_t growth = 2;             // size ratio between consecutive sizes
  int64_t bytes_per_element = 0;  // memory alive per element at once (budget check)
  // Re-measure the two winning sizes with fresh samples before accepting a crossover, so
  // that one noisy pair (a busy machine) does not move a threshold.
  bool confirm = true;
};

struct CrossoverResult {
  std::vector<SizeMeasurement> sizes;
  std::vector<SizeMeasurement> confirmations;  // the re-measurements, in order
  std::optional<int64_t> crossover;
  std::vector<std::string> rejected;  // candidates rejected at some size, with reasons
  std::string stop_reason;            // why the search ended
};

StatusOr<CrossoverResult> FindParallelCrossover(const CandidateFn& serial, const CandidateFn& parallel,
                                                const CrossoverOptions& options, BudgetAccount& account);

// The value to keep for a minimum-elements threshold. The portable default stays unless
// the crossover's choice beats the default's choice by the margin on two consecutive
// measured sizes where the two disagree (serial vs parallel), and no parallel candidate
// was rejected.
struct ThresholdDecision {
  int64_t value = 0;
  bool changed = false;
  std::string reason;
};
// `unit` names what a size counts in the reasons ("elements", "work units").
ThresholdDecision DecideThreshold(const CrossoverResult& result, int64_t portable_default, double margin,
                                  const char* unit = "elements");

}  // namespace onnx_light
