#include "native/tuning/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace onnx_light {

Status CalibrationBudget::Validate() const {
  if (time_ns <= 0) return InvalidArgument("calibration budget: time must be positive, got ", time_ns, " ns");
  if (memory_bytes <= 0)
    return InvalidArgument("calibration budget: memory must be positive, got ", memory_bytes, " bytes");
  if (threads < 1) return InvalidArgument("calibration budget: threads must be >= 1, got ", threads);
  return Status::Ok();
}

namespace {
int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

BudgetAccount::BudgetAccount(CalibrationBudget budget, Clock clock)
    : budget_(budget), clock_(clock ? std::move(clock) : Clock(SteadyNowNs)) {}

void BudgetAccount::ChargeRun(int64_t ns, int64_t size) {
  spent_ns_ += ns;
  ++runs_;
  last_run_ns_ = ns;
  last_run_size_ = size;
}

int64_t BudgetAccount::EstimateRun(int64_t size) const {
  if (last_run_size_ <= 0 || size <= last_run_size_) return last_run_ns_;
  return static_cast<int64_t>(static_cast<double>(last_run_ns_) * size / last_run_size_);
}

Status BudgetAccount::ReserveMemory(int64_t bytes) {
  if (reserved_bytes_ + bytes > budget_.memory_bytes) {
    return ResourceExhausted("calibration memory budget: ", bytes, " more bytes would exceed ", budget_.memory_bytes,
                             " (", reserved_bytes_, " reserved)");
  }
  reserved_bytes_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, reserved_bytes_);
  return Status::Ok();
}

void BudgetAccount::NoteThreads(int participants) { max_threads_ = std::max(max_threads_, participants); }

bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (a.size() != b.size()) return fail(StrCat(a.size(), " outputs vs ", b.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind() != b[i].kind()) return fail(StrCat("output ", i, ": kind differs"));
    if (!a[i].is_tensor()) continue;
    const Tensor& x = a[i].tensor();
    const Tensor& y = b[i].tensor();
    if (x.dtype() != y.dtype() || !(x.shape() == y.shape())) {
      return fail(StrCat("output ", i, ": ", x.TypeAndShape(), " vs ", y.TypeAndShape()));
    }
    if (x.dtype() == DataType::kString) {
      for (int64_t k = 0; k < x.num_elements(); ++k) {
        if (x.data<std::string>()[k] != y.data<std::string>()[k])
          return fail(StrCat("output ", i, ": element ", k, " differs"));
      }
      continue;
    }
    const auto* p = static_cast<const unsigned char*>(x.raw_data());
    const auto* q = static_cast<const unsigned char*>(y.raw_data());
    const size_t bytes = x.byte_size();
    if (std::memcmp(p, q, bytes) != 0) {
      const size_t first = std::mismatch(p, p + bytes, q).first - p;
      return fail(StrCat("output ", i, ": differs from the reference at element ", first / ElementSize(x.dtype())));
    }
  }
  return true;
}

int64_t Median(std::vector<int64_t> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

int SizeMeasurement::Find(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

bool SizeMeasurement::Wins(const std::string& name, double margin) const {
  const int ref = Find(reference), c = Find(name);
  if (ref < 0 || c < 0 || median_ns[c] <= 0) return false;
  return static_cast<double>(median_ns[ref]) >= (1.0 + margin) * static_cast<double>(median_ns[c]);
}

namespace {

// Runs one candidate if the account can afford it; charges the wall time it took by the
// account's clock (setup included), whatever the candidate reports as compute time.
StatusOr<std::optional<CandidateRun>> RunCharged(const Candidate& c, int64_t size, BudgetAccount& account) {
  if (!account.CanAfford(account.EstimateRun(size))) return std::optional<CandidateRun>();
  const int64_t start = account.Now();
  StatusOr<CandidateRun> run = c.run(size);
  account.ChargeRun(account.Now() - start, size);
  if (!run.ok()) return run.status();
  return std::optional<CandidateRun>(std::move(run).value());
}

}  // namespace

StatusOr<SizeMeasurement> MeasureAtSize(int64_t size, const Candidate& reference,
                                        const std::vector<Candidate>& candidates, const HarnessOptions& options,
                                        BudgetAccount& account, bool* out_of_budget) {
  *out_of_budget = false;
  SizeMeasurement m;
  m.size = size;
  m.reference = reference.name;

  // Validation: the reference's output, then each candidate's, before any timing counts.
  OL_ASSIGN_OR_RETURN(std::optional<CandidateRun> expected, RunCharged(reference, size, account));
  if (!expected) {
    *out_of_budget = true;
    return m;
  }
  std::vector<const Candidate*> timed = {&reference};
  for (const Candidate& c : candidates) {
    StatusOr<std::optional<CandidateRun>> run = RunCharged(c, size, account);
    if (run.ok() && !*run) {
      *out_of_budget = true;
      return m;
    }
    std::string why;
    const int64_t compare_start = account.Now();
    const bool same = run.ok() && SameOutputs(expected->outputs, (*run)->outputs, &why);
    account.ChargeOverhead(account.Now() - compare_start);
    if (!run.ok()) {
      m.rejected.push_back(StrCat(c.name, ": failed: ", run.status().message()));
    } else if (!same) {
      m.rejected.push_back(StrCat(c.name, ": output differs from ", reference.name, " at size ", size, " (", why, ")"));
    } else {
      timed.push_back(&c);
    }
  }
  expected.reset();

  for (const Candidate* c : timed) m.names.push_back(c->name);
  m.samples_ns.resize(timed.size());
  for (int round = 0; round < options.repetitions; ++round) {
    for (size_t i = 0; i < timed.size(); ++i) {
      OL_ASSIGN_OR_RETURN(std::optional<CandidateRun> run, RunCharged(*timed[i], size, account));
      if (!run) {
        *out_of_budget = true;
        break;
      }
      m.samples_ns[i].push_back(run->compute_ns);
    }
    if (*out_of_budget) break;
  }
  for (const auto& s : m.samples_ns) m.median_ns.push_back(Median(s));
  return m;
}

namespace {

// One size measured within the memory budget; nullopt (with `stop` set) when the budget
// ends the search.
StatusOr<std::optional<SizeMeasurement>> MeasureWithinBudget(int64_t size, const Candidate& reference,
                                                             const std::vector<Candidate>& candidates,
                                                             const CrossoverOptions& options, BudgetAccount& account,
                                                             std::string* stop) {
  const int64_t bytes = options.bytes_per_element * size;
  if (!account.ReserveMemory(bytes).ok()) {
    *stop = StrCat("memory budget: size ", size, " needs ", bytes, " bytes");
    return std::optional<SizeMeasurement>();
  }
  bool out_of_budget = false;
  StatusOr<SizeMeasurement> m = MeasureAtSize(size, reference, candidates, options.harness, account, &out_of_budget);
  account.ReleaseMemory(bytes);
  if (!m.ok()) return m.status();
  if (out_of_budget) {
    *stop = StrCat("time budget: stopped at size ", size);
    return std::optional<SizeMeasurement>();
  }
  return std::optional<SizeMeasurement>(std::move(m).value());
}

}  // namespace

StatusOr<CrossoverResult> FindParallelCrossover(const CandidateFn& serial, const CandidateFn& parallel,
                                                const CrossoverOptions& options, BudgetAccount& account) {
  if (options.min_size < 1 || options.max_size < options.min_size || options.growth < 2) {
    return InvalidArgument("crossover search: need 1 <= min_size <= max_size and growth >= 2, got [", options.min_size,
                           ", ", options.max_size, "] x", options.growth);
  }
  const Candidate reference{"serial", serial};
  const std::vector<Candidate> candidates = {{"parallel", parallel}};
  const double margin = options.harness.margin;
  CrossoverResult result;
  std::vector<bool> wins;
  for (int64_t size = options.min_size; size <= options.max_size; size *= options.growth) {
    OL_ASSIGN_OR_RETURN(std::optional<SizeMeasurement> m,
                        MeasureWithinBudget(size, reference, candidates, options, account, &result.stop_reason));
    if (!m) return result;
    for (const auto& r : m->rejected) result.rejected.push_back(r);
    wins.push_back(m->Wins("parallel", margin));
    result.sizes.push_back(std::move(*m));
    if (!result.rejected.empty()) {
      result.stop_reason = "the parallel candidate was rejected (output differs from serial)";
      return result;
    }
    const size_t n = wins.size();
    if (n >= 2 && wins[n - 2] && wins[n - 1]) {
      bool confirmed = true;
      for (size_t i = n - 2; options.confirm && i < n; ++i) {
        OL_ASSIGN_OR_RETURN(
            std::optional<SizeMeasurement> again,
            MeasureWithinBudget(result.sizes[i].size, reference, candidates, options, account, &result.stop_reason));
        if (!again) return result;
        const bool still_wins = again->Wins("parallel", margin) && again->rejected.empty();
        for (const auto& r : again->rejected) result.rejected.push_back(r);
        result.confirmations.push_back(std::move(*again));
        wins[i] = still_wins;
        confirmed = confirmed && still_wins;
      }
      if (!result.rejected.empty()) {
        result.stop_reason = "the parallel candidate was rejected (output differs from serial)";
        return result;
      }
      if (confirmed) {
        result.crossover = result.sizes[n - 2].size;
        result.stop_reason = options.confirm ? "crossover found and confirmed" : "crossover found";
        return result;
      }
    }
    if (size > options.max_size / options.growth) break;
  }
  result.stop_reason = StrCat("largest size ", options.max_size, " reached");
  return result;
}

ThresholdDecision DecideThreshold(const CrossoverResult& result, int64_t portable_default, double margin,
                                  const char* unit) {
  ThresholdDecision d{portable_default, false, ""};
  const int margin_pct = static_cast<int>(margin * 100 + 0.5);
  if (!result.rejected.empty()) {
    d.reason = "kept the portable default: a candidate was rejected (" + result.rejected.front() + ")";
    return d;
  }
  if (!result.crossover) {
    d.reason = StrCat("kept the portable default: parallel did not win by ", margin_pct, "% on two consecutive sizes (",
                      result.stop_reason, ")");
    return d;
  }
  const int64_t c = *result.crossover;
  if (c == portable_default) {
    d.reason = "the crossover equals the portable default";
    return d;
  }
  // Sizes where the default and the crossover choose differently; the new value must win
  // there by the margin on two consecutive measured sizes.
  const int64_t lo = std::min(c, portable_default), hi = std::max(c, portable_default);
  int consecutive = 0;
  for (const SizeMeasurement& m : result.sizes) {
    if (m.size < lo || m.size >= hi) continue;
    const int s = m.Find("serial"), p = m.Find("parallel");
    if (s < 0 || p < 0) continue;
    const bool new_is_parallel = m.size >= c;
    const double new_ns = static_cast<double>(m.median_ns[new_is_parallel ? p : s]);
    const double old_ns = static_cast<double>(m.median_ns[new_is_parallel ? s : p]);
    consecutive = old_ns >= (1.0 + margin) * new_ns ? consecutive + 1 : 0;
    if (consecutive >= 2) {
      d.value = c;
      d.changed = true;
      d.reason = StrCat("crossover at ", c, " ", unit, ": between ", lo, " and ", hi, " it beats the default ",
                        portable_default, " by >= ", margin_pct, "% on consecutive sizes");
      return d;
    }
  }
  d.reason = StrCat("kept the portable default: the crossover ", c, " does not beat it by ", margin_pct,
                    "% on two consecutive measured sizes between ", lo, " and ", hi);
  return d;
}

}  // namespace onnx_light
