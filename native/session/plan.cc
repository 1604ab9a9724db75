#include "native/session/plan.h"

#include <algorithm>
#include <set>

namespace onnx_light {
namespace {

// Prefixes `where` unless the kernel already named the node.
Status AtNode(const Status& status, const std::string& where) {
  if (status.ok() || status.message().find(where) != std::string::npos) return status;
  // A kernel names an unnamed node "Op node (unnamed)"; the graph knows its index: say
  // "Op node #3" once instead of both.
  const std::string unnamed = where.substr(0, where.find(" node ")) + " node (unnamed)";
  if (status.message().compare(0, unnamed.size(), unnamed) == 0) {
    return Status(status.code(), where + status.message().substr(unnamed.size()));
  }
  return status.WithContext(where + ": ");
}

template <typename Fn>
void ForEachSubgraph(const Node& node, Fn&& fn) {
  for (const auto& [name, attribute] : node.attributes) {
    if (attribute.g) fn(*attribute.g);
    for (const auto& g : attribute.graphs) {
      if (g) fn(*g);
    }
  }
}

// Names a graph reads but does not define (its outer-scope dependencies), subgraphs included.
void CollectFreeNames(const Graph& graph, std::set<std::string>* out) {
  std::set<std::string> defined;
  for (const auto& v : graph.inputs) defined.insert(v.name);
  for (const auto& [name, tensor] : graph.initializers) defined.insert(name);
  for (const auto& node : graph.nodes) defined.insert(node.outputs.begin(), node.outputs.end());
  const auto use = [&](const std::string& name) {
    if (!name.empty() && defined.count(name) == 0) out->insert(name);
  };
  for (const auto& node : graph.nodes) {
    for (const auto& name : node.inputs) use(name);
    ForEachSubgraph(node, [&](const Graph& sub) {
      std::set<std::string> inner;
      CollectFreeNames(sub, &inner);
      for (const auto& name : inner) use(name);
    });
  }
  for (const auto& v : graph.outputs) use(v.name);
}

const std::map<std::string, int>& EffectiveOpsets(const GraphPlan& plan) {
  const GraphPlan* p = &plan;
  while (p->graph->opset_imports.empty() && p->parent != nullptr) p = p->parent;
  return p->graph->opset_imports;
}

DataType StaticElementType(const GraphPlan& plan, const std::string& name) {
  for (const GraphPlan* p = &plan; p != nullptr; p = p->parent) {
    if (p->slots.count(name) == 0) continue;
    DataType t = p->graph->ElementTypeOf(name);
    if (t != DataType::kUndefined) return t;
  }
  return DataType::kUndefined;
}

class Planner {
 public:
  Planner(const Graph& graph, const GraphPlan* parent, const TuningSource* tuning_source,
          std::map<const Graph*, std::unique_ptr<GraphPlan>>* subgraph_plans, std::map<std::string, Tensor>* releasable)
      : graph_(graph), tuning_source_(tuning_source), subgraph_plans_(subgraph_plans), releasable_(releasable) {
    plan_ = std::make_unique<GraphPlan>();
    plan_->graph = &graph;
    plan_->parent = parent;
  }

  StatusOr<std::unique_ptr<GraphPlan>> Build() {
    OL_RETURN_IF_ERROR(DefineValues());
    OL_RETURN_IF_ERROR(ResolveReads());
    OL_ASSIGN_OR_RETURN(std::vector<size_t> order, TopologicalOrder());
    OL_RETURN_IF_ERROR(CreateNodes(order));
    ComputeLifetimes(order);
    for (const auto& node : graph_.nodes) {
      Status s = Status::Ok();
      ForEachSubgraph(node, [&](const Graph& sub) {
        if (!s.ok()) return;
        auto sub_plan = PlanGraph(sub, plan_.get(), tuning_source_, subgraph_plans_);
        if (!sub_plan.ok()) {
          s = sub_plan.status().WithContext(StrCat("in a subgraph of ", node.Where(&node - graph_.nodes.data()), ": "));
          return;
        }
        (*subgraph_plans_)[&sub] = std::move(sub_plan).value();
      });
      OL_RETURN_IF_ERROR(s);
    }
    return std::move(plan_);
  }

 private:
  int NewSlot(const std::string& name) {
    const int slot = plan_->num_slots++;
    plan_->slots[name] = slot;
    return slot;
  }

  Status DefineValues() {
    for (const auto& input : graph_.inputs) {
      if (input.name.empty()) return InvalidArgument("graph '", graph_.name, "' has an input without a name");
      if (plan_->slots.count(input.name)) return InvalidArgument("graph input '", input.name, "' is declared twice");
      plan_->input_slots.push_back(NewSlot(input.name));
      plan_->input_has_default.push_back(graph_.initializers.count(input.name) > 0);
    }
    for (const auto& [name, tensor] : graph_.initializers) {
      auto it = plan_->slots.find(name);
      const int slot = it != plan_->slots.end() ? it->second : NewSlot(name);
      plan_->initializers.emplace_back(slot, tensor);
      plan_->initializer_released.push_back(false);
    }
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      for (const auto& name : node.outputs) {
        if (name.empty()) continue;
        auto producer = producers_.find(name);
        if (producer != producers_.end()) {
          return InvalidArgument(node.Where(i), ": output '", name, "' is also produced by ",
                                 graph_.nodes[producer->second].Where(producer->second));
        }
        if (plan_->slots.count(name)) {
          return InvalidArgument(node.Where(i), ": output '", name, "' redefines a graph input or initializer");
        }
        producers_[name] = i;
        NewSlot(name);
      }
    }
    return Status::Ok();
  }

  // Slot of a value this graph reads; captures it from the enclosing scope if needed.
  StatusOr<int> SlotForRead(const std::string& name) {
    auto it = plan_->slots.find(name);
    if (it != plan_->slots.end()) return it->second;
    if (plan_->parent != nullptr) {
      auto outer = plan_->parent->slots.find(name);
      if (outer != plan_->parent->slots.end()) {
        const int slot = NewSlot(name);
        plan_->outer_values.emplace_back(slot, outer->second);
        return slot;
      }
    }
    return InvalidArgument("'", name,
                           "' is not a graph input, an initializer, an outer-scope value or the output of any node");
  }

  Status ResolveReads() {
    reads_.resize(graph_.nodes.size());
    explicit_inputs_.resize(graph_.nodes.size());
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      for (const auto& name : node.inputs) {
        if (name.empty()) {
          explicit_inputs_[i].push_back(-1);
          continue;
        }
        auto slot = SlotForRead(name);
        if (!slot.ok())
          return InvalidArgument(node.Where(i), ": input '", name, "' dangles: ", slot.status().message());
        explicit_inputs_[i].push_back(*slot);
        reads_[i].push_back(*slot);
        ++reads_left_[*slot];
      }
      std::set<std::string> implicit;
      ForEachSubgraph(node, [&](const Graph& sub) { CollectFreeNames(sub, &implicit); });
      for (const auto& name : implicit) {
        auto slot = SlotForRead(name);
        if (!slot.ok())
          return InvalidArgument(node.Where(i), ": a subgraph reads '", name,
                                 "', which dangles: ", slot.status().message());
        reads_[i].push_back(*slot);
        kept_.insert(*slot);  // a subgraph reads it
      }
    }
    for (const auto& output : graph_.outputs) {
      auto slot = SlotForRead(output.name);
      if (!slot.ok()) return InvalidArgument("graph output '", output.name, "' dangles: ", slot.status().message());
      plan_->output_slots.push_back(*slot);
      kept_.insert(*slot);
    }
    return Status::Ok();
  }

  // Producer nodes that node i waits for.
  std::vector<size_t> Dependencies(size_t i) const {
    std::set<size_t> deps;
    for (int slot : reads_[i]) {
      auto it = slot_producer_.find(slot);
      if (it != slot_producer_.end()) deps.insert(it->second);
    }
    return {deps.begin(), deps.end()};
  }

  // Kahn's algorithm, ties broken by the graph's own order so plans are reproducible.
  StatusOr<std::vector<size_t>> TopologicalOrder() {
    for (const auto& [name, node] : producers_) slot_producer_[plan_->slots.at(name)] = node;
    const size_t n = graph_.nodes.size();
    std::vector<std::vector<size_t>> consumers(n);
    std::vector<size_t> waiting(n);
    std::set<size_t> ready;
    for (size_t i = 0; i < n; ++i) {
      const auto deps = Dependencies(i);
      waiting[i] = deps.size();
      for (size_t d : deps) consumers[d].push_back(i);
      if (deps.empty()) ready.insert(i);
    }
    std::vector<size_t> order;
    while (!ready.empty()) {
      const size_t i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (size_t c : consumers[i]) {
        if (--waiting[c] == 0) ready.insert(c);
      }
    }
    if (order.size() == n) return order;
    // Every unscheduled node waits on an unscheduled producer; walking producers from one
    // must revisit a node, and that node lies on a cycle.
    size_t current = 0;
    while (waiting[current] == 0) ++current;
    std::vector<size_t> path;
    std::set<size_t> seen;
    while (seen.insert(current).second) {
      path.push_back(current);
      for (size_t d : Dependencies(current)) {
        if (waiting[d] != 0) {
          current = d;
          break;
        }
      }
    }
    std::string cycle;
    for (auto it = std::find(path.begin(), path.end(), current); it != path.end(); ++it) {
      cycle += graph_.nodes[*it].Where(*it) + " <- ";
    }
    return InvalidArgument("graph '", graph_.name, "' has a cycle: ", cycle, graph_.nodes[current].Where(current),
                           " (each node waits for the one after it)");
  }

  Status CreateNodes(const std::vector<size_t>& order) {
    const auto& opsets = EffectiveOpsets(*plan_);
    for (size_t i : order) {
      const Node& node = graph_.nodes[i];
      auto pn = std::make_unique<PlannedNode>();
      pn->node = &node;
      pn->index = i;
      pn->where = node.Where(i);
      auto opset = opsets.find(Graph::CanonicalDomain(node.domain));
      if (opset == opsets.end()) {
        return InvalidArgument(pn->where, ": the model imports no opset for domain '",
                               node.domain.empty() ? "ai.onnx" : node.domain, "'");
      }
      pn->opset = opset->second;
      pn->inputs = explicit_inputs_[i];
      for (const auto& name : node.inputs) {
        pn->input_types.push_back(name.empty() ? DataType::kUndefined : StaticElementType(*plan_, name));
        pn->constant_inputs.push_back(ConstantInitializer(name));
      }
      for (const auto& name : node.outputs) pn->outputs.push_back(name.empty() ? -1 : plan_->slots.at(name));
      auto any =
          KernelRegistry::Global().Find(Graph::CanonicalDomain(node.domain), node.op, pn->opset, DataType::kUndefined);
      if (!any.ok()) return AtNode(any.status(), pn->where);
      pn->dispatch_input = (*any)->dispatch_input;
      DataType type = DataType::kUndefined;
      if (pn->dispatch_input >= 0 && pn->dispatch_input < static_cast<int>(pn->input_types.size())) {
        type = pn->input_types[pn->dispatch_input];
      }
      if (type != DataType::kUndefined || pn->dispatch_input < 0) {
        pn->consumable_inputs = ConsumableInputs(*pn);
        OL_ASSIGN_OR_RETURN(auto instance, CreateKernelInstance(*pn, type, tuning_source_));
        pn->consumable_inputs.clear();  // a kernel created at run time consumes nothing
        pn->primary = std::move(*instance);
      }
      pn->released_inputs.assign(pn->inputs.size(), false);
      PlannedNode* created = pn.get();
      plan_->nodes.push_back(std::move(pn));
      ReleaseAbsorbed(created);
      for (size_t k = 0; k < created->primary.consumed.size(); ++k) {
        if (created->primary.consumed[k] && !created->released_inputs[k]) {  // ConsumableInputs' promise broken
          return Internal(created->where, ": input ", k, " was consumed by its kernel but not released");
        }
      }
    }
    return Status::Ok();
  }

  // Which constant inputs of `node` its kernel may consume (registry/kernel.h, "Consuming a
  // constant input"): those whose initializer is released right after this kernel is
  // created if it absorbs them (this input is the last read left, no earlier read was kept,
  // not an output nor read by a subgraph), held in an allocated buffer (not borrowed from
  // a caller's bytes) that only the session's graph and plan hold.
  std::vector<bool> ConsumableInputs(const PlannedNode& node) const {
    std::vector<bool> consumable(node.inputs.size(), false);
    if (releasable_ == nullptr) return consumable;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int slot = node.inputs[k];
      const Tensor* constant = node.constant_inputs[k];
      if (slot < 0 || constant == nullptr || kept_.count(slot)) continue;
      auto left = reads_left_.find(slot);
      if (left == reads_left_.end() || left->second != 1) continue;
      auto in_graph = releasable_->find(node.node->inputs[k]);
      if (in_graph == releasable_->end() || &in_graph->second != constant) continue;
      long holders = 1;  // the graph's map
      for (const auto& [initializer_slot, tensor] : plan_->initializers) {
        if (initializer_slot == slot) ++holders;
      }
      consumable[k] = constant->allocated_buffer_holders() == holders;
    }
    return consumable;
  }

  // After `node`'s kernel is created: each initializer it read for the last time is
  // released when every read of it was absorbed (see PlanGraph).
  void ReleaseAbsorbed(PlannedNode* node) {
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      const int slot = node->inputs[k];
      if (slot < 0) continue;
      const bool absorbed = node->primary.kernel != nullptr && k < node->primary.absorbed.size() &&
                            node->primary.absorbed[k] && node->constant_inputs[k] != nullptr;
      if (!absorbed) kept_.insert(slot);  // read at run time (or by a kernel created then)
      readers_[slot].emplace_back(node, k);
      if (--reads_left_[slot] > 0 || kept_.count(slot) || releasable_ == nullptr) continue;
      const std::string& name = node->node->inputs[k];
      auto in_graph = releasable_->find(name);
      if (in_graph == releasable_->end()) continue;
      const Tensor released = Tensor::Borrow(in_graph->second.dtype(), in_graph->second.shape(), nullptr);
      in_graph->second = released;  // in place: constant_inputs pointers stay valid
      for (size_t e = 0; e < plan_->initializers.size(); ++e) {
        if (plan_->initializers[e].first != slot) continue;
        plan_->initializers[e].second = released;
        plan_->initializer_released[e] = true;
      }
      for (const auto& [reader, input] : readers_[slot]) reader->released_inputs[input] = true;
    }
  }

  // The initializer `name` when it is constant: an initializer of this graph that is not
  // also a graph input (a feed may replace those). Initializers of an enclosing graph
  // read by a subgraph are not offered.
  const Tensor* ConstantInitializer(const std::string& name) const {
    if (name.empty()) return nullptr;
    auto it = graph_.initializers.find(name);
    if (it == graph_.initializers.end()) return nullptr;
    for (const auto& input : graph_.inputs) {
      if (input.name == name) return nullptr;
    }
    return &it->second;
  }

  void ComputeLifetimes(const std::vector<size_t>& order) {
    std::vector<int> last_use(plan_->num_slots, -1);
    for (size_t p = 0; p < order.size(); ++p) {
      for (int slot : reads_[order[p]]) last_use[slot] = static_cast<int>(p);
      // An output nobody reads dies right after its producer.
      for (int slot : plan_->nodes[p]->outputs) {
        if (slot >= 0 && last_use[slot] < static_cast<int>(p)) last_use[slot] = static_cast<int>(p);
      }
    }
    for (int slot : plan_->output_slots) last_use[slot] = -1;
    for (int slot = 0; slot < plan_->num_slots; ++slot) {
      if (last_use[slot] >= 0) plan_->nodes[last_use[slot]]->release_after.push_back(slot);
    }
  }

  const Graph& graph_;
  const TuningSource* tuning_source_;
  std::map<const Graph*, std::unique_ptr<GraphPlan>>* subgraph_plans_;
  std::unique_ptr<GraphPlan> plan_;
  std::map<std::string, size_t> producers_;  // value name -> node index
  std::map<int, size_t> slot_producer_;
  std::vector<std::vector<int>> reads_;            // explicit + implicit reads per node
  std::vector<std::vector<int>> explicit_inputs_;  // per node input, -1 when absent
  std::map<std::string, Tensor>* releasable_;      // the graph's initializers, or null: release none
  std::map<int, int> reads_left_;                  // slot -> node inputs reading it not yet created
  std::set<int> kept_;                             // slots never released: outputs, read by subgraphs or at run time
  std::map<int, std::vector<std::pair<PlannedNode*, size_t>>> readers_;  // slot -> (node, input)
};

}  // namespace

StatusOr<std::unique_ptr<KernelInstance>> CreateKernelInstance(const PlannedNode& node, DataType element_type,
                                                               const TuningSource* tuning_source) {
  const Node& n = *node.node;
  const KernelRegistry& registry = KernelRegistry::Global();
  auto def = registry.Find(Graph::CanonicalDomain(n.domain), n.op, node.opset, element_type);
  if (!def.ok()) return AtNode(def.status(), node.where);
  auto instance = std::make_unique<KernelInstance>();
  instance->element_type = element_type;
  instance->def = *def;
  auto schema = registry.SchemaFor(**def, element_type);
  instance->tuning =
      tuning_source != nullptr && schema ? tuning_source->Resolve(schema) : ResolvedTuning::Defaults(schema);
  std::vector<DataType> input_types = node.input_types;
  if (node.dispatch_input >= 0 && node.dispatch_input < static_cast<int>(input_types.size())) {
    input_types[node.dispatch_input] = element_type;
  }
  KernelInfo info(Graph::CanonicalDomain(n.domain), n.op, n.name, node.opset, &n.attributes, std::move(input_types),
                  static_cast<int>(n.outputs.size()), instance->tuning);
  info.SetConstantInputs(node.constant_inputs);
  info.SetConsumableInputs(node.consumable_inputs);
  auto kernel = (*def)->factory(info);
  if (!kernel.ok()) return AtNode(kernel.status(), node.where);
  instance->kernel = std::move(kernel).value();
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    instance->absorbed.push_back(info.absorbed_input(i));
    instance->held_bytes.push_back(info.absorbed_held_bytes(i));
    instance->consumed.push_back(info.consumed_input(i));
  }
  return instance;
}

StatusOr<std::unique_ptr<GraphPlan>> PlanGraph(const Graph& graph, const GraphPlan* parent,
                                               const TuningSource* tuning_source,
                                               std::map<const Graph*, std::unique_ptr<GraphPlan>>* subgraph_plans,
                                               std::map<std::string, Tensor>* releasable) {
  return Planner(graph, parent, tuning_source, subgraph_plans, releasable).Build();
}

}  // namespace onnx_light
