#include "native/tuning/table_tuning_source.h"

namespace onnx_light {

Status TableTuningSource::Add(const std::string& schema_key, const std::string& param, ParamValue value,
                              ValueSource source) {
  if (source == ValueSource::kPortableDefault) {
    return InvalidArgument("tuning value ", schema_key, " ", param, ": a table holds profile values, not defaults");
  }
  std::shared_ptr<const KernelTuningSchema> schema;
  for (const auto& candidate : TuningSchemaRegistry::Global().All()) {
    if (candidate->key.ToString() == schema_key) schema = candidate;
  }
  if (!schema) {
    const int abi = SchemaKeyAbi(schema_key);
    if (abi >= 0 && abi != kTuningAbi) {
      return InvalidArgument("tuning schema key '", schema_key, "' is of tuning ABI ", abi, ", this build uses ",
                             kTuningAbi, ": a stale profile value (its parameter names may no longer exist)");
    }
    return InvalidArgument("no tuning schema '", schema_key, "' is registered in this build");
  }
  const ParamSpec* spec = schema->Find(param);
  if (spec == nullptr) {
    std::string known;
    for (const auto& p : schema->params) known += (known.empty() ? "" : ", ") + p.name;
    return InvalidArgument("unknown tuning parameter '", param, "' for ", schema_key, " (it declares: ", known, ")");
  }
  OL_RETURN_IF_ERROR(spec->Check(value).WithContext(schema_key + ": "));
  auto& slot = entries_[schema_key];
  auto it = slot.find(param);
  // ValueSource is declared in precedence order: a smaller value outranks a larger one.
  if (it != slot.end() && it->second.source < source) return Status::Ok();
  slot[param] = Entry{std::move(value), source};
  return Status::Ok();
}

ResolvedTuning TableTuningSource::Resolve(std::shared_ptr<const KernelTuningSchema> schema) const {
  ResolvedTuning resolved = ResolvedTuning::Defaults(schema);
  if (!schema) return resolved;
  const std::string key = schema->key.ToString();
  auto it = entries_.find(key);
  if (it == entries_.end()) return resolved;
  for (const auto& [param, entry] : it->second) {
    Status s = resolved.Set(param, entry.value, entry.source);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(rejected_mutex_);
      rejected_.push_back(StrCat(key, ": ", s.message()));
    }
  }
  return resolved;
}

std::vector<std::string> TableTuningSource::rejected() const {
  std::lock_guard<std::mutex> lock(rejected_mutex_);
  return rejected_;
}

}  // namespace onnx_light
