// ForcedParallelTuning: the forced-parallel policy's TuningSource. Every `parallel.*`
// int64 or double parameter of every schema resolves to its minimum (as an explicit
// profile value), every other parameter to its portable default: each kernel that can
// split its work does so at the finest grain its schema allows, however small the input.
// Run with N > 1 participants, this puts every parallel path through N participants; a
// deterministic kernel must then give the serial result bit for bit.
//
//   ForcedParallelTuning forced;
//   KernelRunner r("Add", 14);
//   r.Input(a).Input(b).Source(&forced);
//   auto serial = r.Run(1);  auto four = r.Run(4);  // identical outputs
//
// The Python policy (onnx_light.kernel_tuning.forced_parallel_tuning) resolves the same
// values; the kernel test harness applies it to every kernel test when
// ONNX_LIGHT_TEST_FORCED_PARALLEL is set (native/registry/kernel_test_util.h).
#pragma once

#include <memory>
#include <string>

#include "native/tuning/schema.h"

namespace onnx_light {

inline constexpr char kForcedParallelPrefix[] = "parallel.";

class ForcedParallelTuning : public TuningSource {
 public:
  ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const override;
};

}  // namespace onnx_light
