#include "native/executor/parallel_for.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

namespace onnx_light {
namespace {

int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status CancelledStatus(const ParallelContext& ctx, const ParallelPlan& plan) {
  const bool timeout = ctx.cancellation->deadline_passed();
  return Cancelled(ctx.kernel, " region '", plan.label,
                   "' stopped: ", timeout ? "the run's timeout expired" : "the run was terminated");
}

bool IsCancelled(const ParallelContext& ctx) { return ctx.cancellation != nullptr && ctx.cancellation->IsCancelled(); }

}  // namespace

Partition ComputePartition(int64_t total, int64_t grain, int requested_participants) {
  Partition p;
  if (total <= 0) return p;
  const int64_t grains = (total + grain - 1) / grain;
  const int64_t participants = std::max<int64_t>(1, std::min<int64_t>(requested_participants, grains));
  const int64_t target_blocks = participants * kBlocksPerParticipant;
  const int64_t grains_per_block = std::max<int64_t>(1, (grains + target_blocks - 1) / target_blocks);
  p.block_size = grains_per_block * grain;
  p.num_blocks = (total + p.block_size - 1) / p.block_size;
  p.participants = static_cast<int>(std::min<int64_t>(participants, p.num_blocks));
  return p;
}

int AvailableParticipants(const ParallelContext& ctx, const ParallelPlan& plan) {
  if (ctx.executor == nullptr || CpuExecutor::InsideRegion()) return 1;
  int n = ctx.executor->participants();
  if (plan.max_participants > 0) n = std::min(n, plan.max_participants);
  return n;
}

Status ParallelForWithParticipant(const ParallelContext& ctx, int64_t total, const ParallelPlan& plan,
                                  FunctionRef<Status(int, int64_t, int64_t)> fn) {
  if (total < 0) return InvalidArgument(ctx.kernel, " region '", plan.label, "': negative total ", total);
  if (plan.grain <= 0)
    return InvalidArgument(ctx.kernel, " region '", plan.label, "': grain must be positive, got ", plan.grain);
  if (plan.max_participants < 0) {
    return InvalidArgument(ctx.kernel, " region '", plan.label, "': max_participants must be >= 0, got ",
                           plan.max_participants);
  }
  if (total == 0) return Status::Ok();
  if (IsCancelled(ctx)) return CancelledStatus(ctx, plan);

  const bool nested = CpuExecutor::InsideRegion();
  const int requested = AvailableParticipants(ctx, plan);
  const Partition partition = ComputePartition(total, plan.grain, requested);
  const bool record = ctx.events != nullptr;
  const int64_t wall_start = record ? WallNanos() : 0;

  // What every participant reads fits one cache line (the first); what only errors,
  // cancellation and events touch lives after it. Dispatch cost is dominated by the lines
  // a worker must pull from the caller's core.
  struct alignas(64) RegionState {
    Partition partition;
    int64_t total;
    FunctionRef<Status(int, int64_t, int64_t)> fn;
    const ParallelContext* ctx;
    std::atomic<bool> stop{false};
    bool record;
    std::atomic<int64_t>* claims;  // next unclaimed block of each owner's run
    bool own_blocks_only;          // the executor's join wait is on: nobody helps others
    alignas(64) const ParallelPlan* plan;
    std::atomic<int> observed{0};
    std::atomic<int64_t> cpu_ns{0};
    int64_t wall_start = 0;
    int64_t caller_start = 0;  // wall clock, the caller's task (participant 0) only
    int64_t caller_end = 0;
    std::atomic<int64_t> first_join{-1};  // relative to wall_start
    std::mutex error_mutex;
    Status first_error;
  } state{partition, total, fn, &ctx};
  state.record = record;
  state.plan = &plan;
  state.wall_start = wall_start;

  // Blocks are fixed by the partition; who runs them is not. Participant p claims its
  // own contiguous run first, then helps with the others' unclaimed blocks, so a worker
  // the OS has not scheduled yet delays nobody. Claims are per-owner counters.
  std::atomic<int64_t> claims[CpuExecutionPolicy::kMaxThreads];
  for (int p = 0; p < partition.participants; ++p) {
    claims[p].store(partition.FirstBlock(p), std::memory_order_relaxed);
  }
  state.claims = claims;
  // With a join wait (CpuExecutionPolicy::join_wait_microseconds, the forced-parallel test
  // mode) each participant runs only its own run, so that every admitted participant runs
  // blocks; the caller runs the blocks of any worker that did not join, afterwards.
  state.own_blocks_only = ctx.executor != nullptr && ctx.executor->policy().join_wait_microseconds > 0;

  const auto run_participant = [](void* argument, int p) {
    RegionState* s = static_cast<RegionState*>(argument);
    const int64_t cpu_start = s->record ? ThreadCpuNanos() : 0;
    if (s->record) {
      const int64_t now = WallNanos();
      if (p == 0) {
        s->caller_start = now;
      } else {
        int64_t expected = -1;
        s->first_join.compare_exchange_strong(expected, now - s->wall_start, std::memory_order_relaxed);
      }
    }
    bool ran = false;
    const Partition& part = s->partition;
    // Returns false when the region must stop (error, cancellation).
    const auto run_block = [&](int64_t b) {
      if (s->stop.load(std::memory_order_relaxed)) return false;
      Status status;
      if (IsCancelled(*s->ctx)) {
        status = CancelledStatus(*s->ctx, *s->plan);
      } else {
        const int64_t begin = b * part.block_size;
        status = s->fn(p, begin, std::min(s->total, begin + part.block_size));
        ran = true;
      }
      if (status.ok()) return true;
      std::lock_guard<std::mutex> lock(s->error_mutex);
      if (s->first_error.ok()) s->first_error = status;
      s->stop.store(true, std::memory_order_relaxed);
      return false;
    };
    bool go = true;
    const int owners = s->own_blocks_only ? 1 : part.participants;
    for (int i = 0; go && i < owners; ++i) {
      const int owner = (p + i) % part.participants;
      const int64_t last = part.LastBlock(owner);
      for (int64_t b; go && (b = s->claims[owner].fetch_add(1, std::memory_order_relaxed)) < last;) {
        go = run_block(b);
      }
    }
    if (s->record) {
      if (ran) s->observed.fetch_add(1, std::memory_order_relaxed);
      s->cpu_ns.fetch_add(ThreadCpuNanos() - cpu_start, std::memory_order_relaxed);
      if (p == 0) s->caller_end = WallNanos();
    }
  };

  int joined = 1;
  if (partition.participants <= 1) {
    CpuExecutor::InlineRegionScope inline_region;
    run_participant(&state, 0);
  } else {
    joined = ctx.executor->Run(partition.participants, run_participant, &state);
    const int64_t caller_start = state.caller_start, caller_end = state.caller_end;
    if (state.own_blocks_only) {
      // Blocks of workers that never joined (the join wait ran out): the caller runs them,
      // helping as usual, now that every participant that ran has finished. It was counted
      // as a participant already.
      CpuExecutor::InlineRegionScope inline_region;
      state.own_blocks_only = false;
      const int observed = state.observed.load(std::memory_order_relaxed);
      run_participant(&state, 0);
      state.observed.store(observed, std::memory_order_relaxed);
      state.caller_start = caller_start;  // the region's timing is that of the parallel part
      state.caller_end = caller_end;
    }
  }

  if (record) {
    RegionEvent event;
    event.label = plan.label;
    event.kernel = ctx.kernel;
    event.total = total;
    event.grain = plan.grain;
    event.requested_participants = requested;
    event.admitted_participants = partition.participants;
    event.observed_participants = state.observed.load();
    event.nested = nested;
    event.joined_participants = joined;
    const int64_t wall_end = WallNanos();
    event.wall_ns = wall_end - wall_start;
    event.cpu_ns = state.cpu_ns.load();
    if (partition.participants > 1) {
      event.dispatch_ns = state.caller_start - wall_start;
      // Run may have run every task inline on the caller (no free region slot, a share of
      // one): then no worker joined, whatever participant indices ran.
      event.first_join_ns = joined > 1 ? state.first_join.load(std::memory_order_relaxed) : -1;
      event.end_wait_ns = wall_end - state.caller_end;
    }
    ctx.events->RecordRegion(event);
  }
  return state.first_error;
}

Status ParallelFor(const ParallelContext& ctx, int64_t total, const ParallelPlan& plan,
                   FunctionRef<Status(int64_t, int64_t)> fn) {
  return ParallelForWithParticipant(ctx, total, plan, [&](int, int64_t begin, int64_t end) { return fn(begin, end); });
}

}  // namespace onnx_light
