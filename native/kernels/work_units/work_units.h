// Splitting outputs whose elements each cost many multiply-adds (a DFT bin, an einsum
// output element): serial below parallel.minimum_elements total multiply-adds, else
// ParallelFor over output elements in blocks of about parallel.block_multiply_adds.
// Each output element is computed whole by one participant, so results never depend on
// the participant count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/executor/parallel_for.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {

inline std::vector<ParamSpec> WorkUnitTuning(int64_t minimum_multiply_adds, const std::string& unit) {
  return {
      MinimumElementsParam(minimum_multiply_adds, "multiply-adds (" + unit + "s x multiply-adds per " + unit +
                                                      ") below which the node runs serially"),
      ParamSpec::Int64(
          "parallel.block_multiply_adds", 16384, 1, int64_t{1} << 40,
          "multiply-adds per block; a block holds max(1, this / cost of one " + unit + ") whole " + unit + "s"),
  };
}

struct WorkUnitPolicy {
  int64_t minimum_elements = 0;
  int64_t block_multiply_adds = 0;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(minimum_elements, info.tuning().Int64("parallel.minimum_elements"));
    OL_ASSIGN_OR_RETURN(block_multiply_adds, info.tuning().Int64("parallel.block_multiply_adds"));
    return Status::Ok();
  }
};

// Runs fn(begin, end) over `units` output elements of `cost` multiply-adds each.
template <typename Fn>
Status RunWorkUnits(const KernelContext& ctx, const WorkUnitPolicy& policy, const char* label, int64_t units,
                    int64_t cost, Fn&& fn) {
  if (units <= 0) return Status::Ok();
  const int64_t per_unit = cost > 0 ? cost : 1;
  if (static_cast<double>(units) * static_cast<double>(per_unit) < static_cast<double>(policy.minimum_elements)) {
    fn(int64_t{0}, units);
    return Status::Ok();
  }
  const int64_t grain = policy.block_multiply_adds / per_unit > 0 ? policy.block_multiply_adds / per_unit : 1;
  return ParallelFor(ctx.parallel(), units, ParallelPlan{label, grain}, [&](int64_t begin, int64_t end) {
    fn(begin, end);
    return Status::Ok();
  });
}

}  // namespace onnx_light
