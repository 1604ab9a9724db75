// The loops of every Reduce* kernel, generic over a reducer R (reducer.h). Each output is
// reduced in one fixed order that depends only on the layout and on `chunk` (the
// algorithm.partial_chunk_elements value): contiguous runs are cut into chunks of
// `chunk` elements, each chunk reduced on its own and the chunk values combined in
// order. Serial blocks, parallel blocks and chunk-parallel partials all follow that
// order, so results are bit-identical for every participant count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/reduce_layout.h"
#include "native/registry/kernel.h"

namespace onnx_light {

struct ReduceTuning {
  ThresholdedParallel parallel;  // an output is a unit costing the elements it reads
  int64_t chunk_elements = 0;    // contiguous-run chunk (fixes the summation order)
};

namespace reduce_internal {

// Rows of kept outputs are accumulated in tiles of this many lanes (stack buffer sized for
// L1; it changes no result, since every lane sums its own elements in the same order).
inline constexpr int64_t kTileLanes = 256;

template <typename R>
typename R::Acc ReduceRun(const typename R::In* x, int64_t n, typename R::Acc shift) {
  using Acc = typename R::Acc;
  constexpr int kLanes = 8;  // independent accumulators: vectorisable, order still fixed
  Acc lane[kLanes];
  for (Acc& l : lane) l = R::Identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = R::Combine(lane[j], R::Map(x[i + j], shift));
  }
  Acc acc = R::Identity();
  for (const Acc& l : lane) acc = R::Combine(acc, l);
  for (; i < n; ++i) acc = R::Combine(acc, R::Map(x[i], shift));
  return acc;
}

template <typename R>
typename R::Acc ReduceChunkedRun(const typename R::In* x, int64_t n, int64_t chunk, typename R::Acc shift,
                                 typename R::Acc acc) {
  for (int64_t c = 0; c < n; c += chunk) acc = R::Combine(acc, ReduceRun<R>(x + c, std::min(chunk, n - c), shift));
  return acc;
}

// Outputs [begin, end) of a layout whose innermost group is reduced.
template <typename R>
void ReduceInnerRuns(const ReduceLayout& layout, const typename R::In* x, typename R::Out* y,
                     const typename R::Acc* shifts, int64_t chunk, int64_t begin, int64_t end) {
  using Acc = typename R::Acc;
  StridedWalk outputs = layout.outputs;
  StridedWalk reduced = layout.reduced;
  const int64_t runs = reduced.count();
  outputs.Seek(begin);
  for (int64_t o = begin; o < end; ++o, outputs.Next()) {
    const Acc shift = shifts ? shifts[o] : Acc{};
    Acc acc = R::Identity();
    reduced.Seek(0);
    for (int64_t r = 0; r < runs; ++r, reduced.Next()) {
      acc = ReduceChunkedRun<R>(x + outputs.offset() + reduced.offset(), layout.inner, chunk, shift, acc);
    }
    y[o] = R::Finalize(acc, layout.reduce_count, shift);
  }
}

// Outputs [begin, end) of a layout whose innermost group is kept: rows of `inner`
// contiguous outputs, each lane accumulated over the reduced positions in order.
template <typename R>
void ReduceKeptRows(const ReduceLayout& layout, const typename R::In* x, typename R::Out* y,
                    const typename R::Acc* shifts, int64_t begin, int64_t end) {
  using Acc = typename R::Acc;
  StridedWalk outputs = layout.outputs;
  StridedWalk reduced = layout.reduced;
  const int64_t positions = reduced.count();
  const int64_t inner = layout.inner;
  Acc acc[kTileLanes];
  for (int64_t o = begin; o < end;) {
    const int64_t row = o / inner;
    const int64_t row_end = std::min(end, (row + 1) * inner);
    outputs.Seek(row);
    for (int64_t t = o; t < row_end; t += kTileLanes) {
      const int64_t lanes = std::min(kTileLanes, row_end - t);
      const typename R::In* base = x + outputs.offset() + (t - row * inner);
      const Acc* shift = shifts ? shifts + t : nullptr;
      for (int64_t j = 0; j < lanes; ++j) acc[j] = R::Identity();
      reduced.Seek(0);
      for (int64_t r = 0; r < positions; ++r, reduced.Next()) {
        const typename R::In* p = base + reduced.offset();
        for (int64_t j = 0; j < lanes; ++j) acc[j] = R::Combine(acc[j], R::Map(p[j], shift ? shift[j] : Acc{}));
      }
      for (int64_t j = 0; j < lanes; ++j) y[t + j] = R::Finalize(acc[j], layout.reduce_count, shift ? shift[j] : Acc{});
    }
    o = row_end;
  }
}

// Few outputs with long contiguous runs: each (output, chunk) pair is a task whose value
// lands in `partials`; the merge combines them in chunk order, as ReduceChunkedRun does.
template <typename R>
Status ReduceSingleRunPartials(const ParallelContext& par, const ReduceLayout& layout, const typename R::In* x,
                               typename R::Out* y, const typename R::Acc* shifts, int64_t chunk,
                               typename R::Acc* partials) {
  using Acc = typename R::Acc;
  const int64_t n = layout.inner;
  const int64_t chunks = (n + chunk - 1) / chunk;
  OL_RETURN_IF_ERROR(ParallelFor(
      par, layout.num_outputs * chunks, ParallelPlan{"reduce.partials", 1}, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / chunks, c = (t % chunks) * chunk;
          partials[t] = ReduceRun<R>(x + o * n + c, std::min(chunk, n - c), shifts ? shifts[o] : Acc{});
        }
        return Status::Ok();
      }));
  for (int64_t o = 0; o < layout.num_outputs; ++o) {
    Acc acc = R::Identity();
    for (int64_t c = 0; c < chunks; ++c) acc = R::Combine(acc, partials[o * chunks + c]);
    y[o] = R::Finalize(acc, layout.reduce_count, shifts ? shifts[o] : Acc{});
  }
  return Status::Ok();
}

}  // namespace reduce_internal

// Reduces `x` into `y` (layout.num_outputs values) with reducer R, in parallel when the
// input has at least parallel.minimum_elements elements (tuning.parallel).
template <typename R>
Status RunReducer(KernelContext& ctx, const ReduceLayout& layout, const ReduceTuning& tuning, const typename R::In* x,
                  typename R::Out* y, const typename R::Acc* shifts) {
  using namespace reduce_internal;
  using Acc = typename R::Acc;
  if (layout.num_outputs == 0) return Status::Ok();
  if (layout.reduce_count == 0) {
    for (int64_t o = 0; o < layout.num_outputs; ++o) y[o] = R::Finalize(R::Identity(), 0, shifts ? shifts[o] : Acc{});
    return Status::Ok();
  }
  const int64_t chunk = tuning.chunk_elements;
  auto run_outputs = [&](int64_t begin, int64_t end) {
    if (layout.inner_reduced) {
      ReduceInnerRuns<R>(layout, x, y, shifts, chunk, begin, end);
    } else {
      ReduceKeptRows<R>(layout, x, y, shifts, begin, end);
    }
    return Status::Ok();
  };
  const ParallelContext& par = ctx.parallel();
  const ParallelPlan plan{"reduce.outputs", tuning.parallel.UnitsPerBlock(layout.reduce_count)};
  const int participants = AvailableParticipants(par, plan);
  if (tuning.parallel.Serial(layout.num_outputs, layout.reduce_count) || participants <= 1) {
    return run_outputs(0, layout.num_outputs);
  }

  const int64_t chunks = (layout.inner + chunk - 1) / chunk;
  if (layout.single_run && chunks > 1 && layout.num_outputs < kBlocksPerParticipant * participants) {
    const size_t bytes = static_cast<size_t>(layout.num_outputs * chunks) * sizeof(Acc);
    ScratchArena arena(ctx.allocator(), bytes);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(Acc * partials, arena.AllocateArray<Acc>(layout.num_outputs * chunks));
    ctx.RecordScratch(static_cast<int64_t>(bytes));
    return ReduceSingleRunPartials<R>(par, layout, x, y, shifts, chunk, partials);
  }
  return ParallelFor(par, layout.num_outputs, plan, run_outputs);
}

}  // namespace onnx_light
