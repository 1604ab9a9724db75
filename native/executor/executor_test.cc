// ParallelFor and CpuExecutor behaviour: partitions, participants, nesting, cancellation,
// errors, events, registry sharing. Run with 1, 2, 4 and 8 participants on whatever cores
// the machine has (more participants than cores is part of the contract).
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace onnx_light
