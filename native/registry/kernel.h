// The kernel interface: how a node's implementation is declared (KernelDef), created once
// per node (KernelInfo -> OpKernel) and run (KernelContext). Kernels see only this: no
// session, no Python, no global state.
//
// Absorbing a constant input: a kernel that turns a constant input into its own form at
// creation (packed weights) and will never read that input's data again says so, at the
// place it packs:
//
//   if (const Tensor* b = info.constant_input(1); b != nullptr && b->dtype() == DataType::kFloat) {
//     OL_ASSIGN_OR_RETURN(packed_b_, gemm::PrepackedB::Create(Allocator::Default(), false, k, n, b->data<float>(), n));
//     OL_RETURN_IF_ERROR(info.AbsorbConstantInput(1, packed_b_->bytes()));  // reads only packed_b_ from now on
//   }
//
// Contract:
//   - The kernel keeps no Tensor that shares the input's buffer and no pointer into it, and
//     Compute never reads the input's elements. Compute still receives input i, with its
//     element type and shape (for its checks), but its data may be null.
//   - The session releases an initializer's storage (drops its own references; the bytes
//     return when no one else holds them) once every consumer of it has absorbed it, as
//     soon as the last consumer's kernel is created, unless it is a graph output or read
//     by anything else: a subgraph, a node whose kernel is created lazily at run time (its
//     element type unknown at creation), a kernel that did not absorb it. A node that would
//     need a kernel created lazily after its input was released fails with an error
//     naming it, rather than packing a released buffer.
//   - `held_bytes` is what the kernel holds in the input's place (for the session's
//     accounting of constant memory: Session::ConstantMemory).
// KernelRunner and KernelTester hand a kernel's absorbed inputs to Compute with their data
// pointer null, so a test of a kernel that breaks its promise fails at once.
//
// Consuming a constant input while absorbing it: so that a weight and its packed form never
// coexist whole (peak memory of a creation, issue 12), a kernel that packs an input in a
// forward pass over it takes it with ConsumeConstantInput and tells the consumer, as the
// pass goes, which leading bytes it has read for the last time; their whole pages go back
// to the system at once (their contents are lost):
//
//   ConstantConsumer consumer = info.ConsumeConstantInput(1);  // input 1 is absorbed from now on
//   OL_ASSIGN_OR_RETURN(packed_b_, gemm::PrepackedB::Create(..., [&](int64_t rows) {
//     consumer.ReleaseThrough(rows * ldb * sizeof(float));  // rows [0, rows) never read again
//   }));
//   OL_RETURN_IF_ERROR(info.AbsorbConstantInput(1, packed_b_->bytes()));  // the bytes held
//
// The consumer is active only when the session grants it (KernelInfo::constant_input_
// consumable): the initializer is this node input's alone (every other read of it already
// absorbed, not a graph output, not read by a subgraph or a kernel created at run time), its
// buffer came from an allocator (not borrowed from a caller's bytes) and no holder outside
// the session's own graph and plan shares it; the session then releases the initializer
// when the kernel is created. Otherwise (KernelRunner, a shared buffer) ReleaseThrough does
// nothing, and the kernel computes the same. A kernel whose creation fails after consuming
// fails the whole session creation, so discarded bytes are never read.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/core/tensor.h"
#include "native/core/value.h"
#include "native/executor/parallel_for.h"
#include "native/graph/attribute.h"
#include "native/tuning/schema.h"

namespace onnx_light {

// Returns the leading bytes of a constant input a kernel consumes to the system (see
// "Consuming a constant input" above). Moves only; default-constructed: inactive.
class ConstantConsumer {
 public:
  ConstantConsumer() = default;
  ConstantConsumer(ConstantConsumer&& other) noexcept;
  ConstantConsumer& operator=(ConstantConsumer&& other) noexcept;
  ConstantConsumer(const ConstantConsumer&) = delete;
  ConstantConsumer& operator=(const ConstantConsumer&) = delete;

  // Whether ReleaseThrough returns pages (else it does nothing).
  bool active() const { return begin_ != nullptr; }
  // Bytes [0, end) of the input are never read again: the whole pages inside them that are
  // not yet released go back to the system (madvise MADV_DONTNEED; read again, they would
  // be zeros). `end` past the input's size is clamped.
  void ReleaseThrough(size_t end);
  // Bytes returned so far (whole pages).
  size_t released_bytes() const { return released_; }

 private:
  friend class KernelInfo;
  ConstantConsumer(char* begin, size_t bytes) : begin_(begin), bytes_(bytes) {}
  char* begin_ = nullptr;
  size_t bytes_ = 0;
  size_t done_ = 0;      // offset up to which pages were released (page-aligned address)
  size_t released_ = 0;  // bytes released
};

// What a kernel learns when it is created for a node.
class KernelInfo {
 public:
  KernelInfo(std::string domain, std::string op, std::string node_name, int opset_version,
             const AttributeMap* attributes, std::vector<DataType> input_types, int num_outputs, ResolvedTuning tuning);

  const std::string& domain() const { return domain_; }
  const std::string& op() const { return op_; }
  const std::string& node_name() const { return node_name_; }
  int opset_version() const { return opset_version_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return num_outputs_; }
  // Element type of input i where the graph says it statically, else kUndefined.
  DataType input_type(int i) const { return i < num_inputs() ? input_types_[i] : DataType::kUndefined; }
  const ResolvedTuning& tuning() const { return tuning_; }
  const AttributeMap& attributes() const { return *attributes_; }

  // Input i when its value is fixed for the kernel's whole life (a constant initializer
  // of the node's graph that is not also a graph input, which a feed could override),
  // else null. Lets a kernel prepare work once at creation (e.g. pack constant weights);
  // Compute still receives the same tensor as input i. The pointer is valid during
  // Init only: copy the Tensor (copies share the buffer) to keep it.
  const Tensor* constant_input(int i) const {
    return i >= 0 && i < static_cast<int>(constant_inputs_.size()) ? constant_inputs_[i] : nullptr;
  }
  // Set by whoever creates the kernel (session planner, KernelRunner): one entry per
  // input, null where the input is not constant.
  void SetConstantInputs(std::vector<const Tensor*> constant_inputs) {
    constant_inputs_ = std::move(constant_inputs);
    absorbed_.assign(constant_inputs_.size(), false);
    held_bytes_.assign(constant_inputs_.size(), 0);
  }

  // The kernel absorbed constant input i (see the contract at the top of this file):
  // InvalidArgument when input i is not constant. Const because the factory sees the info
  // const: this is the kernel's answer to its creator, not a change of what it was told.
  Status AbsorbConstantInput(int i, int64_t held_bytes = 0) const;
  // Whether input i was absorbed, and the bytes the kernel holds in its place.
  bool absorbed_input(int i) const { return i >= 0 && i < static_cast<int>(absorbed_.size()) && absorbed_[i]; }

  // Absorbs constant input i (its held bytes still told by AbsorbConstantInput once known)
  // and returns its consumer: active when the session lets the kernel discard the input's
  // storage as it reads it ("Consuming a constant input" above), else inactive. An
  // inactive consumer for an input that is not constant.
  ConstantConsumer ConsumeConstantInput(int i) const;
  // Set by the session planner (per input; default none): which constant inputs this
  // kernel may consume.
  void SetConsumableInputs(std::vector<bool> consumable) { consumable_ = std::move(consumable); }
  bool constant_input_consumable(int i) const {
    return constant_input(i) != nullptr && i < static_cast<int>(consumable_.size()) && consumable_[i];
  }
  // Whether the kernel took input i's consumer while it could release pages.
  bool consumed_input(int i) const { return i >= 0 && i < static_cast<int>(consumed_.size()) && consumed_[i]; }
  int64_t absorbed_held_bytes(int i) const { return absorbed_input(i) ? held_bytes_[i] : 0; }

  bool HasAttribute(const std::string& name) const;
  const Attribute* FindAttribute(const std::string& name) const;
  // Required attributes: InvalidArgument naming op, node and attribute if absent or mistyped.
  StatusOr<int64_t> GetInt(const std::string& name) const;
  StatusOr<float> GetFloat(const std::string& name) const;
  StatusOr<std::string> GetString(const std::string& name) const;
  StatusOr<std::vector<int64_t>> GetInts(const std::string& name) const;
  StatusOr<std::vector<float>> GetFloats(const std::string& name) const;
  StatusOr<std::vector<std::string>> GetStrings(const std::string& name) const;
  StatusOr<Tensor> GetTensor(const std::string& name) const;
  StatusOr<std::shared_ptr<const Graph>> GetGraph(const std::string& name) const;
  // Optional attributes with defaults (still InvalidArgument if present with another type).
  StatusOr<int64_t> GetInt(const std::string& name, int64_t default_value) const;
  StatusOr<float> GetFloat(const std::string& name, float default_value) const;
  StatusOr<std::string> GetString(const std::string& name, const std::string& default_value) const;
  StatusOr<std::vector<int64_t>> GetInts(const std::string& name, std::vector<int64_t> default_value) const;
  StatusOr<std::vector<float>> GetFloats(const std::string& name, std::vector<float> default_value) const;

  // "Add node 'n3'": prefix for messages.
  std::string Where() const;

 private:
  StatusOr<const Attribute*> Require(const std::string& name, Attribute::Type type) const;

  std::string domain_, op_, node_name_;
  int opset_version_;
  const AttributeMap* attributes_;
  std::vector<DataType> input_types_;
  int num_outputs_;
  ResolvedTuning tuning_;
  std::vector<const Tensor*> constant_inputs_;
  mutable std::vector<bool> absorbed_;       // per input: absorbed by the kernel (answer, see above)
  mutable std::vector<int64_t> held_bytes_;  // per absorbed input: bytes the kernel holds instead
  std::vector<bool> consumable_;             // per input: the session lets the kernel consume it
  mutable std::vector<bool> consumed_;       // per input: an active consumer was handed out
};

// Runs a subgraph (If/Loop/Scan bodies) with the session's executor; implemented by the
// session so that kernels need not know it.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual StatusOr<std::vector<Value>> Run(const Graph& graph, const std::vector<Value>& inputs) = 0;
};

// Per-node per-run state: inputs, outputs, executor, allocator, accounting.
class KernelContext {
 public:
  KernelContext(const std::string* op, const std::string* node_name, std::vector<const Value*> inputs, int num_outputs,
                Allocator* allocator, ParallelContext parallel, SubgraphRunner* subgraphs = nullptr);

  const std::string& op() const { return *op_; }
  const std::string& node_name() const { return *node_name_; }
  std::string Where() const;

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Null when the input is absent (optional input left empty or beyond the node's inputs).
  const Value* input_value(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  // Null when absent, or when the value there is not a tensor.
  const Tensor* input(int i) const;
  // The input as a tensor, or InvalidArgument naming op, node and index when absent.
  StatusOr<const Tensor*> RequiredInput(int i) const;

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // A buffer for output i: the one offered for it (OfferOutputBuffer) when its element
  // type and shape are exactly these, else a fresh one.
  StatusOr<Tensor*> AllocateOutput(int i, DataType type, Shape shape);
  // Lets output i take over `tensor`'s buffer (an input at its last use that nothing else
  // holds; see KernelDef::output_may_overwrite_input).
  void OfferOutputBuffer(int i, Tensor tensor);
  // Sets output i to a value (may alias an input: Identity, Reshape...).
  Status SetOutput(int i, Value value);
  std::vector<Value>& outputs() { return outputs_; }

  Allocator* allocator() const { return allocator_; }
  const ParallelContext& parallel() const { return parallel_; }
  SubgraphRunner* subgraphs() const { return subgraphs_; }

  // Accounting that feeds node events.
  void RecordCopy(int64_t count = 1) { copies_ += count; }
  void RecordScratch(int64_t bytes) {
    if (bytes > peak_scratch_) peak_scratch_ = bytes;
  }
  int64_t copies() const { return copies_; }
  int64_t peak_scratch() const { return peak_scratch_; }

  // For a runner that executes node after node (Session's): makes this the context of
  // the next node, with no inputs yet (add them through mutable_inputs()), num_outputs
  // empty outputs, nothing offered and zero accounting. The input and output vectors
  // keep their capacity, so a run allocates nothing per node for them. The previous
  // node's outputs must have been taken (moved) out of outputs() before.
  void Reset(const std::string* op, const std::string* node_name, int num_outputs, ParallelContext parallel);
  std::vector<const Value*>& mutable_inputs() { return inputs_; }

 private:
  const std::string* op_;
  const std::string* node_name_;
  std::vector<const Value*> inputs_;
  std::vector<Value> outputs_;
  int offered_output_ = -1;
  Tensor offered_buffer_;
  Allocator* allocator_;
  ParallelContext parallel_;
  SubgraphRunner* subgraphs_;
  int64_t copies_ = 0;
  int64_t peak_scratch_ = 0;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual Status Compute(KernelContext& ctx) = 0;
};

using KernelFactory = std::function<StatusOr<std::unique_ptr<OpKernel>>(const KernelInfo&)>;

// Creates a T (default-constructible, with Status Init(const KernelInfo&)).
template <typename T>
KernelFactory MakeKernel() {
  return [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
    auto kernel = std::make_unique<T>();
    OL_RETURN_IF_ERROR(kernel->Init(info));
    return std::unique_ptr<OpKernel>(std::move(kernel));
  };
}

inline constexpr int kOpenEnded = INT_MAX;

// One registration: an op over an opset range, implemented by one family.
struct KernelDef {
  std::string domain;  // "" = ai.onnx; "ai.onnx.ml", "ai.onnx.preview.training", ...
  std::string op;
  int since_version = 1;
  int end_version = kOpenEnded;  // inclusive
  std::string family;            // = the Bazel kernel_family name, e.g. "math"
  // Element types of the dispatch input (each is one inventory path); empty = untyped.
  std::vector<DataType> element_types;
  int dispatch_input = 0;         // whose type picks the element type; -1 when none does
  std::vector<ParamSpec> tuning;  // empty: no schema (the path is serial)
  bool calibratable = false;
  KernelFactory factory;
  // Input whose buffer output 0 may be written into (in place) when the session knows the
  // input is at its last use and held by nothing else: only for kernels where every
  // output element depends on input elements at the same index alone (elementwise ops).
  // The kernel still gets it through AllocateOutput, which checks type and shape. -1: never.
  int output_may_overwrite_input = -1;
};

class KernelRegistry {
 public:
  static KernelRegistry& Global();

  // Called by OL_REGISTER_KERNELS blocks at start-up. Errors (duplicates, overlapping
  // ranges for the same type, a tuning schema that does not validate) are collected and
  // reported by status(): a broken registration must fail loudly, not vanish.
  void Add(KernelDef def);
  const Status& status() const { return status_; }

  // The def that serves (domain, op) at `opset_version` for `element_type` (kUndefined:
  // any). NotImplemented naming op, domain, opset and type when none does.
  StatusOr<const KernelDef*> Find(const std::string& domain, const std::string& op, int opset_version,
                                  DataType element_type) const;
  const std::vector<std::unique_ptr<KernelDef>>& defs() const { return defs_; }

  // The tuning schema of one path (null when the def declares no parameters).
  std::shared_ptr<const KernelTuningSchema> SchemaFor(const KernelDef& def, DataType element_type) const;

 private:
  std::vector<std::unique_ptr<KernelDef>> defs_;
  Status status_;
};

// Registers a family's kernels at start-up:
//   OL_REGISTER_KERNELS(math_unary) { registry.Add({...}); }
#define OL_REGISTER_KERNELS(unique_name)                                               \
  static void OlRegisterKernels_##unique_name(::onnx_light::KernelRegistry& registry); \
  [[maybe_unused]] static const bool ol_kernels_registered_##unique_name =             \
      (OlRegisterKernels_##unique_name(::onnx_light::KernelRegistry::Global()), true); \
  static void OlRegisterKernels_##unique_name(::onnx_light::KernelRegistry& registry)

}  // namespace onnx_light
