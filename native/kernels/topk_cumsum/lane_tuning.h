// The tuning schema shared by TopK and CumSum: both split independent lanes along one
// axis across participants (ThresholdedParallel, a lane costing its length in elements).
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/thresholded_parallel.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// Portable parallel.minimum_elements defaults: the serial run must last about 100 us
// (about three times the ~30 us, 100k-cycle cost of opening a region). Serial costs per
// element from benchmarks/reduce_norm.
inline constexpr int64_t kTopKMinimum = int64_t{1} << 13;    // gather + partial sort (k=10): ~17 ns/element
inline constexpr int64_t kCumSumMinimum = int64_t{1} << 17;  // one dependent add per element: ~0.6 ns/element

// Smallest parallel block (the ParallelFor grain), in the same unit. The executor cuts a
// region into kBlocksPerParticipant (4) blocks per participant when the grain allows, so the
// grain must leave a region at the minimum that many: TopK's minimum / 8 is 4 blocks each
// at 2 participants, about 17 us of gathering a block (a block's claim is one atomic: noise
// at that size). 16384 (its old value, CumSum's) held 16384 * 17 ns = 280 us, twice a whole
// region at the minimum: 512 scanned lanes of 1000 (62 units each) made 2 blocks, one per
// participant at 2 threads, nothing to balance a late or slow one with. CumSum's 16384
// elements are about 10 us.
inline constexpr int64_t kTopKBlock = kTopKMinimum / 8;
inline constexpr int64_t kCumSumBlock = 16384;

inline std::vector<ParamSpec> LaneTuningParams(int64_t minimum_elements, int64_t block_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the op runs serially"),
          ParamSpec::Int64(param::kBlockElements, block_elements, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

}  // namespace onnx_light
