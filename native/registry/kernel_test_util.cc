#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace testing {

void ExpectIdentical(const Value& a, const Value& b, const std::string& what) {
  ASSERT_EQ(a.kind(), b.kind()) << what;
  if (a.is_sequence()) {
    ASSERT_EQ(a.items().size(), b.items().size()) << what;
    for (size_t i = 0; i < a.items().size(); ++i) ExpectIdentical(a.items()[i], b.items()[i], what);
    return;
  }
  if (!a.is_tensor()) return;
  const Tensor& x = a.tensor();
  const Tensor& y = b.tensor();
  ASSERT_EQ(x.dtype(), y.dtype()) << what;
  ASSERT_EQ(x.shape(), y.shape()) << what;
  if (x.dtype() == DataType::kString) {
    for (int64_t i = 0; i < x.num_elements(); ++i) ASSERT_EQ(x.data<std::string>()[i], y.data<std::string>()[i]) << what;
    return;
  }
  ASSERT_EQ(0, std::memcmp(x.raw_data(), y.raw_data(), x.byte_size())) << what << ": outputs differ bitwise";
}

KernelTester::KernelTester(std::string op, int opset_version, std::string domain)
    : op_(std::move(op)), domain_(std::move(domain)), opset_version_(opset_version) {}

KernelTester& KernelTester::Input(Tensor tensor) { return InputValue(Value(std::move(tensor))); }
KernelTester& KernelTester::InputValue(Value value) {
  inputs_.push_back(std::make_unique<Value>(std::move(value)));
  return *this;
}
KernelTester& KernelTester::MissingInput() {
  inputs_.push_back(nullptr);
  return *this;
}
KernelTester& KernelTester::Outputs(int n) {
  num_outputs_ = n;
  return *this;
}
KernelTester& KernelTester::NodeName(std::string name) {
  node_name_ = std::move(name);
  return *this;
}

#define OL_ATTR(Arg, Kind, field)                                          \
  KernelTester& KernelTester::Attr(const std::string& name, Arg value) {  \
    Attribute a;                                                          \
    a.name = name;                                                        \
    a.type = Attribute::Type::Kind;                                       \
    a.field = std::move(value);                                           \
    attributes_[name] = std::move(a);                                     \
    return *this;                                                         \
  }
OL_ATTR(int64_t, kInt, i)
OL_ATTR(float, kFloat, f)
OL_ATTR(const std::string&, kString, s)
OL_ATTR(std::vector<int64_t>, kInts, ints)
OL_ATTR(std::vector<float>, kFloats, floats)
OL_ATTR(std::vector<std::string>, kStrings, strings)
OL_ATTR(Tensor, kTensor, t)
#undef OL_ATTR

KernelTester& KernelTester::Tuning(const std::string& name, ParamValue value) {
  tuning_overrides_.emplace_back(name, std::move(value));
  return *this;
}

StatusOr<KernelRunResult> KernelTester::RunWithDetails(int num_threads, const CancellationToken* cancel) {
  OL_RETURN_IF_ERROR(KernelRegistry::Global().status());
  std::vector<DataType> input_types;
  std::vector<const Value*> inputs;
  for (const auto& v : inputs_) {
    inputs.push_back(v.get());
    input_types.push_back(v && v->is_tensor() ? v->tensor().dtype() : DataType::kUndefined);
  }
  DataType element_type = DataType::kUndefined;
  // Find any def for the op first to learn its dispatch input.
  OL_ASSIGN_OR_RETURN(const KernelDef* any, KernelRegistry::Global().Find(domain_, op_, opset_version_, DataType::kUndefined));
  if (any->dispatch_input >= 0 && any->dispatch_input < static_cast<int>(input_types.size())) {
    element_type = input_types[any->dispatch_input];
  }
  OL_ASSIGN_OR_RETURN(const KernelDef* def, KernelRegistry::Global().Find(domain_, op_, opset_version_, element_type));
  ResolvedTuning tuning = ResolvedTuning::Defaults(KernelRegistry::Global().SchemaFor(*def, element_type));
  for (const auto& [name, value] : tuning_overrides_) {
    OL_RETURN_IF_ERROR(tuning.Set(name, value, ValueSource::kExplicitProfile));
  }
  KernelInfo info(domain_, op_, node_name_, opset_version_, &attributes_, input_types, num_outputs_, tuning);
  OL_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def->factory(info));

  std::shared_ptr<CpuExecutor> executor;
  if (num_threads > 1) {
    CpuExecutionPolicy policy;
    policy.num_threads = num_threads;
    OL_ASSIGN_OR_RETURN(executor, ExecutorRegistry::Global().Acquire(policy));
  }
  EventCollector events;
  auto allocator = std::make_shared<Allocator>();
  allocators_.push_back(allocator);
  ParallelContext parallel{executor.get(), cancel, &events, op_.c_str()};
  KernelContext ctx(&op_, &node_name_, inputs, num_outputs_, allocator.get(), parallel);
  OL_RETURN_IF_ERROR(kernel->Compute(ctx).WithContext(ctx.Where() + ": "));
  KernelRunResult result;
  result.allocator = allocator;
  result.outputs = std::move(ctx.outputs());
  result.regions = events.regions();
  result.allocation = allocator->stats();
  result.peak_scratch = ctx.peak_scratch();
  return result;
}

StatusOr<std::vector<Value>> KernelTester::Run(int num_threads) {
  OL_ASSIGN_OR_RETURN(KernelRunResult r, RunWithDetails(num_threads));
  return std::move(r.outputs);
}

}  // namespace testing
}  // namespace onnx_light
