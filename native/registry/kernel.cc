#include "native/registry/kernel.h"

#include <algorithm>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace onnx_light {

namespace {
std::string Describe(const std::string& op, const std::string& node) {
  return node.empty() ? StrCat(op, " node (unnamed)") : StrCat(op, " node '", node, "'");
}
}  // namespace

// ---------------------------------------------------------------------- ConstantConsumer

ConstantConsumer::ConstantConsumer(ConstantConsumer&& other) noexcept { *this = std::move(other); }

ConstantConsumer& ConstantConsumer::operator=(ConstantConsumer&& other) noexcept {
  begin_ = std::exchange(other.begin_, nullptr);
  bytes_ = std::exchange(other.bytes_, 0);
  done_ = std::exchange(other.done_, 0);
  released_ = std::exchange(other.released_, 0);
  return *this;
}

void ConstantConsumer::ReleaseThrough(size_t end) {
#if defined(__linux__)
  if (begin_ == nullptr) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t base = reinterpret_cast<uintptr_t>(begin_);
  // Whole pages only: [first page boundary at or after max(begin, done), last page boundary
  // at or before begin + end).
  const uintptr_t from = (base + done_ + page - 1) / page * page;
  const uintptr_t to = (base + std::min(end, bytes_)) / page * page;
  if (to <= from) return;
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) == 0) released_ += to - from;
  done_ = to - base;
#else
  (void)end;
#endif
}

// ---------------------------------------------------------------------------- KernelInfo

KernelInfo::KernelInfo(std::string domain, std::string op, std::string node_name, int opset_version,
                       const AttributeMap* attributes, std::vector<DataType> input_types, int num_outputs,
                       ResolvedTuning tuning)
    : domain_(std::move(domain)),
      op_(std::move(op)),
      node_name_(std::move(node_name)),
      opset_version_(opset_version),
      attributes_(attributes),
      input_types_(std::move(input_types)),
      num_outputs_(num_outputs),
      tuning_(std::move(tuning)) {}

std::string KernelInfo::Where() const { return Describe(op_, node_name_); }

Status KernelInfo::AbsorbConstantInput(int i, int64_t held_bytes) const {
  if (constant_input(i) == nullptr) {
    return InvalidArgument(Where(), ": input ", i, " is not a constant input and cannot be absorbed");
  }
  absorbed_[i] = true;
  held_bytes_[i] = held_bytes;
  return Status::Ok();
}

ConstantConsumer KernelInfo::ConsumeConstantInput(int i) const {
  const Tensor* input = constant_input(i);
  if (input == nullptr) return ConstantConsumer();
  absorbed_[i] = true;
  if (!constant_input_consumable(i) || input->byte_size() == 0) return ConstantConsumer();
  consumed_.resize(absorbed_.size(), false);
  consumed_[i] = true;
  return ConstantConsumer(static_cast<char*>(const_cast<void*>(input->raw_data())), input->byte_size());
}

bool KernelInfo::HasAttribute(const std::string& name) const { return attributes_->count(name) > 0; }

const Attribute* KernelInfo::FindAttribute(const std::string& name) const {
  auto it = attributes_->find(name);
  return it == attributes_->end() ? nullptr : &it->second;
}

StatusOr<const Attribute*> KernelInfo::Require(const std::string& name, Attribute::Type type) const {
  const Attribute* a = FindAttribute(name);
  if (a == nullptr) return InvalidArgument(Where(), ": required attribute '", name, "' is missing");
  if (a->type != type) {
    return InvalidArgument(Where(), ": attribute '", name, "' must be of type ", AttributeTypeName(type), ", got ",
                           AttributeTypeName(a->type));
  }
  return a;
}

#define OL_GETTER(Ret, Method, Kind, field)                                        \
  StatusOr<Ret> KernelInfo::Method(const std::string& name) const {                \
    OL_ASSIGN_OR_RETURN(const Attribute* a, Require(name, Attribute::Type::Kind)); \
    return a->field;                                                               \
  }
OL_GETTER(int64_t, GetInt, kInt, i)
OL_GETTER(float, GetFloat, kFloat, f)
OL_GETTER(std::string, GetString, kString, s)
OL_GETTER(std::vector<int64_t>, GetInts, kInts, ints)
OL_GETTER(std::vector<float>, GetFloats, kFloats, floats)
OL_GETTER(std::vector<std::string>, GetStrings, kStrings, strings)
OL_GETTER(Tensor, GetTensor, kTensor, t)
OL_GETTER(std::shared_ptr<const Graph>, GetGraph, kGraph, g)
#undef OL_GETTER

#define OL_GETTER_DEFAULT(Ret, Arg, Method)                                            \
  StatusOr<Ret> KernelInfo::Method(const std::string& name, Arg default_value) const { \
    if (!HasAttribute(name)) return Ret(default_value);                                \
    return Method(name);                                                               \
  }
OL_GETTER_DEFAULT(int64_t, int64_t, GetInt)
OL_GETTER_DEFAULT(float, float, GetFloat)
OL_GETTER_DEFAULT(std::string, const std::string&, GetString)
OL_GETTER_DEFAULT(std::vector<int64_t>, std::vector<int64_t>, GetInts)
OL_GETTER_DEFAULT(std::vector<float>, std::vector<float>, GetFloats)
#undef OL_GETTER_DEFAULT

// ------------------------------------------------------------------------- KernelContext

KernelContext::KernelContext(const std::string* op, const std::string* node_name, std::vector<const Value*> inputs,
                             int num_outputs, Allocator* allocator, ParallelContext parallel, SubgraphRunner* subgraphs)
    : op_(op),
      node_name_(node_name),
      inputs_(std::move(inputs)),
      outputs_(num_outputs),
      allocator_(allocator),
      parallel_(parallel),
      subgraphs_(subgraphs) {}

void KernelContext::Reset(const std::string* op, const std::string* node_name, int num_outputs,
                          ParallelContext parallel) {
  op_ = op;
  node_name_ = node_name;
  inputs_.clear();
  outputs_.clear();
  outputs_.resize(num_outputs);
  offered_output_ = -1;
  offered_buffer_ = Tensor();
  parallel_ = parallel;
  copies_ = 0;
  peak_scratch_ = 0;
}

std::string KernelContext::Where() const { return Describe(*op_, *node_name_); }

const Tensor* KernelContext::input(int i) const {
  const Value* v = input_value(i);
  return v != nullptr && v->is_tensor() ? &v->tensor() : nullptr;
}

StatusOr<const Tensor*> KernelContext::RequiredInput(int i) const {
  const Value* v = input_value(i);
  if (v == nullptr) return InvalidArgument(Where(), ": input ", i, " is required but absent");
  if (!v->is_tensor()) return InvalidArgument(Where(), ": input ", i, " must be a tensor, got ", v->Describe());
  return &v->tensor();
}

StatusOr<Tensor*> KernelContext::AllocateOutput(int i, DataType type, Shape shape) {
  if (i < 0 || i >= num_outputs()) return Internal(Where(), ": output index ", i, " out of range");
  if (i == offered_output_ && offered_buffer_.dtype() == type && type != DataType::kString &&
      offered_buffer_.shape() == shape) {
    offered_output_ = -1;
    outputs_[i] = Value(std::move(offered_buffer_));
    offered_buffer_ = Tensor();
    return &outputs_[i].mutable_tensor();
  }
  auto t = Tensor::Allocate(type, shape, allocator_);
  if (!t.ok())
    return t.status().WithContext(StrCat(Where(), ": output ", i, " ", DataTypeName(type), shape.ToString(), ": "));
  outputs_[i] = Value(std::move(t).value());
  return &outputs_[i].mutable_tensor();
}

void KernelContext::OfferOutputBuffer(int i, Tensor tensor) {
  offered_output_ = i;
  offered_buffer_ = std::move(tensor);
}

Status KernelContext::SetOutput(int i, Value value) {
  if (i < 0 || i >= num_outputs()) return Internal(Where(), ": output index ", i, " out of range");
  outputs_[i] = std::move(value);
  return Status::Ok();
}

// ------------------------------------------------------------------------ KernelRegistry

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return *registry;
}

namespace {

SchemaKey KeyFor(const KernelDef& def, DataType element_type) {
  SchemaKey key;
  key.domain = def.domain;
  key.op = def.op;
  key.element_type = element_type == DataType::kUndefined ? "*" : DataTypeName(element_type);
  key.family = def.family;
  return key;
}

bool ListsType(const KernelDef& def, DataType type) {
  return def.element_types.empty() || type == DataType::kUndefined ||
         std::find(def.element_types.begin(), def.element_types.end(), type) != def.element_types.end();
}

}  // namespace

void KernelRegistry::Add(KernelDef def) {
  auto fail = [&](const Status& s) {
    if (status_.ok()) status_ = s;
  };
  if (def.op.empty() || def.family.empty() || !def.factory || def.since_version > def.end_version) {
    fail(Internal("malformed kernel registration for '", def.op, "' (family '", def.family, "')"));
    return;
  }
  for (const auto& other : defs_) {
    if (other->domain != def.domain || other->op != def.op) continue;
    const bool ranges_overlap = other->since_version <= def.end_version && def.since_version <= other->end_version;
    if (!ranges_overlap) continue;
    for (DataType t : def.element_types.empty() ? std::vector<DataType>{DataType::kUndefined} : def.element_types) {
      if (ListsType(*other, t)) {
        fail(Internal("kernel ", def.op, " (", def.family, ") registered twice for opsets overlapping [",
                      def.since_version, ", ", def.end_version, "] and type ",
                      t == DataType::kUndefined ? "*" : DataTypeName(t)));
        return;
      }
    }
  }
  if (!def.tuning.empty()) {
    std::vector<DataType> types = def.element_types;
    if (types.empty()) types.push_back(DataType::kUndefined);
    for (DataType t : types) {
      KernelTuningSchema schema;
      schema.key = KeyFor(def, t);
      schema.params = def.tuning;
      schema.calibratable = def.calibratable;
      // Several opset ranges of one op share one schema per type.
      if (TuningSchemaRegistry::Global().Find(schema.key)) continue;
      Status s = TuningSchemaRegistry::Global().Register(std::move(schema));
      if (!s.ok()) fail(s);
    }
  }
  defs_.push_back(std::make_unique<KernelDef>(std::move(def)));
}

StatusOr<const KernelDef*> KernelRegistry::Find(const std::string& domain, const std::string& op, int opset_version,
                                                DataType element_type) const {
  bool op_known = false;
  const KernelDef* version_match = nullptr;
  for (const auto& def : defs_) {
    if (def->domain != domain || def->op != op) continue;
    op_known = true;
    if (opset_version < def->since_version || opset_version > def->end_version) continue;
    version_match = def.get();
    if (ListsType(*def, element_type)) return def.get();
  }
  const std::string where =
      StrCat(op, " (domain '", domain.empty() ? "ai.onnx" : domain, "', opset ", opset_version, ")");
  if (!op_known) return NotImplemented("no kernel implements ", where);
  if (version_match == nullptr) return NotImplemented("no kernel implements ", where, " at this opset version");
  return NotImplemented("no kernel implements ", where, " for element type ", DataTypeName(element_type));
}

std::shared_ptr<const KernelTuningSchema> KernelRegistry::SchemaFor(const KernelDef& def, DataType element_type) const {
  if (def.tuning.empty()) return nullptr;
  if (!def.element_types.empty() &&
      std::find(def.element_types.begin(), def.element_types.end(), element_type) == def.element_types.end()) {
    element_type = def.element_types.front();
  }
  if (def.element_types.empty()) element_type = DataType::kUndefined;
  return TuningSchemaRegistry::Global().Find(KeyFor(def, element_type));
}

}  // namespace onnx_light
