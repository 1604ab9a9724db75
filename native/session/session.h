// Session: a planned graph ready to run. Created once from a Graph (kernels instantiated,
// tuning resolved, executor acquired), then Run any number of times, from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/core/value.h"
#include "native/executor/cancellation.h"
#include "native/executor/cpu_execution_policy.h"
#include "native/executor/cpu_executor.h"
#include "native/executor/region_events.h"
#include "native/graph/graph.h"
#include "native/tuning/schema.h"

namespace onnx_light {

struct GraphPlan;

struct RunOptions {
  const CancellationToken* cancellation = nullptr;  // polled between nodes and blocks
  EventCollector* events = nullptr;                 // node and region events; null = off
};

// Limits a session holds its runs to.
struct SessionOptions {
  // Bytes the session's tensors may hold at once (intermediates, outputs, kernel scratch;
  // outputs a caller keeps count until released). An allocation beyond it fails at once
  // with ResourceExhausted naming the node and the size, and the process lives on.
  // 0 = the default guard: the machine's physical memory (no swap), beyond which an
  // allocation cannot succeed without thrashing or the OOM killer.
  int64_t memory_limit_bytes = 0;

  Status Validate() const;
  // The limit the session's allocator gets (memory_limit_bytes, or the default guard).
  int64_t EffectiveMemoryLimit() const;
};

// The machine's physical memory in bytes (Allocator::kNoLimit when unknown).
int64_t PhysicalMemoryBytes();

// One resolved tuning value of one node's kernel, and where it came from.
struct TuningValueReport {
  std::string node;    // "Add node 'n3'"
  std::string schema;  // SchemaKey::ToString()
  std::string parameter;
  std::string value;
  ValueSource source;
};

// The session's constant memory (Session::constant_memory): initializers of every graph,
// retained or released, and what absorbing kernels hold in their place.
struct ConstantMemory {
  int64_t retained_bytes = 0;  // initializers the session holds (a graph input's default too)
  int64_t released_bytes = 0;  // initializers released after every consumer absorbed them
  int released_initializers = 0;
  int64_t absorbed_held_bytes = 0;  // what the absorbing kernels hold instead (packed forms)
  // Released initializers whose kernel consumed them: returned their pages to the system
  // while packing them (registry/kernel.h, "Consuming a constant input").
  int consumed_initializers = 0;
};

class Session {
 public:
  // Plans `graph` (InvalidArgument for cycles, dangling inputs, malformed graphs;
  // NotImplemented for ops without a kernel). Subgraphs share the session's executor.
  // The session plans its own copy of the graph (tensors share their buffers with the
  // caller's) and releases from it the initializers that every consumer absorbed
  // (registry/kernel.h, "Absorbing a constant input"), as soon as the last consumer's
  // kernel is created; their bytes return once the caller drops its graph too.
  static StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Graph> graph, const CpuExecutionPolicy& policy,
                                                   std::shared_ptr<const TuningSource> tuning_source = nullptr,
                                                   const SessionOptions& options = {});
  // The same, taking the graph over: released initializers' bytes return during creation
  // when nothing else holds them (the Python binding gives its graph this way).
  static StatusOr<std::unique_ptr<Session>> Create(Graph graph, const CpuExecutionPolicy& policy,
                                                   std::shared_ptr<const TuningSource> tuning_source = nullptr,
                                                   const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Graph& graph() const { return *graph_; }
  // Null under a serial policy.
  CpuExecutor* executor() const { return executor_.get(); }
  const CpuExecutionPolicy& policy() const { return policy_; }
  // The allocator's limit in bytes (SessionOptions::EffectiveMemoryLimit()).
  int64_t memory_limit_bytes() const { return allocator_->limit_bytes(); }
  AllocationStats memory() const { return allocator_->stats(); }
  ConstantMemory constant_memory() const;

  // Runs the graph. `feeds` by graph input name (inputs with an initializer may be
  // omitted); `output_names` empty = every graph output, in graph order. The outputs
  // keep the session's allocator alive, so they may outlive the session.
  StatusOr<std::vector<Value>> Run(const std::vector<std::pair<std::string, Value>>& feeds,
                                   const std::vector<std::string>& output_names, const RunOptions& options = {}) const;

  // Wakes the executor's workers parked since the last run (CpuExecutor::Prepare) unless
  // this session's last run opened no region with workers (a model too small to split, or
  // runs that concurrent callers made serial): then a run would wake them for nothing.
  // Run calls it; a binding may call it earlier, before converting feeds. Returns whether
  // it woke any.
  bool PrepareWorkers() const;

  // Every tuning value of every kernel instance created so far (subgraphs included).
  std::vector<TuningValueReport> TuningReport() const;

  class Runner;  // executes plans (session.cc)

 private:
  Session() = default;
  Status ValidateFeed(const ValueInfo& declared, const Value& value) const;

  std::shared_ptr<const Graph> graph_;
  CpuExecutionPolicy policy_;
  std::shared_ptr<CpuExecutor> executor_;
  std::shared_ptr<const TuningSource> tuning_source_;
  std::shared_ptr<Allocator> allocator_;  // outputs of Run keep it alive
  std::unique_ptr<GraphPlan> plan_;
  std::map<const Graph*, std::unique_ptr<GraphPlan>> subgraph_plans_;
  // Whether the last run (of any caller) opened a region with workers; true until a run
  // says otherwise. A hint: a stale value costs one needless or one missed wake-up.
  mutable std::atomic<bool> last_run_opened_region_{true};
};

}  // namespace onnx_light
