// ParallelFor and CpuExecutor behaviour: partitions, participants, nesting, cancellation,
// errors, events, registry sharing. Run with 1, 2, 4 and 8 participants on whatever cores
// the machine has (more participants than cores is part of the contract).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "native/executor/parallel_for.h"

namespace onnx_light {
namespace {

std::shared_ptr<CpuExecutor> MakeExecutor(int threads) {
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto e = CpuExecutor::Create(policy);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

class ParticipantsTest : public ::testing::TestWithParam<int> {};

TEST_P(ParticipantsTest, CoversEveryIndexExactlyOnce) {
  auto executor = MakeExecutor(GetParam());
  EventCollector events;
  ParallelContext ctx{executor.get(), nullptr, &events, "Test"};
  for (int64_t total : {1, 7, 64, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(total);
    ASSERT_TRUE(ParallelFor(ctx, total, {"cover", 16}, [&](int64_t b, int64_t e) {
                  for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                  return Status::Ok();
                }).ok());
    for (int64_t i = 0; i < total; ++i) ASSERT_EQ(hits[i].load(), 1) << "total " << total << " index " << i;
  }
}

TEST_P(ParticipantsTest, BlocksAreContiguousMultiplesOfGrain) {
  const int participants = GetParam();
  auto executor = MakeExecutor(participants);
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  ASSERT_TRUE(ParallelFor(ctx, 1000, {"blocks", 8}, [&](int64_t b, int64_t e) {
                std::lock_guard<std::mutex> lock(mutex);
                blocks.emplace_back(b, e);
                return Status::Ok();
              }).ok());
  std::sort(blocks.begin(), blocks.end());
  int64_t next = 0;
  for (auto [b, e] : blocks) {
    EXPECT_EQ(b, next);
    EXPECT_EQ(b % 8, 0);
    next = e;
  }
  EXPECT_EQ(next, 1000);
}

TEST_P(ParticipantsTest, RecordsParticipantsInEvents) {
  const int participants = GetParam();
  auto executor = MakeExecutor(participants);
  EventCollector events;
  ParallelContext ctx{executor.get(), nullptr, &events, "Test"};
  ASSERT_TRUE(ParallelFor(ctx, 1 << 16, {"events", 1024}, [&](int64_t, int64_t) { return Status::Ok(); }).ok());
  auto regions = events.regions();
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(std::string(regions[0].label), "events");
  EXPECT_EQ(std::string(regions[0].kernel), "Test");
  EXPECT_EQ(regions[0].total, 1 << 16);
  EXPECT_EQ(regions[0].grain, 1024);
  EXPECT_EQ(regions[0].requested_participants, participants);
  EXPECT_EQ(regions[0].admitted_participants, participants);
  // Who runs blocks depends on scheduling: a late worker's blocks are finished by others.
  EXPECT_GE(regions[0].observed_participants, 1);
  EXPECT_LE(regions[0].observed_participants, participants);
  EXPECT_FALSE(regions[0].nested);
}

TEST_P(ParticipantsTest, NestedRegionsRunInlineAndAreRecorded) {
  auto executor = MakeExecutor(GetParam());
  EventCollector events;
  ParallelContext ctx{executor.get(), nullptr, &events, "Outer"};
  std::atomic<int64_t> sum{0};
  ASSERT_TRUE(ParallelFor(ctx, 64, {"outer", 1}, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                  const std::thread::id self = std::this_thread::get_id();
                  Status inner = ParallelFor(ctx, 100, {"inner", 1}, [&](int64_t ib, int64_t ie) {
                    EXPECT_EQ(std::this_thread::get_id(), self) << "nested region left its thread";
                    sum.fetch_add(ie - ib);
                    return Status::Ok();
                  });
                  if (!inner.ok()) return inner;
                }
                return Status::Ok();
              }).ok());
  EXPECT_EQ(sum.load(), 64 * 100);
  int nested = 0;
  for (const auto& r : events.regions()) {
    if (std::string(r.label) == "inner") {
      EXPECT_TRUE(r.nested);
      EXPECT_EQ(r.admitted_participants, 1);
      ++nested;
    }
  }
  EXPECT_EQ(nested, 64);
}

TEST_P(ParticipantsTest, FirstErrorIsReturnedAndOthersStop) {
  auto executor = MakeExecutor(GetParam());
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::atomic<int> blocks_run{0};
  std::atomic<bool> failed{false};
  // Block 0 (the caller's first claim) fails; every other block waits until it has. A
  // participant may finish the block it was in and, racing the stop flag, start one more
  // (which sees the failure at once); then it must claim nothing else.
  Status s = ParallelFor(ctx, 1 << 20, {"error", 1}, [&](int64_t b, int64_t) {
    blocks_run.fetch_add(1);
    if (b == 0) {
      failed.store(true);
      return InvalidArgument("block zero failed");
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!failed.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    // Leave the failing participant time to raise the stop flag (it does so right after
    // its block returns) before this one looks for its next block.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return Status::Ok();
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "block zero failed");
  EXPECT_LE(blocks_run.load(), 2 * GetParam() - 1);
  EXPECT_LT(blocks_run.load(), static_cast<int>(ComputePartition(1 << 20, 1, GetParam()).num_blocks));
}

TEST_P(ParticipantsTest, CancellationStopsBetweenBlocks) {
  auto executor = MakeExecutor(GetParam());
  CancellationToken token;
  ParallelContext ctx{executor.get(), &token, nullptr, "Test"};
  std::atomic<int> blocks_run{0};
  Status s = ParallelFor(ctx, 1000, {"cancel", 1}, [&](int64_t, int64_t) {
    if (blocks_run.fetch_add(1) == 0) token.Cancel();
    return Status::Ok();
  });
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_NE(s.message().find("terminated"), std::string::npos);
  const int blocks = static_cast<int>(ComputePartition(1000, 1, GetParam()).num_blocks);
  EXPECT_LT(blocks_run.load(), blocks);

  CancellationToken expired;
  expired.SetDeadline(std::chrono::steady_clock::now());
  ParallelContext late{executor.get(), &expired, nullptr, "Test"};
  Status t = ParallelFor(late, 10, {"timeout", 1}, [&](int64_t, int64_t) { return Status::Ok(); });
  EXPECT_EQ(t.code(), StatusCode::kCancelled);
  EXPECT_NE(t.message().find("timeout"), std::string::npos);
}

// Blocks run by a participant other than their owner see that participant's index, and
// no two concurrently running blocks share an index (per-participant scratch relies on it).
TEST_P(ParticipantsTest, ParticipantIndexIsUniqueAmongRunningBlocks) {
  auto executor = MakeExecutor(GetParam());
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::vector<std::atomic<int>> in_use(GetParam());
  std::atomic<int> clashes{0};
  ASSERT_TRUE(ParallelForWithParticipant(ctx, 4000, {"slots", 1}, [&](int p, int64_t, int64_t) {
                if (p < 0 || p >= GetParam()) return Internal("participant index ", p, " out of range");
                if (in_use[p].fetch_add(1) != 0) clashes.fetch_add(1);
                std::this_thread::yield();
                in_use[p].fetch_sub(1);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(clashes.load(), 0);
}

TEST_P(ParticipantsTest, ManyRegionsBackToBack) {
  auto executor = MakeExecutor(GetParam());
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 2000; ++r) {
    ASSERT_TRUE(ParallelFor(ctx, 8, {"loop", 1}, [&](int64_t b, int64_t e) {
                  sum.fetch_add(e - b);
                  return Status::Ok();
                }).ok());
  }
  EXPECT_EQ(sum.load(), 2000 * 8);
}

// Where a region's wall time went: its parts lie within it, a first join is recorded
// exactly when a worker joined, and a serial region records none of them.
TEST_P(ParticipantsTest, RecordsDispatchJoinAndEndWaitWithinTheRegion) {
  const int participants = GetParam();
  auto executor = MakeExecutor(participants);
  EventCollector events;
  ParallelContext ctx{executor.get(), nullptr, &events, "Test"};
  std::atomic<int64_t> sink{0};
  for (int r = 0; r < 200; ++r) {
    ASSERT_TRUE(ParallelFor(ctx, 64, {"timing", 1}, [&](int64_t b, int64_t e) {
                  for (int64_t i = b; i < e; ++i) sink.fetch_add(i, std::memory_order_relaxed);
                  return Status::Ok();
                }).ok());
  }
  ASSERT_EQ(events.regions().size(), 200u);
  for (const RegionEvent& region : events.regions()) {
    EXPECT_GE(region.joined_participants, 1);
    EXPECT_LE(region.joined_participants, participants);
    EXPECT_LE(region.observed_participants, region.joined_participants);
    EXPECT_EQ(region.first_join_ns >= 0, region.joined_participants > 1);
    EXPECT_GE(region.dispatch_ns, 0);
    EXPECT_GE(region.end_wait_ns, 0);
    EXPECT_LE(region.dispatch_ns + region.end_wait_ns, region.wall_ns);
    EXPECT_LE(region.first_join_ns, region.wall_ns);
    if (participants == 1) {
      EXPECT_EQ(region.dispatch_ns, 0);
      EXPECT_EQ(region.end_wait_ns, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Participants, ParticipantsTest, ::testing::Values(1, 2, 4, 8));

TEST(Partition, DependsOnlyOnTotalGrainAndParticipants) {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int64_t total : {1, 5, 100, 4097, 1000000}) {
      for (int64_t grain : {1, 3, 64, 5000}) {
        const Partition a = ComputePartition(total, grain, p);
        const Partition b = ComputePartition(total, grain, p);
        EXPECT_EQ(a.block_size, b.block_size);
        EXPECT_EQ(a.num_blocks, b.num_blocks);
        EXPECT_EQ(a.participants, b.participants);
        EXPECT_EQ(a.block_size % grain, 0);
        EXPECT_LE(a.participants, p);
        EXPECT_GE(a.num_blocks * a.block_size, total);
        EXPECT_LT((a.num_blocks - 1) * a.block_size, total);
        EXPECT_EQ(a.LastBlock(a.participants - 1), a.num_blocks);
      }
    }
  }
  EXPECT_EQ(ComputePartition(10, 100, 4).participants, 1);  // one grain: one participant
}

TEST(ParallelFor, RejectsBadArguments) {
  ParallelContext ctx{nullptr, nullptr, nullptr, "Bad"};
  auto noop = [](int64_t, int64_t) { return Status::Ok(); };
  EXPECT_EQ(ParallelFor(ctx, -1, {"neg", 1}, noop).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParallelFor(ctx, 10, {"zero", 0}, noop).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParallelFor(ctx, 10, {"neg", -5}, noop).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParallelFor(ctx, 0, {"empty", 1}, noop).ok());
}

// A timeout too far ahead for int64 nanoseconds (1e10 s and more) used to wrap into the
// past and cancel every run at once; it saturates to "no deadline".
class FarTimeoutTest : public ::testing::TestWithParam<double> {};

TEST_P(FarTimeoutTest, SaturatesToNoDeadlineInsteadOfExpiring) {
  CancellationToken token;
  token.SetTimeout(GetParam());
  EXPECT_FALSE(token.IsCancelled()) << GetParam() << " s";
  EXPECT_FALSE(token.deadline_passed()) << GetParam() << " s";
  EXPECT_FALSE(token.has_deadline()) << GetParam() << " s";
}

INSTANTIATE_TEST_SUITE_P(Timeouts, FarTimeoutTest,
                         ::testing::Values(9.3e9, 1e10, 1e12, 1e300, std::numeric_limits<double>::max(),
                                           std::numeric_limits<double>::infinity(), std::nan("")));

TEST(Timeout, RepresentableTimeoutsKeepTheirDeadline) {
  CancellationToken hour;
  hour.SetTimeout(3600);
  EXPECT_TRUE(hour.has_deadline());
  EXPECT_FALSE(hour.IsCancelled());
  CancellationToken century;
  century.SetTimeout(3.2e9);  // about 100 years: still fits
  EXPECT_TRUE(century.has_deadline());
  EXPECT_FALSE(century.IsCancelled());
  for (double passed : {0.0, -1.0}) {
    CancellationToken token;
    token.SetTimeout(passed);
    EXPECT_TRUE(token.IsCancelled()) << passed;
    EXPECT_TRUE(token.deadline_passed()) << passed;
  }
}

TEST(Policy, RejectsBadValues) {
  CpuExecutionPolicy p;
  p.num_threads = -1;
  EXPECT_EQ(p.Validate().code(), StatusCode::kInvalidArgument);
  p.num_threads = 100000;
  EXPECT_EQ(p.Validate().code(), StatusCode::kInvalidArgument);
  p.num_threads = 2;
  p.spin_microseconds = -3;
  EXPECT_EQ(p.Validate().code(), StatusCode::kInvalidArgument);
  p.spin_microseconds = 10;
  p.join_wait_microseconds = -1;
  EXPECT_EQ(p.Validate().code(), StatusCode::kInvalidArgument);
  p.join_wait_microseconds = CpuExecutionPolicy::kMaxSpinMicroseconds + 1;
  EXPECT_EQ(p.Validate().code(), StatusCode::kInvalidArgument);
  p.join_wait_microseconds = 0;
  p.affinity = {100000};
  Status s = p.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("100000"), std::string::npos);
  p.affinity = {AvailableCpus().front()};
  EXPECT_TRUE(p.Validate().ok());
  EXPECT_TRUE(CpuExecutor::Create(p).ok());
  EXPECT_FALSE(ExecutorRegistry::Global().Acquire(CpuExecutionPolicy{-2, 0, {}}).ok());
}

TEST(Policy, ZeroThreadsMeansPhysicalCores) {
  CpuExecutionPolicy p;
  EXPECT_EQ(p.EffectiveThreads(), PhysicalCoreCount());
  EXPECT_GE(PhysicalCoreCount(), 1);
  EXPECT_EQ(CpuExecutionPolicy::Serial().EffectiveThreads(), 1);
  auto e = CpuExecutor::Create(CpuExecutionPolicy::Serial());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->participants(), 1);
}

TEST(ExecutorRegistry, SharesCompatibleAndReleases) {
  auto& registry = ExecutorRegistry::Global();
  const int before = registry.LiveExecutors();
  CpuExecutionPolicy three;
  three.num_threads = 3;
  auto a = registry.Acquire(three);
  auto b = registry.Acquire(three);
  CpuExecutionPolicy two;
  two.num_threads = 2;
  auto c = registry.Acquire(two);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_NE(a->get(), c->get());
  EXPECT_EQ(registry.LiveExecutors(), before + 2);
  *a = nullptr;
  *b = nullptr;
  EXPECT_EQ(registry.LiveExecutors(), before + 1);
  *c = nullptr;
  EXPECT_EQ(registry.LiveExecutors(), before);
}

TEST(CpuExecutor, ConcurrentCallersDoNotDeadlock) {
  auto executor = MakeExecutor(2);
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 200; ++r) {
        Status s = ParallelFor(ctx, 100, {"concurrent", 1}, [&](int64_t b, int64_t e) {
          sum.fetch_add(e - b);
          return Status::Ok();
        });
        EXPECT_TRUE(s.ok());
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(sum.load(), 4 * 200 * 100);
}

// Runs `callers` threads that each hold a CallerScope, meet at a barrier (so every share
// is computed with all of them counted), then open one region of `requested` participants
// whose caller task waits (bounded) for `await` participants. Returns each Run's result.
struct ConcurrentRegions {
  std::vector<int> joined;
  int max_running = 0;
};

ConcurrentRegions RunConcurrentRegions(CpuExecutor& executor, int callers, int requested, int await) {
  ConcurrentRegions result;
  result.joined.assign(callers, 0);
  std::atomic<int> arrived{0}, in_task{0}, running{0}, max_running{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      CpuExecutor::CallerScope scope(executor);
      arrived.fetch_add(1);
      while (arrived.load() < callers) std::this_thread::yield();
      std::atomic<int> entered{0};
      result.joined[c] = executor.Run(requested, [&](int p) {
        const int now = running.fetch_add(1) + 1;
        for (int m = max_running.load(); now > m && !max_running.compare_exchange_weak(m, now);) {
        }
        entered.fetch_add(1);
        if (p == 0) {  // every region open at once, each until the workers it wants have joined
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          in_task.fetch_add(1);
          while ((in_task.load() < callers || entered.load() < await) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
          }
        }
        running.fetch_sub(1);
      });
      // Every caller stays counted until all regions are done.
      arrived.fetch_add(1);
      while (arrived.load() < 2 * callers) std::this_thread::yield();
    });
  }
  for (auto& t : threads) t.join();
  result.max_running = max_running.load();
  return result;
}

TEST(CpuExecutor, ConcurrentCallersEachGetTheirFairShareOfWorkers) {
  auto executor = MakeExecutor(4);
  // Two callers on four threads: two participants each (the caller and one worker),
  // where a single pool lock would have left the second caller alone.
  ConcurrentRegions r = RunConcurrentRegions(*executor, 2, 4, 2);
  EXPECT_EQ(r.joined, (std::vector<int>{2, 2}));
  EXPECT_LE(r.max_running, 4);
}

TEST(CpuExecutor, CallersAsManyAsThreadsRunAloneWithoutOversubscribing) {
  auto executor = MakeExecutor(2);
  ConcurrentRegions r = RunConcurrentRegions(*executor, 2, 2, 1);
  EXPECT_EQ(r.joined, (std::vector<int>{1, 1}));
}

// With as many callers as threads each region runs inline, every participant index on
// its caller: its event says no worker joined.
TEST(CpuExecutor, InlineRegionsOfConcurrentCallersRecordNoJoin) {
  auto executor = MakeExecutor(2);
  std::atomic<int> inside{0};
  std::vector<RegionEvent> events_of[2];
  std::vector<std::thread> callers;
  for (int c = 0; c < 2; ++c) {
    callers.emplace_back([&, c] {
      CpuExecutor::CallerScope scope(*executor);
      inside.fetch_add(1);
      while (inside.load() < 2) std::this_thread::yield();
      EventCollector events;
      ParallelContext ctx{executor.get(), nullptr, &events, "Test"};
      EXPECT_TRUE(ParallelFor(ctx, 64, {"inline", 1}, [](int64_t, int64_t) { return Status::Ok(); }).ok());
      events_of[c] = events.regions();
      inside.fetch_add(1);
      while (inside.load() < 4) std::this_thread::yield();  // both scopes held until both ran
    });
  }
  for (auto& t : callers) t.join();
  for (const auto& events : events_of) {
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].admitted_participants, 2);
    EXPECT_EQ(events[0].joined_participants, 1);
    EXPECT_EQ(events[0].first_join_ns, -1);
  }
}

TEST(CpuExecutor, MoreConcurrentRegionsThanSlotsRunTheRestInline) {
  const int callers = CpuExecutor::kMaxConcurrentRegions + 2;
  auto executor = MakeExecutor(3 * callers);
  ConcurrentRegions r = RunConcurrentRegions(*executor, callers, 3, 1);
  // All regions are open at once: the two callers without a slot run alone.
  int alone = 0;
  for (int joined : r.joined) {
    EXPECT_GE(joined, 1);
    EXPECT_LE(joined, 3);
    alone += joined == 1;
  }
  EXPECT_GE(alone, callers - CpuExecutor::kMaxConcurrentRegions);
  EXPECT_LE(r.max_running, 3 * callers);
}

TEST(CpuExecutor, ConcurrentParallelForsAreExactUnderContention) {
  auto executor = MakeExecutor(4);
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      std::vector<int64_t> out(5000);
      for (int r = 0; r < 100; ++r) {
        Status s = ParallelFor(ctx, out.size(), {"fair", 64}, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = i * (t + 1) + r;
          return Status::Ok();
        });
        if (!s.ok()) wrong.fetch_add(1);
        for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) wrong.fetch_add(out[i] != i * (t + 1) + r);
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

// In a child forked while an executor's workers run (multiprocessing's fork method, a
// pre-forking server), the inherited executor computes on the caller alone, the registry
// hands out a fresh executor with live workers, and destroying the inherited one returns.
TEST(CpuExecutor, ForkedChildRunsInheritedExecutorsInlineAndGetsFreshOnes) {
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in a child forked from a threaded process";
#endif
  // Set by .bazelrc's aarch64 test config: qemu-user aborts in a child forked from a
  // threaded process (tcg's cpu == current_cpu assertion), whatever the child does.
  if (std::getenv("ONNX_LIGHT_UNDER_QEMU_USER") != nullptr) {
    GTEST_SKIP() << "qemu-user cannot run a child forked from a threaded process";
  }
  CpuExecutionPolicy policy;
  policy.num_threads = 3;
  auto inherited = ExecutorRegistry::Global().Acquire(policy);
  ASSERT_TRUE(inherited.ok());
  ParallelContext warm{inherited->get(), nullptr, nullptr, "Test"};
  ASSERT_TRUE(ParallelFor(warm, 1000, {"warm", 1}, [](int64_t, int64_t) { return Status::Ok(); }).ok());
  // Past the spin window: the workers are parked on the executor's condition variable,
  // whose destruction in the child would otherwise wait for them forever.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hang fails the test instead of stalling it
    int failures = 0;
    std::shared_ptr<CpuExecutor> old = *inherited;
    failures += !old->Forked() + (old->participants() != 1);
    std::vector<int64_t> out(10000);
    ParallelContext ctx{old.get(), nullptr, nullptr, "Test"};
    failures += !ParallelFor(ctx, out.size(), {"child", 16}, [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e; ++i) out[i] = i;
                   return Status::Ok();
                 }).ok();
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) failures += out[i] != i;
    auto fresh = ExecutorRegistry::Global().Acquire(policy);
    failures += !fresh.ok() || fresh->get() == old.get() || (*fresh)->Forked() || (*fresh)->participants() != 3;
    if (fresh.ok()) {
      EventCollector events;
      ParallelContext fresh_ctx{fresh->get(), nullptr, &events, "Test"};
      std::atomic<int> entered{0};
      failures += !ParallelFor(fresh_ctx, 3, {"fresh", 1}, [&](int64_t, int64_t) {
                     entered.fetch_add(1);
                     // hold the block until a second participant has one (bounded)
                     const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                     while (entered.load() < 2 && std::chrono::steady_clock::now() < deadline)
                       std::this_thread::yield();
                     return Status::Ok();
                   }).ok();
      failures += entered.load() != 3 || events.regions().at(0).observed_participants < 2;
    }
    { auto drop = std::move(*inherited); }  // every reference dropped: the inherited executor
    old.reset();                            // is destroyed here and must not wait for workers
    _exit(failures == 0 ? 0 : 10 + failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status) << " (14: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed checks in the child: " << WEXITSTATUS(status) - 10;
}

TEST(CpuExecutor, WorkersParkAfterSpinWindow) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  policy.spin_microseconds = 100;
  auto executor = CpuExecutor::Create(policy);
  ASSERT_TRUE(executor.ok());
  ParallelContext ctx{executor->get(), nullptr, nullptr, "Test"};
  ASSERT_TRUE(ParallelFor(ctx, 2, {"wake", 1}, [](int64_t, int64_t) { return Status::Ok(); }).ok());
  // After the spin window the worker sleeps; a later region must still wake it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<int> ran{0};
  ASSERT_TRUE(ParallelFor(ctx, 2, {"wake", 1}, [&](int64_t, int64_t) {
                ran.fetch_add(1);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(ran.load(), 2);
}

// Prepare (the start of a session run) wakes workers parked between runs, so that the
// run's first region finds them awake instead of waking them itself; they spin their
// window (1 s here, so that the test sees them awake) and park again. Polls without
// timing anything: a worker that never wakes fails the test at the deadline.
class PrepareTest : public ::testing::TestWithParam<int> {};

bool WaitUntil(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

std::shared_ptr<CpuExecutor> MakeParkedExecutor(int threads, int64_t spin_microseconds) {
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  policy.spin_microseconds = spin_microseconds;
  auto e = CpuExecutor::Create(policy);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  // New workers spin their window, then park.
  EXPECT_TRUE(WaitUntil([&] { return (*e)->ParkedWorkers() == threads - 1; }));
  return *e;
}

TEST_P(PrepareTest, WakesParkedWorkersBeforeTheFirstRegion) {
  const int threads = GetParam();
  auto executor = MakeParkedExecutor(threads, CpuExecutionPolicy::kMaxSpinMicroseconds);
  EXPECT_TRUE(executor->Prepare());
  EXPECT_TRUE(WaitUntil([&] { return executor->ParkedWorkers() == 0; })) << executor->ParkedWorkers() << " parked";
  // Awake and spinning: a second Prepare has no one to wake.
  EXPECT_FALSE(executor->Prepare());
  // The prepared workers run the first region like any other: every index exactly once.
  ParallelContext ctx{executor.get(), nullptr, nullptr, "Test"};
  constexpr int64_t kTotal = 1009;
  std::vector<std::atomic<int>> hits(kTotal);
  ASSERT_TRUE(ParallelFor(ctx, kTotal, {"prepared", 7}, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                return Status::Ok();
              }).ok());
  for (int64_t i = 0; i < kTotal; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
}

// A run whose share of the pool is one participant opens no region (Run runs it inline),
// so Prepare leaves the parked workers alone: here the other callers, each holding a
// CallerScope as Session::Run does, take every thread.
TEST_P(PrepareTest, LeavesWorkersParkedWhenTheCallersShareIsOne) {
  const int threads = GetParam();
  auto executor = MakeParkedExecutor(threads, /*spin_microseconds=*/0);
  std::atomic<int> scoped{0};
  std::atomic<bool> release{false};
  std::vector<std::thread> others;
  for (int i = 0; i < threads - 1; ++i) {
    others.emplace_back([&] {
      CpuExecutor::CallerScope scope(*executor);
      scoped.fetch_add(1);
      while (!release.load()) std::this_thread::yield();
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return scoped.load() == threads - 1; }));
  EXPECT_FALSE(executor->Prepare()) << threads - 1 << " other callers on " << threads << " threads";
  release.store(true);
  for (auto& t : others) t.join();
  // Alone again: the share is the whole pool.
  EXPECT_TRUE(executor->Prepare());
}

TEST_P(PrepareTest, InsideACallerScopeCountsTheCallerOnce) {
  const int threads = GetParam();
  auto executor = MakeParkedExecutor(threads, /*spin_microseconds=*/0);
  CpuExecutor::CallerScope scope(*executor);  // as Session::Run holds it around Prepare
  EXPECT_TRUE(executor->Prepare());
}

INSTANTIATE_TEST_SUITE_P(Threads, PrepareTest, ::testing::Values(2, 4));

// Session::Run learns from this count whether a run wanted workers: regions Run opens with
// workers count, those it runs inline (serial executor, nested, share of one) do not.
TEST(CpuExecutor, CountsRegionsOpenedWithWorkersOnTheCallingThread) {
  auto executor = MakeExecutor(2);
  auto serial = MakeExecutor(1);
  const auto task = [](int) {};
  const int64_t before = CpuExecutor::RegionsOpenedOnThisThread();
  executor->Run(2, task);
  EXPECT_EQ(CpuExecutor::RegionsOpenedOnThisThread(), before + 1);
  serial->Run(2, task);
  executor->Run(1, task);
  executor->Run(2, [&](int p) {
    if (p == 0) executor->Run(2, task);  // nested: inline
  });
  EXPECT_EQ(CpuExecutor::RegionsOpenedOnThisThread(), before + 2);
  int64_t other_thread = -1;
  std::thread([&] { other_thread = CpuExecutor::RegionsOpenedOnThisThread(); }).join();
  EXPECT_EQ(other_thread, 0);
}

TEST(CpuExecutor, PrepareWithoutWorkersWakesNobody) {
  auto executor = MakeExecutor(1);
  EXPECT_FALSE(executor->Prepare());
  EXPECT_EQ(executor->ParkedWorkers(), 0);
}

// A worker pinned to its caller's CPU (as when the scheduler wakes it there because the
// other CPUs are busy) can only run when the caller yields it the CPU, and the caller can
// only get it back when the spinning worker yields: every region still completes and
// covers its range exactly once, whatever the spin window. (How long the caller waits is
// benchmarks/missed_worker_overhead's business, not a test's.)
class SharedCpuTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(SharedCpuTest, RegionsCompleteWithTheWorkerOnTheCallersCpu) {
  const int cpu = AvailableCpus().front();
  cpu_set_t old_set, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(old_set), &old_set), 0);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  {
    CpuExecutionPolicy policy;
    policy.num_threads = 2;
    policy.spin_microseconds = GetParam();
    policy.affinity = {cpu};
    auto executor = CpuExecutor::Create(policy);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    ParallelContext ctx{executor->get(), nullptr, nullptr, "Test"};
    constexpr int64_t kTotal = 203;
    for (int round = 0; round < 100; ++round) {
      std::vector<std::atomic<int>> hits(kTotal);
      ASSERT_TRUE(ParallelFor(ctx, kTotal, {"shared_cpu", 5}, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                    return Status::Ok();
                  }).ok());
      for (int64_t i = 0; i < kTotal; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round << " index " << i;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(old_set), &old_set), 0);
}

INSTANTIATE_TEST_SUITE_P(SpinWindows, SharedCpuTest, ::testing::Values(0, 200, 20000));

// With a join wait, the caller lets its workers join before it runs its own share, so that
// each admitted participant runs its own block (the forced-parallel test mode relies on
// it). Without one, the caller runs the blocks of workers that have not woken yet. (Each
// block takes 2 ms, so a joined worker has claimed its block before the caller is free to
// take it.)
TEST(CpuExecutor, JoinWaitMakesEveryAdmittedParticipantRunBlocks) {
  CpuExecutionPolicy policy;
  policy.num_threads = 4;
  policy.spin_microseconds = 0;  // workers park at once: the slowest case to join
  policy.join_wait_microseconds = CpuExecutionPolicy::kMaxSpinMicroseconds;
  auto executor = CpuExecutor::Create(policy);
  ASSERT_TRUE(executor.ok());
  EXPECT_NE(policy.Key(), (CpuExecutionPolicy{4, 0, {}, 0}.Key())) << "distinct executors in the registry";
  EventCollector events(/*region_capacity=*/64, /*node_capacity=*/1);
  ParallelContext ctx{executor->get(), nullptr, &events, "Test"};
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(ParallelFor(ctx, 4, {"tiny", 1}, [](int64_t, int64_t) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
                  return Status::Ok();
                }).ok());
  }
  ASSERT_EQ(events.regions().size(), 20u);
  for (const RegionEvent& region : events.regions()) {
    EXPECT_EQ(region.admitted_participants, 4);
    EXPECT_EQ(region.observed_participants, 4);
  }
}

// The caller's wait for a joined worker is the region's end wait: here the caller's own
// blocks are empty and each worker's block sleeps 20 ms after joining (the join wait lets
// every worker join before the caller starts), so the caller waits nearly all of it.
TEST(CpuExecutor, EndWaitRecordsTheCallerWaitingForAJoinedWorker) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  policy.join_wait_microseconds = CpuExecutionPolicy::kMaxSpinMicroseconds;
  auto executor = CpuExecutor::Create(policy);
  ASSERT_TRUE(executor.ok());
  EventCollector events(/*region_capacity=*/8, /*node_capacity=*/1);
  ParallelContext ctx{executor->get(), nullptr, &events, "Test"};
  ASSERT_TRUE(ParallelForWithParticipant(ctx, 2, {"slow_worker", 1}, [](int participant, int64_t, int64_t) {
                if (participant != 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                return Status::Ok();
              }).ok());
  ASSERT_EQ(events.regions().size(), 1u);
  const RegionEvent region = events.regions()[0];
  EXPECT_EQ(region.joined_participants, 2);
  EXPECT_GE(region.first_join_ns, 0);
  EXPECT_GE(region.end_wait_ns, 10'000'000) << "wall " << region.wall_ns;
  EXPECT_GE(region.wall_ns, 20'000'000);
}

// Under a join wait participants do not help each other; a worker that joins too late
// (here the wait is 1 us and workers park at once) leaves its run to the caller, which runs
// it after the region: every block still runs exactly once.
TEST(CpuExecutor, JoinWaitRunsEveryBlockExactlyOnceWhenWorkersAreLate) {
  CpuExecutionPolicy policy;
  policy.num_threads = 4;
  policy.spin_microseconds = 0;
  policy.join_wait_microseconds = 1;
  auto executor = CpuExecutor::Create(policy);
  ASSERT_TRUE(executor.ok());
  ParallelContext ctx{executor->get(), nullptr, nullptr, "Test"};
  constexpr int64_t kTotal = 997;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(kTotal);
    ASSERT_TRUE(ParallelFor(ctx, kTotal, {"late", 3}, [&](int64_t b, int64_t e) {
                  for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                  return Status::Ok();
                }).ok());
    for (int64_t i = 0; i < kTotal; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round << " index " << i;
  }
}

}  // namespace
}  // namespace onnx_light
