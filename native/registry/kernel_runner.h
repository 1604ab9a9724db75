// KernelRunner: creates one registered kernel the way the session would (attributes,
// inputs, tuning overrides) and runs it with a chosen participant count, returning its
// outputs, region events and allocation accounting. Used by the googletest harness
// (kernel_test_util.h), the calibrators, the inventory's exemption measurements and the
// kernel_baseline benchmark (through onnx_light._native.run_kernel).
//
//   KernelRunner r("Add", 14);
//   r.Input(a).Input(b).Tuning(param::kMinimumElements, int64_t{1});
//   OL_ASSIGN_OR_RETURN(KernelRunResult serial, r.Run(1));
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "native/registry/kernel.h"

namespace onnx_light {

struct KernelRunResult {
  // Declared first so that it outlives the outputs it allocated.
  std::shared_ptr<Allocator> allocator;
  std::vector<Value> outputs;
  std::vector<RegionEvent> regions;
  AllocationStats allocation;
  int64_t peak_scratch = 0;
  int64_t compute_ns = 0;  // wall time of Compute alone (not kernel creation)
  int64_t copies = 0;      // tensors the kernel copied rather than aliased
};

class KernelRunner {
 public:
  KernelRunner(std::string op, int opset_version, std::string domain = "");

  KernelRunner& Input(Tensor tensor);
  KernelRunner& InputValue(Value value);
  // An input the kernel also sees at creation (KernelInfo::constant_input), like an
  // initializer of the session's graph.
  KernelRunner& ConstantInput(Tensor tensor);
  KernelRunner& MissingInput();  // an optional input left empty
  KernelRunner& ClearInputs();
  KernelRunner& Outputs(int n);
  KernelRunner& Attr(const std::string& name, int64_t value);
  KernelRunner& Attr(const std::string& name, float value);
  KernelRunner& Attr(const std::string& name, const std::string& value);
  KernelRunner& Attr(const std::string& name, std::vector<int64_t> values);
  KernelRunner& Attr(const std::string& name, std::vector<float> values);
  KernelRunner& Attr(const std::string& name, std::vector<std::string> values);
  KernelRunner& Attr(const std::string& name, Tensor value);
  KernelRunner& Attr(Attribute attribute);
  KernelRunner& NodeName(std::string name);
  // Resolves the kernel's tuning through `source` (a profile) instead of the portable
  // defaults; null restores the defaults. Not owned: it must outlive the runs.
  KernelRunner& Source(const TuningSource* source);
  // Overrides a tuning value of the kernel instance (checked against its schema at Run);
  // overrides apply on top of the source.
  KernelRunner& Tuning(const std::string& name, ParamValue value);
  KernelRunner& ClearTuning();
  // Caps the bytes the run's allocator hands out (ResourceExhausted beyond).
  KernelRunner& MemoryLimit(int64_t bytes);
  // Runs allocate from `allocator` (its own limit applies, not MemoryLimit) instead of a
  // fresh allocator each, as a session's nodes do run after run: a block an earlier run
  // freed into its cache is reused, already mapped. A result's allocation stats are still
  // its own run's (allocations, bytes, and current and peak bytes above those live when it
  // started). Null restores a fresh allocator per run.
  KernelRunner& SharedAllocator(std::shared_ptr<Allocator> allocator);
  // Runs the kernel's subgraphs (FlexAttention's score_mod, a Loop body) with `runner`
  // (not owned: it must outlive the runs); without one, a kernel that needs it fails.
  KernelRunner& Subgraphs(SubgraphRunner* runner);
  // How long a parallel run's caller waits for its workers to join
  // (CpuExecutionPolicy::join_wait_microseconds; 0, the default, never waits).
  KernelRunner& JoinWaitMicroseconds(int64_t microseconds);

  // The def that serves the inputs given so far, and the dispatch element type.
  StatusOr<const KernelDef*> FindDef(DataType* element_type = nullptr) const;

  // Creates the kernel and runs it with `num_threads` participants (1 = serial, no
  // executor; more than the cores is allowed). The executor of a parallel run is kept
  // (also across serial runs) for the next run with the same count, so that repeated
  // runs do not measure thread start-up.
  // `cancel` is polled between blocks.
  StatusOr<KernelRunResult> Run(int num_threads, const CancellationToken* cancel = nullptr);

 private:
  std::string op_, domain_, node_name_ = "test_node";
  int opset_version_;
  std::vector<std::unique_ptr<Value>> inputs_;
  std::vector<bool> constant_;  // per input: offered to the kernel at creation
  int num_outputs_ = 1;
  AttributeMap attributes_;
  std::vector<std::pair<std::string, ParamValue>> tuning_overrides_;
  const TuningSource* source_ = nullptr;
  int64_t memory_limit_ = Allocator::kNoLimit;
  std::shared_ptr<Allocator> shared_allocator_;
  SubgraphRunner* subgraphs_ = nullptr;
  int64_t join_wait_microseconds_ = 0;
  std::shared_ptr<CpuExecutor> executor_;
};

}  // namespace onnx_light
