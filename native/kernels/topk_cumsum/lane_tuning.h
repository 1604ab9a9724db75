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

inline std::vector<ParamSpec> LaneTuningParams(int64_t minimum_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the op runs serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

}  // namespace onnx_light
