#include "native/session/session.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <optional>
#include <stdexcept>

#include <unistd.h>

#include "native/registry/kernel.h"
#include "native/session/plan.h"

namespace onnx_light {
namespace {

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

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string InputNames(const Graph& graph) {
  std::string names;
  for (const auto& input : graph.inputs) names += (names.empty() ? "'" : ", '") + input.name + "'";
  return names.empty() ? "(none)" : names;
}

// Fills the slots every run starts with: initializers and captured outer-scope values.
std::vector<Value> NewFrame(const GraphPlan& plan, const std::vector<Value>* parent_frame) {
  std::vector<Value> frame(plan.num_slots);
  for (const auto& [slot, tensor] : plan.initializers) frame[slot] = Value(tensor);
  for (const auto& [slot, parent_slot] : plan.outer_values) frame[slot] = (*parent_frame)[parent_slot];
  return frame;
}

// The same value with every tensor owning its buffer alone: tensors that share theirs
// with an initializer, a feed, another output or a kernel attribute are copied. The caller
// may then keep, write or hand on (e.g. to numpy, without a copy) what Run returns.
StatusOr<Value> OwnedByCaller(const Value& value, Allocator* allocator) {
  const auto own = [&](const Tensor& t) -> StatusOr<Tensor> {
    if (t.OwnsBufferExclusively() || t.num_elements() == 0) return t;
    return t.Clone(allocator);
  };
  switch (value.kind()) {
    case Value::Kind::kTensor: {
      OL_ASSIGN_OR_RETURN(Tensor t, own(value.tensor()));
      return Value(std::move(t)).set_optional(value.optional());
    }
    case Value::Kind::kSequence: {
      std::vector<Value> items;
      for (const Value& item : value.items()) {
        OL_ASSIGN_OR_RETURN(Value owned, OwnedByCaller(item, allocator));
        items.push_back(std::move(owned));
      }
      return Value::Sequence(std::move(items), value.element_type()).set_optional(value.optional());
    }
    case Value::Kind::kMap: {
      OL_ASSIGN_OR_RETURN(Tensor keys, own(value.map_keys()));
      OL_ASSIGN_OR_RETURN(Tensor values, own(value.map_values()));
      return Value::Map(std::move(keys), std::move(values));
    }
    case Value::Kind::kNone:
      break;
  }
  return value;
}

// The same value, its tensors holding `allocator` alive (their buffers return to it).
Value KeepingAllocatorAlive(const Value& value, const std::shared_ptr<Allocator>& allocator) {
  struct Holder {
    std::shared_ptr<Allocator> allocator;  // declared first: destroyed after the tensor
    Tensor tensor;
  };
  const auto hold = [&](const Tensor& t) {
    auto holder = std::make_shared<Holder>(Holder{allocator, t});
    void* data = const_cast<void*>(t.raw_data());
    return Tensor::Borrow(t.dtype(), t.shape(), data, std::shared_ptr<void>(holder, holder.get()));
  };
  switch (value.kind()) {
    case Value::Kind::kTensor:
      return Value(hold(value.tensor())).set_optional(value.optional());
    case Value::Kind::kSequence: {
      std::vector<Value> items;
      for (const Value& item : value.items()) items.push_back(KeepingAllocatorAlive(item, allocator));
      return Value::Sequence(std::move(items), value.element_type()).set_optional(value.optional());
    }
    case Value::Kind::kMap:
      return Value::Map(hold(value.map_keys()), hold(value.map_values()));
    case Value::Kind::kNone:
      break;
  }
  return value;
}

}  // namespace

// Executes plans for one Run. Also the SubgraphRunner that control-flow kernels call:
// a subgraph runs in a fresh frame on the same thread and executor, capturing outer-scope
// values from the frame of the node that calls it.
class Session::Runner final : public SubgraphRunner {
 public:
  Runner(const Session& session, const RunOptions& options) : session_(session), options_(options) {
    parallel_.executor = session.executor_.get();
    parallel_.cancellation = options.cancellation;
    parallel_.events = options.events;
  }

  Status Execute(const GraphPlan& plan, std::vector<Value>& frame) {
    const GraphPlan* saved_plan = current_plan_;
    std::vector<Value>* saved_frame = current_frame_;
    current_plan_ = &plan;
    current_frame_ = &frame;
    Status status = ExecuteNodes(plan, frame);
    current_plan_ = saved_plan;
    current_frame_ = saved_frame;
    return status;
  }

  StatusOr<std::vector<Value>> Run(const Graph& graph, const std::vector<Value>& inputs) override {
    auto it = session_.subgraph_plans_.find(&graph);
    if (it == session_.subgraph_plans_.end() || it->second->parent != current_plan_) {
      return Internal("subgraph '", graph.name, "' was not planned as a subgraph of the calling node's graph");
    }
    const GraphPlan& plan = *it->second;
    if (inputs.size() != plan.input_slots.size()) {
      return InvalidArgument("subgraph '", graph.name, "' takes ", plan.input_slots.size(), " inputs, got ",
                             inputs.size());
    }
    std::vector<Value> frame = NewFrame(plan, current_frame_);
    for (size_t i = 0; i < inputs.size(); ++i) frame[plan.input_slots[i]] = inputs[i];
    OL_RETURN_IF_ERROR(Execute(plan, frame).WithContext(StrCat("subgraph '", graph.name, "': ")));
    std::vector<Value> outputs;
    outputs.reserve(plan.output_slots.size());
    for (int slot : plan.output_slots) outputs.push_back(frame[slot]);
    return outputs;
  }

 private:
  Status CheckCancelled(const PlannedNode& node) const {
    if (options_.cancellation == nullptr || !options_.cancellation->IsCancelled()) return Status::Ok();
    return Cancelled("run stopped before ", node.where, ": ",
                     options_.cancellation->deadline_passed() ? "the run's timeout expired" : "the run was terminated");
  }

  // The kernel for the element type the dispatch input has in this run.
  StatusOr<const KernelInstance*> KernelFor(PlannedNode& node, const std::vector<const Value*>& inputs) {
    DataType actual = DataType::kUndefined;
    if (node.dispatch_input >= 0 && node.dispatch_input < static_cast<int>(inputs.size()) &&
        inputs[node.dispatch_input] != nullptr) {
      actual = inputs[node.dispatch_input]->element_type();
    }
    if (node.primary.kernel && (actual == node.primary.element_type || actual == DataType::kUndefined)) {
      return &node.primary;
    }
    std::lock_guard<std::mutex> lock(node.others_mutex);
    for (const auto& other : node.others) {
      if (other->element_type == actual) return other.get();
    }
    for (size_t i = 0; i < node.released_inputs.size(); ++i) {
      if (!node.released_inputs[i]) continue;
      return InvalidArgument(node.where, ": input ", i, " ('", node.node->inputs[i], "') is ", DataTypeName(actual),
                             " in this run, not ", DataTypeName(node.primary.element_type),
                             " as planned, and the constant there was released after the node's kernel absorbed "
                             "it: no kernel can be created for the new type");
    }
    OL_ASSIGN_OR_RETURN(auto instance, CreateKernelInstance(node, actual, session_.tuning_source_.get()));
    node.others.push_back(std::move(instance));
    return node.others.back().get();
  }

  // An elementwise kernel may write its output over an input that this node reads last and
  // that nothing else holds (not a feed, an initializer or a value another reader shares):
  // a hot buffer instead of a fresh one, and one buffer less alive.
  static void OfferInPlaceBuffer(const PlannedNode& node, const KernelDef& def, std::vector<Value>& frame,
                                 KernelContext& ctx) {
    const int k = def.output_may_overwrite_input;
    if (k < 0 || k >= static_cast<int>(node.inputs.size()) || node.inputs[k] < 0 || node.outputs.empty()) return;
    const int slot = node.inputs[k];
    if (std::find(node.release_after.begin(), node.release_after.end(), slot) == node.release_after.end()) return;
    // Read through another input too (Sum(t, y, t)): a kernel that makes several passes
    // would read it after overwriting it.
    if (std::count(node.inputs.begin(), node.inputs.end(), slot) > 1) return;
    const Value& value = frame[slot];
    if (value.is_tensor() && value.tensor().OwnsBufferExclusively()) ctx.OfferOutputBuffer(0, value.tensor());
  }

  Status ExecuteNodes(const GraphPlan& plan, std::vector<Value>& frame) {
    // One context for the whole plan, re-targeted at each node (KernelContext::Reset): its
    // input and output vectors are allocated once per run, not once per node. A subgraph
    // that a node runs gets its own (ExecuteNodes is re-entered).
    static const std::string kNoNode;
    KernelContext ctx(&kNoNode, &kNoNode, {}, 0, session_.allocator_.get(), parallel_, this);
    for (const auto& planned : plan.nodes) {
      PlannedNode& node = *planned;
      OL_RETURN_IF_ERROR(CheckCancelled(node));
      ParallelContext parallel = parallel_;
      parallel.kernel = node.node->op.c_str();
      ctx.Reset(&node.node->op, &node.node->name, static_cast<int>(node.outputs.size()), parallel);
      std::vector<const Value*>& inputs = ctx.mutable_inputs();
      for (int slot : node.inputs) inputs.push_back(slot < 0 ? nullptr : &frame[slot]);
      OL_ASSIGN_OR_RETURN(const KernelInstance* instance, KernelFor(node, inputs));
      OpKernel* kernel = instance->kernel.get();
      OfferInPlaceBuffer(node, *instance->def, frame, ctx);
      EventCollector* events = options_.events;
      const int64_t start = events ? NowNanos() : 0;
      const AllocationStats before = events ? session_.allocator_->stats() : AllocationStats{};
      OL_RETURN_IF_ERROR(AtNode(ComputeCatchingAllocationFailures(*kernel, ctx), node.where));
      if (events) {
        const AllocationStats after = session_.allocator_->stats();
        NodeEvent event;
        event.op = node.node->op;
        event.node = node.node->name;
        event.duration_ns = NowNanos() - start;
        event.allocations = after.allocations - before.allocations;
        event.bytes_allocated = after.bytes_allocated - before.bytes_allocated;
        event.copies = ctx.copies();
        event.peak_scratch_bytes = ctx.peak_scratch();
        events->RecordNode(std::move(event));
      }
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i] >= 0) frame[node.outputs[i]] = std::move(ctx.outputs()[i]);
      }
      for (int slot : node.release_after) frame[slot] = Value();
    }
    return Status::Ok();
  }

  // Kernels allocate tensors through the session allocator (a Status), but their own
  // tables and index vectors come from the C++ heap: a shape that slipped past a kernel's
  // checks must still end as an error naming the node, not as a dead process.
  Status ComputeCatchingAllocationFailures(OpKernel& kernel, KernelContext& ctx) const {
    try {
      return kernel.Compute(ctx);
    } catch (const std::bad_alloc&) {
      return ResourceExhausted("out of memory (std::bad_alloc) while computing; the session allows ",
                               session_.allocator_->limit_bytes(), " bytes of tensors");
    } catch (const std::length_error& e) {
      return ResourceExhausted("a buffer larger than can be allocated was requested (", e.what(), ")");
    }
  }

  const Session& session_;
  const RunOptions& options_;
  ParallelContext parallel_;
  const GraphPlan* current_plan_ = nullptr;
  std::vector<Value>* current_frame_ = nullptr;
};

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return Allocator::kNoLimit;
  int64_t bytes = 0;
  return MultiplyOverflows(pages, page_size, &bytes) ? Allocator::kNoLimit : bytes;
}

Status SessionOptions::Validate() const {
  if (memory_limit_bytes < 0) {
    return InvalidArgument("memory_limit_bytes must be >= 0 (0 = the machine's physical memory), got ",
                           memory_limit_bytes);
  }
  return Status::Ok();
}

int64_t SessionOptions::EffectiveMemoryLimit() const {
  return memory_limit_bytes > 0 ? memory_limit_bytes : PhysicalMemoryBytes();
}

StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Graph> graph, const CpuExecutionPolicy& policy,
                                                   std::shared_ptr<const TuningSource> tuning_source,
                                                   const SessionOptions& options) {
  if (graph == nullptr) return InvalidArgument("Session::Create: no graph");
  return Create(Graph(*graph), policy, std::move(tuning_source), options);
}

StatusOr<std::unique_ptr<Session>> Session::Create(Graph graph, const CpuExecutionPolicy& policy,
                                                   std::shared_ptr<const TuningSource> tuning_source,
                                                   const SessionOptions& options) {
  OL_RETURN_IF_ERROR(KernelRegistry::Global().status());
  OL_RETURN_IF_ERROR(policy.Validate());
  OL_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<Session> session(new Session());
  auto owned = std::make_shared<Graph>(std::move(graph));
  session->graph_ = owned;
  session->policy_ = policy;
  session->tuning_source_ = std::move(tuning_source);
  session->allocator_ = std::make_shared<Allocator>(options.EffectiveMemoryLimit());
  if (policy.EffectiveThreads() > 1) {
    OL_ASSIGN_OR_RETURN(session->executor_, ExecutorRegistry::Global().Acquire(policy));
  }
  OL_ASSIGN_OR_RETURN(session->plan_, PlanGraph(*owned, nullptr, session->tuning_source_.get(),
                                                &session->subgraph_plans_, &owned->initializers));
  return session;
}

ConstantMemory Session::constant_memory() const {
  ConstantMemory m;
  const auto add_plan = [&](const GraphPlan& plan) {
    for (size_t e = 0; e < plan.initializers.size(); ++e) {
      const int64_t bytes = static_cast<int64_t>(plan.initializers[e].second.byte_size());
      if (plan.initializer_released[e]) {
        m.released_bytes += bytes;
        ++m.released_initializers;
      } else {
        m.retained_bytes += bytes;
      }
    }
    for (const auto& node : plan.nodes) {
      for (int64_t held : node->primary.held_bytes) m.absorbed_held_bytes += held;
      for (bool consumed : node->primary.consumed) m.consumed_initializers += consumed ? 1 : 0;
    }
  };
  add_plan(*plan_);
  for (const auto& [graph, plan] : subgraph_plans_) add_plan(*plan);
  return m;
}

Session::~Session() = default;

Status Session::ValidateFeed(const ValueInfo& declared, const Value& value) const {
  const auto mismatch = [&](const std::string& got) {
    return InvalidArgument("input '", declared.name, "': expected ", declared.Describe(), ", got ", got);
  };
  switch (declared.type.kind) {
    case TypeDescription::Kind::kTensor: {
      if (!value.is_tensor()) return mismatch(value.Describe());
      const Tensor& t = value.tensor();
      if (declared.type.element_type != DataType::kUndefined && t.dtype() != declared.type.element_type) {
        return mismatch(StrCat("element type ", DataTypeName(t.dtype()), " (", t.TypeAndShape(), ")"));
      }
      if (!declared.has_shape) return Status::Ok();
      if (t.shape().rank() != static_cast<int>(declared.dims.size())) {
        return mismatch(StrCat("rank ", t.shape().rank(), " (", t.TypeAndShape(), ")"));
      }
      for (int axis = 0; axis < t.shape().rank(); ++axis) {
        if (declared.dims[axis] >= 0 && declared.dims[axis] != t.shape()[axis]) {
          return mismatch(StrCat("dimension ", axis, " = ", t.shape()[axis], " (", t.TypeAndShape(), ")"));
        }
      }
      return Status::Ok();
    }
    case TypeDescription::Kind::kSequence: {
      if (!value.is_sequence()) return mismatch(value.Describe());
      const DataType declared_type = declared.type.element_type;
      for (const Value& item : value.items()) {
        if (!item.is_tensor() || (declared_type != DataType::kUndefined && item.tensor().dtype() != declared_type)) {
          return mismatch(StrCat("a sequence holding ", item.Describe()));
        }
      }
      return Status::Ok();
    }
    case TypeDescription::Kind::kMap:
      return value.is_map() ? Status::Ok() : mismatch(value.Describe());
    default:
      return Status::Ok();  // optional or undeclared: any value
  }
}

StatusOr<std::vector<Value>> Session::Run(const std::vector<std::pair<std::string, Value>>& feeds,
                                          const std::vector<std::string>& output_names,
                                          const RunOptions& options) const {
  // This run counts against the policy's threads for its whole length (fair shares for
  // concurrent callers, see CpuExecutor::Run).
  std::optional<CpuExecutor::CallerScope> caller;  // a serial session has no executor
  if (executor_ != nullptr) {
    caller.emplace(*executor_);
    PrepareWorkers();  // workers parked since the last run wake while the feeds are checked
  }
  const Graph& graph = *graph_;
  std::vector<Value> frame = NewFrame(*plan_, nullptr);
  std::vector<bool> fed(graph.inputs.size(), false);
  for (const auto& [name, value] : feeds) {
    size_t i = 0;
    while (i < graph.inputs.size() && graph.inputs[i].name != name) ++i;
    if (i == graph.inputs.size()) {
      return InvalidArgument("feed '", name, "' is not an input of the model; its inputs are ", InputNames(graph));
    }
    if (fed[i]) return InvalidArgument("input '", name, "' is fed twice");
    OL_RETURN_IF_ERROR(ValidateFeed(graph.inputs[i], value));
    fed[i] = true;
    frame[plan_->input_slots[i]] = value;
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (!fed[i] && !plan_->input_has_default[i]) {
      return InvalidArgument("missing feed for input '", graph.inputs[i].name, "' (expected ",
                             graph.inputs[i].Describe(), ")");
    }
  }
  std::vector<int> wanted;
  if (output_names.empty()) {
    wanted = plan_->output_slots;
  } else {
    for (const auto& name : output_names) {
      size_t i = 0;
      while (i < graph.outputs.size() && graph.outputs[i].name != name) ++i;
      if (i == graph.outputs.size()) return InvalidArgument("'", name, "' is not an output of the model");
      wanted.push_back(plan_->output_slots[i]);
    }
  }
  Runner runner(*this, options);
  const int64_t regions_before = CpuExecutor::RegionsOpenedOnThisThread();
  const Status executed = runner.Execute(*plan_, frame);
  if (executor_ != nullptr) {
    last_run_opened_region_.store(CpuExecutor::RegionsOpenedOnThisThread() != regions_before,
                                  std::memory_order_relaxed);
  }
  OL_RETURN_IF_ERROR(executed);
  std::vector<Value> outputs;
  outputs.reserve(wanted.size());
  for (int slot : wanted) outputs.push_back(frame[slot]);
  frame.clear();  // intermediates released: an output's buffer is now shared only if aliased
  for (Value& output : outputs) {
    OL_ASSIGN_OR_RETURN(Value owned, OwnedByCaller(output, allocator_.get()));
    output = KeepingAllocatorAlive(owned, allocator_);
  }
  return outputs;
}

bool Session::PrepareWorkers() const {
  if (executor_ == nullptr || !last_run_opened_region_.load(std::memory_order_relaxed)) return false;
  return executor_->Prepare();
}

std::vector<TuningValueReport> Session::TuningReport() const {
  std::vector<TuningValueReport> report;
  const auto add_instance = [&](const PlannedNode& node, const KernelInstance& instance) {
    if (!instance.kernel || instance.tuning.schema() == nullptr) return;
    for (const auto& [name, value] : instance.tuning.values()) {
      report.push_back({node.where, instance.tuning.schema()->key.ToString(), name, ParamValueToString(value),
                        instance.tuning.SourceOf(name)});
    }
  };
  const auto add_plan = [&](const GraphPlan& plan) {
    for (const auto& node : plan.nodes) {
      add_instance(*node, node->primary);
      std::lock_guard<std::mutex> lock(node->others_mutex);
      for (const auto& other : node->others) add_instance(*node, *other);
    }
  };
  add_plan(*plan_);
  for (const auto& [graph, plan] : subgraph_plans_) add_plan(*plan);
  return report;
}

}  // namespace onnx_light
