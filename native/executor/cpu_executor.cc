#include "native/executor/cpu_executor.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OL_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define OL_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define OL_CPU_RELAX() ((void)0)
#endif

namespace onnx_light {
namespace {

thread_local int tls_region_depth = 0;

struct RegionDepthScope {
  RegionDepthScope() { ++tls_region_depth; }
  ~RegionDepthScope() { --tls_region_depth; }
};

constexpr uint64_t kParticipantMask = 0xffff;
constexpr uint64_t kClosed = 1ull << 31;
constexpr uint64_t kJoinedMask = kClosed - 1;

// Spins until pred() or the window passes; checks the clock every 64 relaxes.
template <typename Pred>
bool SpinUntil(Pred pred, int64_t spin_microseconds) {
  if (pred()) return true;
  if (spin_microseconds <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_microseconds);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      OL_CPU_RELAX();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
  }
}

}  // namespace

bool CpuExecutor::InsideRegion() { return tls_region_depth > 0; }
CpuExecutor::InlineRegionScope::InlineRegionScope() { ++tls_region_depth; }
CpuExecutor::InlineRegionScope::~InlineRegionScope() { --tls_region_depth; }

StatusOr<std::shared_ptr<CpuExecutor>> CpuExecutor::Create(const CpuExecutionPolicy& policy) {
  OL_RETURN_IF_ERROR(policy.Validate());
  std::shared_ptr<CpuExecutor> executor(new CpuExecutor(policy));
  const int workers = policy.EffectiveThreads() - 1;
  executor->workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    executor->workers_.emplace_back([e = executor.get(), i] { e->WorkerLoop(i + 1); });
    if (!policy.affinity.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(policy.affinity[(i + 1) % policy.affinity.size()], &set);
      pthread_setaffinity_np(executor->workers_.back().native_handle(), sizeof set, &set);
    }
  }
  return executor;
}

CpuExecutor::CpuExecutor(const CpuExecutionPolicy& policy) : policy_(policy) {}

CpuExecutor::~CpuExecutor() {
  {
    std::lock_guard<std::mutex> lock(park_mutex_);
    stop_.store(true);
    dispatch_.fetch_add(1ull << 16);  // wake spinning workers too
  }
  worker_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void CpuExecutor::WorkerLoop(int index) {
  // Not a load: a region dispatched before this thread first runs must still be seen.
  uint64_t seen = 0;
  for (;;) {
    const auto changed = [&] { return dispatch_.load(std::memory_order_seq_cst) != seen; };
    if (!SpinUntil(changed, policy_.spin_microseconds)) {
      std::unique_lock<std::mutex> lock(park_mutex_);
      parked_workers_.fetch_add(1);
      worker_cv_.wait(lock, [&] { return changed() || stop_.load(); });
      parked_workers_.fetch_sub(1);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = dispatch_.load(std::memory_order_acquire);
    const int participants = static_cast<int>(seen & kParticipantMask);
    if (index >= participants || !Join(seen >> 16)) continue;
    {
      RegionDepthScope scope;
      task_function_(task_argument_, index);
    }
    finished_.fetch_add(1, std::memory_order_seq_cst);
    if (caller_parked_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(park_mutex_);
      caller_cv_.notify_one();
    }
  }
}

bool CpuExecutor::Join(uint64_t generation) {
  const uint64_t tag = (generation & 0xffffffffu) << 32;
  uint64_t a = admission_.load(std::memory_order_seq_cst);
  while ((a & ~(kClosed | kJoinedMask)) == tag && !(a & kClosed)) {
    if (admission_.compare_exchange_weak(a, a + 1, std::memory_order_seq_cst)) return true;
  }
  return false;
}

void CpuExecutor::WaitForWorkers(int expected) {
  const auto done = [&] { return finished_.load(std::memory_order_seq_cst) == expected; };
  if (SpinUntil(done, policy_.spin_microseconds)) return;
  std::unique_lock<std::mutex> lock(park_mutex_);
  caller_parked_.store(true, std::memory_order_seq_cst);
  caller_cv_.wait(lock, done);
  caller_parked_.store(false, std::memory_order_release);
}

int CpuExecutor::Run(int n, FunctionRef<void(int)> task) {
  return Run(
      n, [](void* argument, int p) { (*static_cast<FunctionRef<void(int)>*>(argument))(p); }, &task);
}

int CpuExecutor::Run(int n, TaskFunction function, void* argument) {
  if (n > participants()) n = participants();
  std::unique_lock<std::mutex> region(region_mutex_, std::defer_lock);
  if (n <= 1 || InsideRegion() || !region.try_lock()) {
    RegionDepthScope scope;
    for (int p = 0; p < n; ++p) function(argument, p);
    return 1;
  }
  task_function_ = function;
  task_argument_ = argument;
  finished_.store(0, std::memory_order_relaxed);
  const uint64_t generation = (dispatch_.load(std::memory_order_relaxed) >> 16) + 1;
  admission_.store((generation & 0xffffffffu) << 32, std::memory_order_seq_cst);
  // seq_cst on both sides (this store then the parked count; a worker's count then its
  // re-check of the dispatch word) guarantees a parking worker sees the new region or we
  // see it parked and wake it.
  dispatch_.store(generation << 16 | static_cast<uint64_t>(n), std::memory_order_seq_cst);
  if (parked_workers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(park_mutex_);
    worker_cv_.notify_all();
  }
  {
    RegionDepthScope scope;
    function(argument, 0);
  }
  // Close admission: late workers skip this region; wait only for those that joined.
  const int joined = static_cast<int>(admission_.fetch_or(kClosed, std::memory_order_seq_cst) & kJoinedMask);
  WaitForWorkers(joined);
  return joined + 1;
}

ExecutorRegistry& ExecutorRegistry::Global() {
  static ExecutorRegistry* registry = new ExecutorRegistry();
  return *registry;
}

StatusOr<std::shared_ptr<CpuExecutor>> ExecutorRegistry::Acquire(const CpuExecutionPolicy& policy) {
  OL_RETURN_IF_ERROR(policy.Validate());
  const std::string key = policy.Key();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = executors_.begin(); it != executors_.end();) {
    if (auto live = it->second.lock()) {
      if (it->first == key) return live;
      ++it;
    } else {
      it = executors_.erase(it);
    }
  }
  OL_ASSIGN_OR_RETURN(std::shared_ptr<CpuExecutor> executor, CpuExecutor::Create(policy));
  executors_.emplace_back(key, executor);
  return executor;
}

int ExecutorRegistry::LiveExecutors() {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = 0;
  for (auto& e : executors_) n += !e.second.expired();
  return n;
}

}  // namespace onnx_light
