// KernelTuningSchema: every threshold a kernel uses to pick serial or parallel execution,
// a grain, a tile or an algorithm is a named, typed parameter with a portable default,
// bounds and one line of meaning. Kernels declare their parameters in their KernelDef;
// the session resolves values once per kernel instance into ResolvedTuning.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "native/core/status.h"

namespace onnx_light {

// Bumped when the meaning of any persisted tuning value changes; profiles written under
// another ABI are reported as stale and ignored.
// 2: one block parameter per unit (parallel.grain_elements, parallel.grain and
// parallel.grain_rows became parallel.block_elements and parallel.block_rows).
inline constexpr int kTuningAbi = 2;

enum class ParamType { kInt64, kDouble, kBool, kEnum };
const char* ParamTypeName(ParamType type);

using ParamValue = std::variant<int64_t, double, bool, std::string>;  // enum values are strings
std::string ParamValueToString(const ParamValue& value);

struct ParamSpec {
  std::string name;  // dotted: "parallel.minimum_elements", "algorithm.tile_m"
  ParamType type = ParamType::kInt64;
  ParamValue portable_default;
  // Inclusive bounds for int64 and double parameters.
  double minimum = 0;
  double maximum = 0;
  std::vector<std::string> enum_values;  // for kEnum
  std::string meaning;                   // one line

  // Checks the value's type and bounds; InvalidArgument naming the parameter otherwise.
  Status Check(const ParamValue& value) const;

  static ParamSpec Int64(std::string name, int64_t default_value, int64_t minimum, int64_t maximum,
                         std::string meaning);
  static ParamSpec Double(std::string name, double default_value, double minimum, double maximum, std::string meaning);
  static ParamSpec Bool(std::string name, bool default_value, std::string meaning);
  static ParamSpec Enum(std::string name, std::string default_value, std::vector<std::string> values,
                        std::string meaning);
};

// Parameter names kernels share, spelled once (a kernel reads and declares them through
// these constants, never as literals). A block parameter names the unit it counts.
namespace param {
inline constexpr char kMinimumElements[] = "parallel.minimum_elements";  // serial below this much work
inline constexpr char kMinimumMultiplyAdds[] = "parallel.minimum_multiply_adds";
inline constexpr char kMinimumTasks[] = "parallel.minimum_tasks";
inline constexpr char kMinimumRowReads[] = "parallel.minimum_row_reads";
inline constexpr char kDepthwiseMinimumMultiplyAdds[] = "parallel.depthwise_minimum_multiply_adds";
inline constexpr char kBlockElements[] = "parallel.block_elements";           // block size in elements
inline constexpr char kBlockRows[] = "parallel.block_rows";                   // block size in rows
inline constexpr char kBlockMultiplyAdds[] = "parallel.block_multiply_adds";  // block size in multiply-adds
inline constexpr char kTreeSplitRows[] = "parallel.tree_split_rows";
inline constexpr char kBlockHiddenUnits[] = "parallel.block_hidden_units";  // block size in hidden units (RNN)
}  // namespace param

// The parameter every payload-scale kernel declares: below this many work units the
// kernel runs its serial implementation.
ParamSpec MinimumElementsParam(int64_t portable_default, std::string meaning = "");

struct SchemaKey {
  std::string library = "onnx_light";
  std::string domain;  // "" is ai.onnx
  std::string op;
  std::string element_type;  // ONNX type name, "*" when the kernel is not typed
  std::string family;        // implementation family (the Bazel kernel_family)
  int tuning_abi = kTuningAbi;

  std::string ToString() const;  // "onnx_light/ai.onnx/Add/float/math.binary@2"
  bool operator<(const SchemaKey& o) const { return ToString() < o.ToString(); }
  bool operator==(const SchemaKey& o) const { return ToString() == o.ToString(); }
};

// The tuning ABI a schema key string ends with ("...@2" -> 2); -1 when it has none.
int SchemaKeyAbi(const std::string& schema_key);

struct KernelTuningSchema {
  SchemaKey key;
  std::vector<ParamSpec> params;
  bool calibratable = false;  // a bounded calibrator is registered for this key

  const ParamSpec* Find(const std::string& name) const;
};

// Where a resolved value came from, in precedence order (DESIGN.md, tuning contract).
enum class ValueSource { kExplicitProfile, kExactMachine, kSameMicroarchitecture, kSameIsaLevel, kPortableDefault };
const char* ValueSourceName(ValueSource source);

// A kernel instance's tuning values: read once in the kernel's constructor into plain
// members; nothing on the hot path looks a name up.
class ResolvedTuning {
 public:
  ResolvedTuning() = default;
  // Portable defaults of `schema`.
  static ResolvedTuning Defaults(std::shared_ptr<const KernelTuningSchema> schema);

  const KernelTuningSchema* schema() const { return schema_.get(); }
  // Typed accessors; a kernel asking for a parameter its schema does not declare, or with
  // the wrong type, is a programming error reported as Internal.
  StatusOr<int64_t> Int64(const std::string& name) const;
  StatusOr<double> Double(const std::string& name) const;
  StatusOr<bool> Bool(const std::string& name) const;
  StatusOr<std::string> Enum(const std::string& name) const;

  // Overrides one value (checked against the schema).
  Status Set(const std::string& name, const ParamValue& value, ValueSource source);
  ValueSource SourceOf(const std::string& name) const;
  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  StatusOr<ParamValue> Get(const std::string& name, ParamType type) const;
  std::shared_ptr<const KernelTuningSchema> schema_;
  std::map<std::string, ParamValue> values_;
  std::map<std::string, ValueSource> sources_;
};

// Where a session gets its tuning values from. The session asks once per kernel instance,
// at creation; null means portable defaults everywhere. The profile-backed implementation
// lives in native/tuning (profiles, processor descriptors, precedence).
class TuningSource {
 public:
  virtual ~TuningSource() = default;
  virtual ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const = 0;
};

// All schemas, filled at start-up from the kernel registry (one per path).
class TuningSchemaRegistry {
 public:
  static TuningSchemaRegistry& Global();
  // InvalidArgument on a duplicate key or a malformed parameter (bad default, bounds).
  Status Register(KernelTuningSchema schema);
  std::shared_ptr<const KernelTuningSchema> Find(const SchemaKey& key) const;
  std::vector<std::shared_ptr<const KernelTuningSchema>> All() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const KernelTuningSchema>> schemas_;
};

}  // namespace onnx_light
