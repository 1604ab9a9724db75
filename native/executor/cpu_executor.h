// CpuExecutor: a session-scoped pool of worker threads that runs parallel regions, the
// calling thread taking part as participant 0. Kernels never see it directly: they call
// ParallelFor (parallel_for.h). Executors come from ExecutorRegistry, which shares one
// among sessions with the same policy.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "native/core/status.h"
#include "native/executor/cpu_execution_policy.h"
#include "native/executor/function_ref.h"

namespace onnx_light {

class CpuExecutor {
 public:
  // Starts EffectiveThreads() - 1 workers (none for a serial policy).
  static StatusOr<std::shared_ptr<CpuExecutor>> Create(const CpuExecutionPolicy& policy);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  const CpuExecutionPolicy& policy() const { return policy_; }
  // Participants available to a region, the caller included. In a process forked from
  // the one that created this executor its workers do not exist: 1 there (see Forked).
  int participants() const { return Forked() ? 1 : static_cast<int>(workers_.size()) + 1; }
  // True in a child forked after this executor was created (multiprocessing's fork start
  // method, pre-forking servers): the executor runs everything on the caller, never waits
  // for or wakes a worker, and its destructor leaves the parent's threads alone. The
  // registry hands such a child fresh executors.
  bool Forked() const;

  // Offers task(p) to participants p in [0, n), the caller running p = 0, and returns
  // once the caller's task has returned and every worker that joined has finished.
  // A worker that has not joined by the time the caller's task returns is released
  // without running: waiting for a thread the OS has not scheduled would stall the
  // caller, so the task must let any participant finish the others' work (ParallelFor's
  // blocks are claimed, not owned). Returns how many participants joined.
  //
  // Concurrent callers (a server calling Session::Run from several threads, or sessions
  // sharing this executor) each open their own region: up to kMaxConcurrentRegions at
  // once, and workers join whichever open region still wants participants. Callers count
  // against the policy's threads, so a region opened while C callers are inside Run asks
  // for at most participants() / C (its fair share, the caller included) and the pool is
  // never oversubscribed; with as many callers as threads each runs alone. n is clamped
  // to participants() and to that share. A call from inside a region, a share of one, or
  // no free region slot runs every task inline on the caller, in order.
  int Run(int n, FunctionRef<void(int)> task);

  // The same with a plain function and argument, which travel in the region's own cache
  // line: a worker reads one line from the caller's core to learn its work.
  using TaskFunction = void (*)(void* argument, int participant);
  int Run(int n, TaskFunction function, void* argument);

  // Wakes the workers parked between runs, so that they are spinning (for their spin
  // window) by the time the caller opens its first region instead of being woken by it:
  // a parked worker takes 15-40 us to join (issue 14: each run's first region at 2
  // threads), which then overlaps the run's set-up. Session::Run calls it first thing.
  // Costs one load when no worker is parked (back-to-back runs, concurrent callers); wakes
  // nobody when the calling thread's fair share (see Run) is one participant, in a forked
  // child or without workers. Returns whether it woke any. A woken worker that finds no
  // region spins its window (yielding, see SpinUntil) and parks again, exactly as after
  // a region: the price of a run that opens none.
  //
  //   executor->Prepare();         // at the start of a run
  //   ...                          // feeds checked, frame built: the worker wakes meanwhile
  //   executor->Run(n, task, arg); // the first region finds it spinning
  bool Prepare();

  // Regions the calling thread has opened with workers offered (not those Run ran inline),
  // on any executor, since the thread started: Session::Run compares it before and after a
  // run to learn whether the run wants workers at all.
  static int64_t RegionsOpenedOnThisThread();

  // Workers currently parked (not spinning, not in a region): diagnostics and tests.
  int ParkedWorkers() const { return parked_workers_.load(std::memory_order_seq_cst); }

  // Regions that may be open at once; further concurrent callers run inline.
  static constexpr int kMaxConcurrentRegions = 8;

  // Counts the current thread as a caller of `executor` for its lifetime (once per thread:
  // nested scopes count nothing), so that other callers' fair shares leave it its thread
  // even between its regions. Session::Run holds one for the whole run.
  class CallerScope {
   public:
    explicit CallerScope(CpuExecutor& executor);
    ~CallerScope();
    CallerScope(const CallerScope&) = delete;
    CallerScope& operator=(const CallerScope&) = delete;

   private:
    CpuExecutor* executor_;
  };

  // True on a thread that is currently executing a region's task (worker or caller).
  static bool InsideRegion();

  // Marks the current thread as inside a region for its lifetime; ParallelFor uses it when
  // it runs a region serially so that regions opened inside it are recorded as nested.
  class InlineRegionScope {
   public:
    InlineRegionScope();
    ~InlineRegionScope();
    InlineRegionScope(const InlineRegionScope&) = delete;
    InlineRegionScope& operator=(const InlineRegionScope&) = delete;
  };

 private:
  // One open region. admission packs, so that a worker reads them consistently in one
  // load: generation tag << 32 | kClosed | wanted workers << 16 | joined workers. A tag of
  // 0 means the slot is free.
  struct alignas(64) Region {
    std::atomic<uint64_t> admission{0};
    TaskFunction function = nullptr;
    void* argument = nullptr;
    std::atomic<int> finished{0};
  };

  explicit CpuExecutor(const CpuExecutionPolicy& policy);
  void WorkerLoop();
  // Joins the first open region (from `start` on) that wants another worker, runs its
  // task and returns true; false when no region wants one.
  bool JoinAnyRegion(int start);
  void WaitForWorkers(const Region& region, int expected);
  void RunInline(int n, TaskFunction function, void* argument);

  const CpuExecutionPolicy policy_;
  const uint64_t process_generation_;  // see Forked()
  std::vector<std::thread> workers_;

  // Bumped each time a region opens; idle workers watch it (spinning, then parked).
  alignas(64) std::atomic<uint64_t> dispatch_{0};
  // Callers inside Run (their fair share), region slots in use (bit i = regions_[i]) and
  // the source of generation tags.
  alignas(64) std::atomic<int> active_callers_{0};
  std::atomic<uint32_t> slots_in_use_{0};
  std::atomic<uint32_t> next_generation_{0};
  Region regions_[kMaxConcurrentRegions];
  std::atomic<bool> stop_{false};

  // Parking for workers past their spin window, and for callers waiting on workers. On
  // the heap so that a forked child can leave it undestroyed: the parent's parked workers
  // are waiters that glibc's condition variable would wait for forever.
  struct Parking {
    std::mutex mutex;
    std::condition_variable worker_cv;
    std::condition_variable caller_cv;
  };
  std::unique_ptr<Parking> parking_ = std::make_unique<Parking>();
  std::atomic<int> parked_workers_{0};
  std::atomic<int> parked_callers_{0};
};

// Process registry of executors keyed by policy. Sessions with compatible policies share
// one; it is destroyed (threads joined) when the last session releases it.
class ExecutorRegistry {
 public:
  static ExecutorRegistry& Global();
  StatusOr<std::shared_ptr<CpuExecutor>> Acquire(const CpuExecutionPolicy& policy);
  // Executors currently alive (for tests and diagnostics).
  int LiveExecutors();

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::weak_ptr<CpuExecutor>>> executors_;
};

}  // namespace onnx_light
