#include "native/tuning/schema.h"

#include <cmath>
#include <sstream>

namespace onnx_light {

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kInt64:
      return "int64";
    case ParamType::kDouble:
      return "double";
    case ParamType::kBool:
      return "bool";
    case ParamType::kEnum:
      return "enum";
  }
  return "?";
}

std::string ParamValueToString(const ParamValue& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&value)) {
    std::ostringstream out;
    out.precision(17);
    out << *d;
    return out.str();
  }
  if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

namespace {
const char* VariantTypeName(const ParamValue& v) {
  switch (v.index()) {
    case 0:
      return "int64";
    case 1:
      return "double";
    case 2:
      return "bool";
    default:
      return "string";
  }
}
}  // namespace

Status ParamSpec::Check(const ParamValue& value) const {
  switch (type) {
    case ParamType::kInt64: {
      const auto* v = std::get_if<int64_t>(&value);
      if (!v) return InvalidArgument("tuning parameter '", name, "' is int64; got a ", VariantTypeName(value));
      if (*v < static_cast<int64_t>(minimum) || *v > static_cast<int64_t>(maximum)) {
        return InvalidArgument("tuning parameter '", name, "' = ", *v, " is outside [", static_cast<int64_t>(minimum),
                               ", ", static_cast<int64_t>(maximum), "]");
      }
      return Status::Ok();
    }
    case ParamType::kDouble: {
      const auto* v = std::get_if<double>(&value);
      if (!v) return InvalidArgument("tuning parameter '", name, "' is double; got a ", VariantTypeName(value));
      if (!std::isfinite(*v) || *v < minimum || *v > maximum) {
        return InvalidArgument("tuning parameter '", name, "' = ", *v, " is outside [", minimum, ", ", maximum, "]");
      }
      return Status::Ok();
    }
    case ParamType::kBool:
      if (!std::holds_alternative<bool>(value)) {
        return InvalidArgument("tuning parameter '", name, "' is bool; got a ", VariantTypeName(value));
      }
      return Status::Ok();
    case ParamType::kEnum: {
      const auto* v = std::get_if<std::string>(&value);
      if (!v) return InvalidArgument("tuning parameter '", name, "' is an enum; got a ", VariantTypeName(value));
      for (const auto& allowed : enum_values) {
        if (*v == allowed) return Status::Ok();
      }
      std::string list;
      for (const auto& allowed : enum_values) list += (list.empty() ? "" : ", ") + allowed;
      return InvalidArgument("tuning parameter '", name, "' = '", *v, "' is not one of {", list, "}");
    }
  }
  return Internal("unknown parameter type");
}

ParamSpec ParamSpec::Int64(std::string name, int64_t d, int64_t lo, int64_t hi, std::string meaning) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kInt64;
  p.portable_default = d;
  p.minimum = static_cast<double>(lo);
  p.maximum = static_cast<double>(hi);
  p.meaning = std::move(meaning);
  return p;
}

ParamSpec ParamSpec::Double(std::string name, double d, double lo, double hi, std::string meaning) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kDouble;
  p.portable_default = d;
  p.minimum = lo;
  p.maximum = hi;
  p.meaning = std::move(meaning);
  return p;
}

ParamSpec ParamSpec::Bool(std::string name, bool d, std::string meaning) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kBool;
  p.portable_default = d;
  p.meaning = std::move(meaning);
  return p;
}

ParamSpec ParamSpec::Enum(std::string name, std::string d, std::vector<std::string> values, std::string meaning) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kEnum;
  p.portable_default = std::move(d);
  p.enum_values = std::move(values);
  p.meaning = std::move(meaning);
  return p;
}

ParamSpec MinimumElementsParam(int64_t portable_default, std::string meaning) {
  if (meaning.empty()) meaning = "work units below which the kernel runs serially";
  return ParamSpec::Int64(param::kMinimumElements, portable_default, 1, int64_t{1} << 50, std::move(meaning));
}

std::string SchemaKey::ToString() const {
  return StrCat(library, "/", domain.empty() ? "ai.onnx" : domain, "/", op, "/", element_type, "/", family, "@",
                tuning_abi);
}

int SchemaKeyAbi(const std::string& schema_key) {
  const size_t at = schema_key.rfind('@');
  if (at == std::string::npos || at + 1 == schema_key.size() || schema_key.size() - at > 10) return -1;
  int abi = 0;
  for (size_t i = at + 1; i < schema_key.size(); ++i) {
    if (schema_key[i] < '0' || schema_key[i] > '9') return -1;
    abi = abi * 10 + (schema_key[i] - '0');
  }
  return abi;
}

const ParamSpec* KernelTuningSchema::Find(const std::string& name) const {
  for (const auto& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const char* ValueSourceName(ValueSource source) {
  switch (source) {
    case ValueSource::kExplicitProfile:
      return "explicit_profile";
    case ValueSource::kExactMachine:
      return "exact_machine";
    case ValueSource::kSameMicroarchitecture:
      return "same_microarchitecture";
    case ValueSource::kSameIsaLevel:
      return "same_isa_level";
    case ValueSource::kPortableDefault:
      return "portable_default";
  }
  return "?";
}

ResolvedTuning ResolvedTuning::Defaults(std::shared_ptr<const KernelTuningSchema> schema) {
  ResolvedTuning r;
  r.schema_ = std::move(schema);
  if (r.schema_) {
    for (const auto& p : r.schema_->params) {
      r.values_[p.name] = p.portable_default;
      r.sources_[p.name] = ValueSource::kPortableDefault;
    }
  }
  return r;
}

StatusOr<ParamValue> ResolvedTuning::Get(const std::string& name, ParamType type) const {
  const ParamSpec* spec = schema_ ? schema_->Find(name) : nullptr;
  if (spec == nullptr) {
    return Internal("kernel asked for tuning parameter '", name, "' that its schema ",
                    schema_ ? schema_->key.ToString() : std::string("(none)"), " does not declare");
  }
  if (spec->type != type) {
    return Internal("tuning parameter '", name, "' is ", ParamTypeName(spec->type), ", read as ", ParamTypeName(type));
  }
  return values_.at(name);
}

StatusOr<int64_t> ResolvedTuning::Int64(const std::string& name) const {
  OL_ASSIGN_OR_RETURN(ParamValue v, Get(name, ParamType::kInt64));
  return std::get<int64_t>(v);
}
StatusOr<double> ResolvedTuning::Double(const std::string& name) const {
  OL_ASSIGN_OR_RETURN(ParamValue v, Get(name, ParamType::kDouble));
  return std::get<double>(v);
}
StatusOr<bool> ResolvedTuning::Bool(const std::string& name) const {
  OL_ASSIGN_OR_RETURN(ParamValue v, Get(name, ParamType::kBool));
  return std::get<bool>(v);
}
StatusOr<std::string> ResolvedTuning::Enum(const std::string& name) const {
  OL_ASSIGN_OR_RETURN(ParamValue v, Get(name, ParamType::kEnum));
  return std::get<std::string>(v);
}

Status ResolvedTuning::Set(const std::string& name, const ParamValue& value, ValueSource source) {
  const ParamSpec* spec = schema_ ? schema_->Find(name) : nullptr;
  if (spec == nullptr) {
    return InvalidArgument("unknown tuning parameter '", name, "' for ",
                           schema_ ? schema_->key.ToString() : std::string("(no schema)"));
  }
  OL_RETURN_IF_ERROR(spec->Check(value));
  values_[name] = value;
  sources_[name] = source;
  return Status::Ok();
}

ValueSource ResolvedTuning::SourceOf(const std::string& name) const {
  auto it = sources_.find(name);
  return it == sources_.end() ? ValueSource::kPortableDefault : it->second;
}

TuningSchemaRegistry& TuningSchemaRegistry::Global() {
  static TuningSchemaRegistry* registry = new TuningSchemaRegistry();
  return *registry;
}

Status TuningSchemaRegistry::Register(KernelTuningSchema schema) {
  for (const auto& p : schema.params) {
    if (p.name.empty() || p.meaning.empty()) {
      return InvalidArgument("schema ", schema.key.ToString(), ": every parameter needs a name and a meaning");
    }
    if ((p.type == ParamType::kInt64 || p.type == ParamType::kDouble) && p.minimum > p.maximum) {
      return InvalidArgument("schema ", schema.key.ToString(), ": parameter '", p.name, "' has empty bounds");
    }
    OL_RETURN_IF_ERROR(
        p.Check(p.portable_default).WithContext(StrCat("schema ", schema.key.ToString(), ": default: ")));
  }
  const std::string key = schema.key.ToString();
  std::lock_guard<std::mutex> lock(mutex_);
  if (schemas_.count(key)) return InvalidArgument("tuning schema ", key, " is registered twice");
  schemas_[key] = std::make_shared<const KernelTuningSchema>(std::move(schema));
  return Status::Ok();
}

std::shared_ptr<const KernelTuningSchema> TuningSchemaRegistry::Find(const SchemaKey& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = schemas_.find(key.ToString());
  return it == schemas_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const KernelTuningSchema>> TuningSchemaRegistry::All() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const KernelTuningSchema>> out;
  for (const auto& [k, s] : schemas_) out.push_back(s);
  return out;
}

}  // namespace onnx_light
