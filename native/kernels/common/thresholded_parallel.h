// ThresholdedParallel: the one way a kernel chooses between its serial loop and ParallelFor.
//
//   // Constructor: read the node's tuning once.
//   OL_RETURN_IF_ERROR(parallel_.Init(info));  // parallel.minimum_elements, parallel.block_elements
//   // Compute: `rows` rows of `cols` elements each.
//   return parallel_.Run(ctx.parallel(), "softmax.rows", rows, /*cost=*/cols, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) SoftmaxRow(x + r * cols, y + r * cols, cols);
//   });
//
// Contract: the work is `units` independent units of `cost` work each (elements, multiply-
// adds, row reads: whatever the kernel's minimum parameter counts). Below `minimum` total
// work fn(0, units) runs once on the calling thread; otherwise fn runs over ParallelFor
// blocks of whole units. A block's size comes from the block parameter the kernel's schema
// declares, which names its unit:
//   parallel.block_elements, parallel.block_multiply_adds  work: a block holds
//                                                           max(1, block / cost) units
//   parallel.block_rows                                     units: a block holds `block` units
// A schema without a block parameter keeps the `block` (and unit) set before Init. fn may
// return Status or void; each unit is run whole by one participant, so as long as fn
// writes only its own units' outputs the result does not depend on the participant count.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/status.h"
#include "native/executor/parallel_for.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {

struct ThresholdedParallel {
  enum class BlockUnit { kWork, kUnits };

  int64_t minimum = 1;  // total work (units x cost) below which fn runs serially
  int64_t block = 1;    // block size, counted in work or in units
  BlockUnit block_unit = BlockUnit::kWork;
  // Also serial when every unit fits in one block (the ML families' rule: a single block
  // is not worth a region).
  bool serial_single_block = false;

  // Reads `minimum_param` and the block parameter the schema declares (see above).
  Status Init(const KernelInfo& info, const char* minimum_param = param::kMinimumElements) {
    OL_ASSIGN_OR_RETURN(minimum, info.tuning().Int64(minimum_param));
    const KernelTuningSchema* schema = info.tuning().schema();
    static constexpr struct {
      const char* name;
      BlockUnit unit;
    } kBlockParams[] = {{param::kBlockElements, BlockUnit::kWork},
                        {param::kBlockMultiplyAdds, BlockUnit::kWork},
                        {param::kBlockRows, BlockUnit::kUnits}};
    for (const auto& p : kBlockParams) {
      if (schema == nullptr || schema->Find(p.name) == nullptr) continue;
      OL_ASSIGN_OR_RETURN(block, info.tuning().Int64(p.name));
      block_unit = p.unit;
      break;
    }
    return Status::Ok();
  }

  // Whether `units` of `cost` each run serially (compared in double: no overflow). Units of
  // no cost are no work: serial.
  bool Serial(int64_t units, int64_t cost) const {
    if (static_cast<double>(units) * static_cast<double>(cost) < static_cast<double>(minimum)) return true;
    return serial_single_block && units <= UnitsPerBlock(cost);
  }

  // Units per block for units of `cost` (the ParallelFor grain).
  int64_t UnitsPerBlock(int64_t cost) const {
    if (block_unit == BlockUnit::kUnits) return block > 0 ? block : 1;
    const int64_t units = block / (cost > 0 ? cost : 1);
    return units > 0 ? units : 1;
  }

  // Runs fn(begin, end) over [0, units): serially or in blocks, as above. `serial` is the
  // caller's own reason to stay on the calling thread (string payloads allocate per element).
  template <typename Fn>
  Status Run(const ParallelContext& ctx, const char* label, int64_t units, int64_t cost, Fn&& fn,
             bool serial = false) const {
    if (units <= 0) return Status::Ok();
    if (serial || Serial(units, cost)) return Call(fn, int64_t{0}, units);
    return ParallelFor(ctx, units, ParallelPlan{label, UnitsPerBlock(cost)},
                       [&](int64_t begin, int64_t end) { return Call(fn, begin, end); });
  }

 private:
  template <typename Fn>
  static Status Call(Fn& fn, int64_t begin, int64_t end) {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, int64_t, int64_t>>) {
      fn(begin, end);
      return Status::Ok();
    } else {
      return fn(begin, end);
    }
  }
};

// The schema of a kernel whose units (a DFT bin, an einsum output element) each cost many
// multiply-adds: serial below parallel.minimum_elements multiply-adds in all, blocks of
// about parallel.block_multiply_adds.
inline std::vector<ParamSpec> WorkUnitTuning(int64_t minimum_multiply_adds, const std::string& unit) {
  return {
      MinimumElementsParam(minimum_multiply_adds, "multiply-adds (" + unit + "s x multiply-adds per " + unit +
                                                      ") below which the node runs serially"),
      ParamSpec::Int64(
          param::kBlockMultiplyAdds, 16384, 1, int64_t{1} << 40,
          "multiply-adds per block; a block holds max(1, this / cost of one " + unit + ") whole " + unit + "s"),
  };
}

}  // namespace onnx_light
