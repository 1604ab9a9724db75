#include "native/registry/kernel_runner.h"

#include <chrono>
#include <mutex>
#include <set>

namespace onnx_light {
namespace {

// The run's allocator must outlive every output buffer it handed out, however long the
// caller keeps an output (a test helper may return one after its runner is gone): each
// output tensor holds the allocator too. Members are destroyed in reverse order, so the
// buffer is freed before the allocator.
struct OutputHolder {
  std::shared_ptr<Allocator> allocator;
  Tensor tensor;
};

// `name` in storage that lives as long as the process: region events name their kernel by
// a plain pointer (region_events.h) and a result's events outlive its runner (run_kernel
// returns them after the runner is gone; they read op_'s bytes after the runner's stack
// frame was reused).
const char* StaticName(const std::string& name) {
  static std::mutex mutex;
  static auto* names = new std::set<std::string>();  // never destroyed; nodes never move
  std::lock_guard<std::mutex> lock(mutex);
  return names->insert(name).first->c_str();
}

Tensor KeepingAlive(const Tensor& t, const std::shared_ptr<Allocator>& allocator) {
  if (!t.defined()) return t;
  auto holder = std::make_shared<OutputHolder>(OutputHolder{allocator, t});
  return Tensor::Borrow(t.dtype(), t.shape(), const_cast<void*>(t.raw_data()), std::move(holder));
}

Value KeepingAlive(Value v, const std::shared_ptr<Allocator>& allocator) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return Value(KeepingAlive(v.tensor(), allocator)).set_optional(v.optional());
    case Value::Kind::kSequence: {
      std::vector<Value> items;
      for (const Value& item : v.items()) items.push_back(KeepingAlive(item, allocator));
      return Value::Sequence(std::move(items), v.element_type()).set_optional(v.optional());
    }
    case Value::Kind::kMap:
      return Value::Map(KeepingAlive(v.map_keys(), allocator), KeepingAlive(v.map_values(), allocator));
    case Value::Kind::kNone:
      return v;
  }
  return v;
}

}  // namespace

KernelRunner::KernelRunner(std::string op, int opset_version, std::string domain)
    : op_(std::move(op)), domain_(std::move(domain)), opset_version_(opset_version) {}

KernelRunner& KernelRunner::Input(Tensor tensor) { return InputValue(Value(std::move(tensor))); }
KernelRunner& KernelRunner::InputValue(Value value) {
  inputs_.push_back(std::make_unique<Value>(std::move(value)));
  constant_.push_back(false);
  return *this;
}
KernelRunner& KernelRunner::ConstantInput(Tensor tensor) {
  Input(std::move(tensor));
  constant_.back() = true;
  return *this;
}
KernelRunner& KernelRunner::MissingInput() {
  inputs_.push_back(nullptr);
  constant_.push_back(false);
  return *this;
}
KernelRunner& KernelRunner::ClearInputs() {
  inputs_.clear();
  constant_.clear();
  return *this;
}
KernelRunner& KernelRunner::Outputs(int n) {
  num_outputs_ = n;
  return *this;
}
KernelRunner& KernelRunner::NodeName(std::string name) {
  node_name_ = std::move(name);
  return *this;
}
KernelRunner& KernelRunner::Attr(Attribute attribute) {
  const std::string name = attribute.name;
  attributes_[name] = std::move(attribute);
  return *this;
}

#define OL_ATTR(Arg, Kind, field)                                        \
  KernelRunner& KernelRunner::Attr(const std::string& name, Arg value) { \
    Attribute a;                                                         \
    a.name = name;                                                       \
    a.type = Attribute::Type::Kind;                                      \
    a.field = std::move(value);                                          \
    return Attr(std::move(a));                                           \
  }
OL_ATTR(int64_t, kInt, i)
OL_ATTR(float, kFloat, f)
OL_ATTR(const std::string&, kString, s)
OL_ATTR(std::vector<int64_t>, kInts, ints)
OL_ATTR(std::vector<float>, kFloats, floats)
OL_ATTR(std::vector<std::string>, kStrings, strings)
OL_ATTR(Tensor, kTensor, t)
#undef OL_ATTR

KernelRunner& KernelRunner::Tuning(const std::string& name, ParamValue value) {
  tuning_overrides_.emplace_back(name, std::move(value));
  return *this;
}
KernelRunner& KernelRunner::Source(const TuningSource* source) {
  source_ = source;
  return *this;
}
KernelRunner& KernelRunner::ClearTuning() {
  tuning_overrides_.clear();
  return *this;
}
KernelRunner& KernelRunner::MemoryLimit(int64_t bytes) {
  memory_limit_ = bytes;
  return *this;
}

KernelRunner& KernelRunner::SharedAllocator(std::shared_ptr<Allocator> allocator) {
  shared_allocator_ = std::move(allocator);
  return *this;
}

KernelRunner& KernelRunner::Subgraphs(SubgraphRunner* runner) {
  subgraphs_ = runner;
  return *this;
}

KernelRunner& KernelRunner::JoinWaitMicroseconds(int64_t microseconds) {
  join_wait_microseconds_ = microseconds;
  return *this;
}

StatusOr<const KernelDef*> KernelRunner::FindDef(DataType* element_type_out) const {
  OL_RETURN_IF_ERROR(KernelRegistry::Global().status());
  // Any def of the op first, to learn its dispatch input.
  OL_ASSIGN_OR_RETURN(const KernelDef* any,
                      KernelRegistry::Global().Find(domain_, op_, opset_version_, DataType::kUndefined));
  DataType element_type = DataType::kUndefined;
  const int d = any->dispatch_input;
  if (d >= 0 && d < static_cast<int>(inputs_.size()) && inputs_[d] && inputs_[d]->is_tensor()) {
    element_type = inputs_[d]->tensor().dtype();
  }
  if (element_type_out) *element_type_out = element_type;
  return KernelRegistry::Global().Find(domain_, op_, opset_version_, element_type);
}

StatusOr<KernelRunResult> KernelRunner::Run(int num_threads, const CancellationToken* cancel) {
  if (num_threads < 1)
    return InvalidArgument("KernelRunner: ", op_, ": participant count must be >= 1, got ", num_threads);
  DataType element_type = DataType::kUndefined;
  OL_ASSIGN_OR_RETURN(const KernelDef* def, FindDef(&element_type));
  std::vector<DataType> input_types;
  std::vector<const Value*> inputs;
  for (const auto& v : inputs_) {
    inputs.push_back(v.get());
    input_types.push_back(v && v->is_tensor() ? v->tensor().dtype() : DataType::kUndefined);
  }
  auto schema = KernelRegistry::Global().SchemaFor(*def, element_type);
  ResolvedTuning tuning = source_ ? source_->Resolve(schema) : ResolvedTuning::Defaults(schema);
  for (const auto& [name, value] : tuning_overrides_) {
    OL_RETURN_IF_ERROR(tuning.Set(name, value, ValueSource::kExplicitProfile).WithContext(op_ + ": "));
  }
  KernelInfo info(domain_, op_, node_name_, opset_version_, &attributes_, input_types, num_outputs_, tuning);
  std::vector<const Tensor*> constant_inputs;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    constant_inputs.push_back(constant_[i] ? &inputs_[i]->tensor() : nullptr);
  }
  info.SetConstantInputs(std::move(constant_inputs));
  OL_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def->factory(info));
  // An absorbed input reaches Compute as the session hands it over once released: its type
  // and shape, no data (kernel.h). A kernel that reads it anyway fails here, in its tests.
  std::vector<Value> released(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!info.absorbed_input(static_cast<int>(i))) continue;
    const Tensor& t = inputs_[i]->tensor();
    released[i] = Value(Tensor::Borrow(t.dtype(), t.shape(), nullptr));
    inputs[i] = &released[i];
  }

  // A serial run uses no executor but keeps the one of earlier parallel runs: alternating
  // serial and parallel runs (calibration) must not restart threads each time.
  if (num_threads > 1 && (!executor_ || executor_->participants() != num_threads ||
                          executor_->policy().join_wait_microseconds != join_wait_microseconds_)) {
    CpuExecutionPolicy policy;
    policy.num_threads = num_threads;
    policy.join_wait_microseconds = join_wait_microseconds_;
    OL_ASSIGN_OR_RETURN(executor_, ExecutorRegistry::Global().Acquire(policy));
  }
  // One kernel opens few regions; a small collector keeps repeated runs cheap.
  EventCollector events(/*region_capacity=*/1024, /*node_capacity=*/1);
  auto allocator = shared_allocator_ ? shared_allocator_ : std::make_shared<Allocator>(memory_limit_);
  const AllocationStats before = allocator->stats();
  allocator->ResetPeak();
  ParallelContext parallel{num_threads > 1 ? executor_.get() : nullptr, cancel, &events, StaticName(op_)};
  KernelContext ctx(&op_, &node_name_, inputs, num_outputs_, allocator.get(), parallel, subgraphs_);
  const auto start = std::chrono::steady_clock::now();
  const Status status = kernel->Compute(ctx);
  const auto stop = std::chrono::steady_clock::now();
  OL_RETURN_IF_ERROR(status.WithContext(ctx.Where() + ": "));
  KernelRunResult result;
  result.allocator = allocator;
  for (Value& output : ctx.outputs()) result.outputs.push_back(KeepingAlive(std::move(output), allocator));
  result.regions = events.regions();
  const AllocationStats after = allocator->stats();
  result.allocation = {after.allocations - before.allocations, after.bytes_allocated - before.bytes_allocated,
                       after.current_bytes - before.current_bytes, after.peak_bytes - before.current_bytes};
  result.peak_scratch = ctx.peak_scratch();
  result.copies = ctx.copies();
  result.compute_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
  return result;
}

}  // namespace onnx_light
