// The elementwise families' tuning: their schema, and the policy read from it once per
// kernel. Work is split by ThresholdedParallel (native/kernels/common): contiguous output
// blocks of a multiple of parallel.block_elements once the output reaches
// parallel.minimum_elements, the serial loop below it; streamed stores are fenced at the
// end of every block.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/elementwise/streaming_store.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace elementwise {

// Portable defaults, from benchmarks/elementwise_bandwidth on a 2-core x86-64 (see
// README.md in this package): a region costs a few microseconds to start, which a memory-
// bound add repays from ~64K elements and a transcendental op from ~8K.
inline constexpr int64_t kCheapMinimumElements = 65536;
inline constexpr int64_t kTranscendentalMinimumElements = 8192;
inline constexpr int64_t kDefaultBlockElements = 4096;
// 4M elements (16 MB of float): beyond the last-level cache of most x86 servers' share per
// core, where the output is evicted before anything reads it again.
inline constexpr int64_t kDefaultStreamingStoreElements = int64_t{1} << 22;

// The schema every elementwise kernel declares.
inline std::vector<ParamSpec> ElementwiseTuning(int64_t minimum_elements) {
  return {
      MinimumElementsParam(minimum_elements, "output elements below which the kernel runs serially"),
      ParamSpec::Int64(param::kBlockElements, kDefaultBlockElements, 64, int64_t{1} << 30,
                       "output elements per block are a multiple of this (the ParallelFor grain)"),
      ParamSpec::Int64("algorithm.streaming_store_elements", kDefaultStreamingStoreElements, 1, int64_t{1} << 50,
                       "outputs of at least this many elements are written with non-temporal stores"),
  };
}

// Tuning values read once per kernel instance.
struct ElementwisePolicy {
  ThresholdedParallel parallel{kCheapMinimumElements, kDefaultBlockElements};  // the defaults before Init
  int64_t streaming_store_elements = kDefaultStreamingStoreElements;

  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel.Init(info));
    OL_ASSIGN_OR_RETURN(streaming_store_elements, info.tuning().Int64("algorithm.streaming_store_elements"));
    return Status::Ok();
  }

  // Whether an output of `elements` of type O is streamed (strings never are).
  template <typename O>
  bool Streams(int64_t elements) const {
    return std::is_trivially_copyable_v<O> && elements >= streaming_store_elements;
  }

  // Runs fn(begin, end) over [0, total) output elements (ThresholdedParallel, one element
  // a unit of work), fencing streamed stores after each call.
  template <typename Fn>
  Status Run(const KernelContext& ctx, const char* label, int64_t total, Fn&& fn) const {
    return parallel.Run(ctx.parallel(), label, total, /*cost=*/1, [&](int64_t begin, int64_t end) {
      fn(begin, end);
      StreamingFence();
    });
  }
};

}  // namespace elementwise
}  // namespace onnx_light
