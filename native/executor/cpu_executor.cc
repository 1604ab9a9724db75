#include "native/executor/cpu_executor.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

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
thread_local int64_t tls_regions_opened = 0;

struct RegionDepthScope {
  RegionDepthScope() { ++tls_region_depth; }
  ~RegionDepthScope() { --tls_region_depth; }
};

// Region::admission: tag << 32 | kClosed | wanted << 16 | joined.
constexpr uint64_t kClosed = 1ull << 31;
constexpr uint64_t kJoinedMask = 0xffff;
constexpr int kWantedShift = 16;
constexpr uint64_t kWantedMask = 0x7fff;
static_assert(CpuExecutionPolicy::kMaxThreads <= kJoinedMask, "joined workers fit 16 bits");

uint64_t Joined(uint64_t admission) { return admission & kJoinedMask; }
uint64_t Wanted(uint64_t admission) { return (admission >> kWantedShift) & kWantedMask; }
bool Open(uint64_t admission) { return (admission >> 32) != 0 && !(admission & kClosed); }

// Spins until pred() or the window passes; checks the clock and yields every 64 relaxes
// (a few microseconds). The yield is what keeps a spinner from holding a CPU another
// runnable thread needs: a worker woken onto its caller's CPU (the other CPU busy) used
// to spin there for its whole window, and the caller, preempted by the wake-up, waited
// it out in every region until the worker parked (issue 14: MobileNetV3's first regions
// of a run waited a median 120-350 us at load 6-8). On a CPU with nothing else runnable
// the yield returns at once, so an idle worker is never held back.
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
    std::this_thread::yield();
  }
}

}  // namespace

bool CpuExecutor::InsideRegion() { return tls_region_depth > 0; }

int64_t CpuExecutor::RegionsOpenedOnThisThread() { return tls_regions_opened; }

namespace {
// Bumped in every child the process forks: executors created before a fork know they are
// in another process (their worker threads were not copied) by comparing it.
std::atomic<uint64_t> g_process_generation{0};
}  // namespace

bool CpuExecutor::Forked() const { return g_process_generation.load(std::memory_order_relaxed) != process_generation_; }

namespace {
thread_local const CpuExecutor* tls_caller_of = nullptr;
}  // namespace

CpuExecutor::CallerScope::CallerScope(CpuExecutor& executor)
    : executor_(tls_caller_of == &executor ? nullptr : &executor) {
  if (executor_ == nullptr) return;  // already counted further up this thread's stack
  tls_caller_of = executor_;
  executor_->active_callers_.fetch_add(1, std::memory_order_seq_cst);
}

CpuExecutor::CallerScope::~CallerScope() {
  if (executor_ == nullptr) return;
  executor_->active_callers_.fetch_sub(1, std::memory_order_seq_cst);
  tls_caller_of = nullptr;
}
CpuExecutor::InlineRegionScope::InlineRegionScope() { ++tls_region_depth; }
CpuExecutor::InlineRegionScope::~InlineRegionScope() { --tls_region_depth; }

StatusOr<std::shared_ptr<CpuExecutor>> CpuExecutor::Create(const CpuExecutionPolicy& policy) {
  OL_RETURN_IF_ERROR(policy.Validate());
  ExecutorRegistry::Global();  // installs the fork handlers that Forked() relies on
  std::shared_ptr<CpuExecutor> executor(new CpuExecutor(policy));
  const int workers = policy.EffectiveThreads() - 1;
  executor->workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    executor->workers_.emplace_back([e = executor.get()] { e->WorkerLoop(); });
    if (!policy.affinity.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(policy.affinity[(i + 1) % policy.affinity.size()], &set);
      pthread_setaffinity_np(executor->workers_.back().native_handle(), sizeof set, &set);
    }
  }
  return executor;
}

CpuExecutor::CpuExecutor(const CpuExecutionPolicy& policy)
    : policy_(policy), process_generation_(g_process_generation.load(std::memory_order_relaxed)) {}

CpuExecutor::~CpuExecutor() {
  if (Forked()) {
    // The threads belong to the parent; joining them here would wait forever, and their
    // mutexes may have been held at the fork. Their handles are left, deliberately.
    new std::vector<std::thread>(std::move(workers_));
    parking_.release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(parking_->mutex);
    stop_.store(true);
    dispatch_.fetch_add(1);  // wake spinning workers too
  }
  parking_->worker_cv.notify_all();
  for (auto& t : workers_) t.join();
}

void CpuExecutor::WorkerLoop() {
  // Regions are scanned from a per-thread start so that concurrent regions fill evenly.
  static std::atomic<int> next_start{0};
  const int start = next_start.fetch_add(1, std::memory_order_relaxed) % kMaxConcurrentRegions;
  for (;;) {
    // Read the dispatch word before scanning: a region opened after the scan changes it.
    const uint64_t seen = dispatch_.load(std::memory_order_seq_cst);
    if (stop_.load(std::memory_order_acquire)) return;
    if (JoinAnyRegion(start)) continue;
    const auto changed = [&] { return dispatch_.load(std::memory_order_seq_cst) != seen; };
    if (!SpinUntil(changed, policy_.spin_microseconds)) {
      std::unique_lock<std::mutex> lock(parking_->mutex);
      parked_workers_.fetch_add(1);
      parking_->worker_cv.wait(lock, [&] { return changed() || stop_.load(); });
      parked_workers_.fetch_sub(1);
    }
  }
}

bool CpuExecutor::JoinAnyRegion(int start) {
  for (int i = 0; i < kMaxConcurrentRegions; ++i) {
    Region& region = regions_[(start + i) % kMaxConcurrentRegions];
    uint64_t a = region.admission.load(std::memory_order_seq_cst);
    while (Open(a) && Joined(a) < Wanted(a)) {
      if (!region.admission.compare_exchange_weak(a, a + 1, std::memory_order_seq_cst)) continue;
      // Admitted: the caller waits for this worker, so the region's fields stay as they
      // were published until finished is counted below.
      const int participant = static_cast<int>(Joined(a)) + 1;
      {
        RegionDepthScope scope;
        region.function(region.argument, participant);
      }
      region.finished.fetch_add(1, std::memory_order_seq_cst);
      // The region may be reused from here on: only the executor's own fields below.
      if (parked_callers_.load(std::memory_order_seq_cst) > 0) {
        std::lock_guard<std::mutex> lock(parking_->mutex);
        parking_->caller_cv.notify_all();
      }
      return true;
    }
  }
  return false;
}

void CpuExecutor::WaitForWorkers(const Region& region, int expected) {
  const auto done = [&] { return region.finished.load(std::memory_order_seq_cst) == expected; };
  if (SpinUntil(done, policy_.spin_microseconds)) return;
  std::unique_lock<std::mutex> lock(parking_->mutex);
  parked_callers_.fetch_add(1, std::memory_order_seq_cst);
  parking_->caller_cv.wait(lock, done);
  parked_callers_.fetch_sub(1, std::memory_order_seq_cst);
}

bool CpuExecutor::Prepare() {
  if (parked_workers_.load(std::memory_order_seq_cst) == 0 || Forked()) return false;
  // The share Run would compute, counting this thread as a caller if it is not one yet.
  const int callers = active_callers_.load(std::memory_order_seq_cst) + (tls_caller_of == this ? 0 : 1);
  if (participants() / std::max(1, callers) <= 1) return false;
  {
    // Bumped under the lock: a worker between its spin and its wait re-checks the dispatch
    // word under it, so it either sees the bump or is already waiting for the notify.
    std::lock_guard<std::mutex> lock(parking_->mutex);
    dispatch_.fetch_add(1, std::memory_order_seq_cst);
  }
  parking_->worker_cv.notify_all();
  return true;
}

void CpuExecutor::RunInline(int n, TaskFunction function, void* argument) {
  RegionDepthScope scope;
  for (int p = 0; p < n; ++p) function(argument, p);
}

int CpuExecutor::Run(int n, FunctionRef<void(int)> task) {
  return Run(
      n, [](void* argument, int p) { (*static_cast<FunctionRef<void(int)>*>(argument))(p); }, &task);
}

int CpuExecutor::Run(int n, TaskFunction function, void* argument) {
  if (n > participants()) n = participants();  // 1 in a forked child
  if (n <= 1 || InsideRegion()) {
    RunInline(n, function, argument);
    return 1;
  }
  // The caller counts against the policy's threads (for its whole session run when the
  // session holds a CallerScope, else while it is inside Run).
  CallerScope caller(*this);
  const int share = std::max(1, participants() / std::max(1, active_callers_.load(std::memory_order_seq_cst)));
  // Claim a free region slot.
  int slot = -1;
  uint32_t used = slots_in_use_.load(std::memory_order_relaxed);
  while (share > 1) {
    const uint32_t free = ~used & ((1u << kMaxConcurrentRegions) - 1);
    if (free == 0) break;
    const int candidate = __builtin_ctz(free);
    if (slots_in_use_.compare_exchange_weak(used, used | (1u << candidate), std::memory_order_acquire)) {
      slot = candidate;
      break;
    }
  }
  if (slot < 0) {
    RunInline(n, function, argument);
    return 1;
  }
  n = std::min(n, share);
  ++tls_regions_opened;
  Region& region = regions_[slot];
  region.function = function;
  region.argument = argument;
  region.finished.store(0, std::memory_order_relaxed);
  uint32_t tag = next_generation_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (tag == 0) tag = next_generation_.fetch_add(1, std::memory_order_relaxed) + 1;  // 0 marks a free slot
  // seq_cst on both sides (the admission and dispatch stores, then the parked count; a
  // worker's count, then its re-check of the dispatch word) guarantees a parking worker
  // sees the new region or the caller sees it parked and wakes it.
  region.admission.store(static_cast<uint64_t>(tag) << 32 | static_cast<uint64_t>(n - 1) << kWantedShift,
                         std::memory_order_seq_cst);
  dispatch_.fetch_add(1, std::memory_order_seq_cst);
  if (parked_workers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(parking_->mutex);
    parking_->worker_cv.notify_all();
  }
  if (policy_.join_wait_microseconds > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(policy_.join_wait_microseconds);
    while (Joined(region.admission.load(std::memory_order_acquire)) < static_cast<uint64_t>(n - 1) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  }
  {
    RegionDepthScope scope;
    function(argument, 0);
  }
  // Close admission: late workers skip this region; wait only for those that joined.
  const int joined = static_cast<int>(Joined(region.admission.fetch_or(kClosed, std::memory_order_seq_cst)));
  WaitForWorkers(region, joined);
  region.admission.store(0, std::memory_order_relaxed);
  slots_in_use_.fetch_and(~(1u << slot), std::memory_order_release);
  return joined + 1;
}

ExecutorRegistry& ExecutorRegistry::Global() {
  static ExecutorRegistry* registry = [] {
    auto* r = new ExecutorRegistry();
    // Fork safety: the registry's lock is held across fork() so that the child never
    // inherits it locked by a thread that does not exist there; the child counts a new
    // process generation (executors created before it stop using their workers).
    pthread_atfork([] { Global().mutex_.lock(); }, [] { Global().mutex_.unlock(); },
                   [] {
                     g_process_generation.fetch_add(1, std::memory_order_relaxed);
                     Global().mutex_.unlock();
                   });
    return r;
  }();
  return *registry;
}

StatusOr<std::shared_ptr<CpuExecutor>> ExecutorRegistry::Acquire(const CpuExecutionPolicy& policy) {
  OL_RETURN_IF_ERROR(policy.Validate());
  const std::string key = policy.Key();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = executors_.begin(); it != executors_.end();) {
    auto live = it->second.lock();
    if (live && !live->Forked()) {
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
