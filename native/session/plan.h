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
  std::vector<std::pair<int, Tensor>> initializers;
  std::vector<int> input_slots;         // per graph input
  std::vector<bool> input_has_default;  // an initializer of the same name (optional feed)
  std::vector<int> output_slots;        // per graph output
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
StatusOr<std::unique_ptr<GraphPlan>> PlanGraph(const Graph& graph, const GraphPlan* parent,
                                               const TuningSource* tuning_source,
                                               std::map<const Graph*, std::unique_ptr<GraphPlan>>* subgraph_plans);

}  // namespace onnx_light
