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
  // Participants available to a region, the caller included.
  int participants() const { return static_cast<int>(workers_.size()) + 1; }

  // Offers task(p) to participants p in [0, n), the caller running p = 0, and returns
  // once the caller's task has returned and every worker that joined has finished.
  // A worker that has not joined by the time the caller's task returns is released
  // without running: waiting for a thread the OS has not scheduled would stall the
  // caller, so the task must let any participant finish the others' work (ParallelFor's
  // blocks are claimed, not owned). n is clamped to participants(). If another thread is
  // already running a region on this executor, or the caller is inside a region, every
  // task runs inline on the caller in order. Returns how many participants joined.
  int Run(int n, FunctionRef<void(int)> task);

  // The same with a plain function and argument, which travel in the dispatch cache line
  // itself: a worker then reads one line from the caller's core to learn its work.
  using TaskFunction = void (*)(void* argument, int participant);
  int Run(int n, TaskFunction function, void* argument);

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
  explicit CpuExecutor(const CpuExecutionPolicy& policy);
  void WorkerLoop(int index);
  void WaitForWorkers(int expected);
  // Admits the calling worker to region `generation` unless the caller has closed it.
  bool Join(uint64_t generation);

  const CpuExecutionPolicy policy_;
  std::vector<std::thread> workers_;

  // Dispatch word: generation << 16 | participants. One atomic so a worker reads both
  // consistently even if it wakes late.
  // Written by the caller, read by spinning workers; finished_ is written by workers and
  // read by the spinning caller: separate cache lines so they do not ping-pong together.
  alignas(64) std::atomic<uint64_t> dispatch_{0};
  TaskFunction task_function_ = nullptr;
  void* task_argument_ = nullptr;
  // Admission of workers to the current region: generation << 32 | kClosed | joined.
  alignas(64) std::atomic<uint64_t> admission_{0};
  std::atomic<int> finished_{0};
  alignas(64) char padding_after_finished_[1] = {};
  std::atomic<bool> stop_{false};

  std::mutex region_mutex_;  // one region at a time; contenders run inline instead

  // Parking for workers past their spin window, and for the caller waiting on workers.
  std::mutex park_mutex_;
  std::condition_variable worker_cv_;
  std::condition_variable caller_cv_;
  std::atomic<int> parked_workers_{0};
  std::atomic<bool> caller_parked_{false};
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
