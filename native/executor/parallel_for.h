// ParallelFor: the one way a kernel runs work in parallel.
//
//   ParallelPlan plan{"add.blocks", /*grain=*/4096};
//   OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), n, plan, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
//     return Status::Ok();
//   }));
//
// Contract (DESIGN.md, executor): [0, total) is cut into contiguous blocks that depend only
// on (total, grain, participants); participant p runs its own contiguous run of blocks, the
// caller being participant 0, then helps finish others' unclaimed blocks (so a worker the
// OS has not scheduled delays nobody; outputs do not depend on who ran a block). Under a
// policy with a join wait (the forced-parallel test mode) participants do not help: each
// runs exactly its own run, and the caller runs a never-joined worker's run at the end.
// A call from inside a region runs inline and is recorded as nested. Cancellation is polled between blocks (->
// Cancelled); the first error a block returns is returned and the other participants stop at their next block boundary.
#pragma once

#include <cstdint>

#include "native/core/status.h"
#include "native/executor/cancellation.h"
#include "native/executor/cpu_executor.h"
#include "native/executor/function_ref.h"
#include "native/executor/region_events.h"

namespace onnx_light {

// What a kernel needs to open regions: handed to it by the session via KernelContext.
struct ParallelContext {
  CpuExecutor* executor = nullptr;  // null: everything runs serially
  const CancellationToken* cancellation = nullptr;
  EventCollector* events = nullptr;  // null: events off, zero cost
  const char* kernel = "";           // op type, for region events
};

struct ParallelPlan {
  const char* label = "";    // names the region in events (static storage)
  int64_t grain = 1;         // smallest block in the caller's work units; blocks are multiples
  int max_participants = 0;  // 0: as many as the executor has
};

// Blocks per participant: more than one so that cancellation and early stop on error are
// prompt, few enough that per-block overhead stays negligible. An executor property, not
// a kernel threshold (kernels tune `grain` and their serial cut-over).
inline constexpr int64_t kBlocksPerParticipant = 4;

// The static partition of a region.
struct Partition {
  int64_t block_size = 0;  // multiple of grain
  int64_t num_blocks = 0;
  int participants = 0;  // admitted: min(requested, num_blocks)
  // Blocks [first, last) of participant p.
  int64_t FirstBlock(int p) const { return num_blocks * p / participants; }
  int64_t LastBlock(int p) const { return num_blocks * (p + 1) / participants; }
};
Partition ComputePartition(int64_t total, int64_t grain, int requested_participants);

// Participants a region would be offered (executor size capped by the plan); 1 without an
// executor or inside a region. Kernels use it to size per-participant scratch.
int AvailableParticipants(const ParallelContext& ctx, const ParallelPlan& plan);

Status ParallelFor(const ParallelContext& ctx, int64_t total, const ParallelPlan& plan,
                   FunctionRef<Status(int64_t begin, int64_t end)> fn);

// As ParallelFor, but fn also receives the index of the participant running the block
// (unique among concurrently running blocks), so that each can use its own slice of
// scratch reserved before the call.
Status ParallelForWithParticipant(const ParallelContext& ctx, int64_t total, const ParallelPlan& plan,
                                  FunctionRef<Status(int participant, int64_t begin, int64_t end)> fn);

}  // namespace onnx_light
