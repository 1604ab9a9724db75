// GraphPlan: what the session derives from a Graph once, before any run: value slots,
// a topological order, one kernel instance per node and when each value dies.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "native/graph/graph.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {

// A kernel created for one node and one element type of its dispatch input.
struct KernelInstance {
  DataType element_type = DataType::kUndefined;
  const KernelDef* def = nullptr;
  ResolvedTuning tuning;
  std::unique_ptr<OpKernel> kernel;
  // Per input: the kernel absorbed it at creation (KernelInfo::AbsorbConstantInput), and
  // the bytes it holds in its place.
  std::vector<bool> absorbed;
  std::vector<int64_t> held_bytes;
  // Per input: the kernel consumed it (discarded its storage while packing it).
  std::vector<bool> consumed;
};

struct PlannedNode {
  const Node* node = nullptr;
  size_t index = 0;   // position in graph.nodes
  std::string where;  // "Add node 'n3'"
  int opset = 0;
  std::vector<DataType> input_types;  // statically known, else kUndefined
  std::vector<int> inputs;            // slot per input, -1 when absent
  // Per input: the graph's initializer when the input is one that no feed can override
  // (handed to kernels as KernelInfo::constant_input), else null.
  std::vector<const Tensor*> constant_inputs;
  // Per input: the initializer there was released (every consumer absorbed it); a kernel
  // created for this node at run time could not see it.
  std::vector<bool> released_inputs;
  // Per input, while the primary kernel is created only (empty afterwards): its kernel may
  // consume the initializer's storage (KernelInfo::SetConsumableInputs).
  std::vector<bool> consumable_inputs;
  std::vector<int> outputs;        // slot per output, -1 when unused
  std::vector<int> release_after;  // slots whose last reader is this node
  int dispatch_input = -1;
  // Kernel for the statically known dispatch type (null kernel when the type is unknown
  // until run time); kernels for other run-time types are created on first use.
  KernelInstance primary;
  std::mutex others_mutex;
  std::vector<std::unique_ptr<KernelInstance>> others;
};

struct GraphPlan {
  const Graph* graph = nullptr;
  const GraphPlan* parent = nullptr;  // enclosing graph's plan for subgraphs
  std::map<std::string, int> slots;   // value name -> slot
  int num_slots = 0;
  // Slot and value of each initializer; a released one (kernel.h, "Absorbing a constant
  // input") keeps its element type and shape, without data.
  std::vector<std::pair<int, Tensor>> initializers;
  std::vector<bool> initializer_released;  // per entry of `initializers`
  std::vector<int> input_slots;            // per graph input
  std::vector<bool> input_has_default;     // an initializer of the same name (optional feed)
  std::vector<int> output_slots;           // per graph output
  // Values captured from the enclosing scope: slot here <- slot in the parent's frame.
  std::vector<std::pair<int, int>> outer_values;
  std::vector<std::unique_ptr<PlannedNode>> nodes;  // in execution order
};

// Creates the kernel of `node` for `element_type`: KernelRegistry lookup, tuning from
// `tuning_source` (null: portable defaults), factory.
StatusOr<std::unique_ptr<KernelInstance>> CreateKernelInstance(const PlannedNode& node, DataType element_type,
                                                               const TuningSource* tuning_source);

// Plans `graph` and, recursively, every subgraph attribute of its nodes (added to
// `subgraph_plans`, keyed by the Graph they plan). `parent` is null for the main graph.
// With `releasable` (the graph's own initializer table, which the caller owns), an
// initializer that every consumer absorbed, that is no graph output and that no subgraph
// or lazily created kernel reads is released as soon as its last consumer's kernel is
// created: in the plan and in `releasable` it becomes a tensor of the same type and shape
// without data, so that its bytes return once no one else holds them.
StatusOr<std::unique_ptr<GraphPlan>> PlanGraph(const Graph& graph, const GraphPlan* parent,
                                               const TuningSource* tuning_source,
                                               std::map<const Graph*, std::unique_ptr<GraphPlan>>* subgraph_plans,
                                               std::map<std::string, Tensor>* releasable = nullptr);

}  // namespace onnx_light
