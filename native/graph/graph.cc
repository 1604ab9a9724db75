#include "native/graph/graph.h"

namespace onnx_light {

std::string DescribeType(const TypeDescription& type) {
  switch (type.kind) {
    case TypeDescription::Kind::kTensor:
      return StrCat("tensor(", DataTypeName(type.element_type), ")");
    case TypeDescription::Kind::kSequence:
      return StrCat("sequence(", type.inner ? DescribeType(*type.inner) : "?", ")");
    case TypeDescription::Kind::kOptional:
      return StrCat("optional(", type.inner ? DescribeType(*type.inner) : "?", ")");
    case TypeDescription::Kind::kMap:
      return "map";
    case TypeDescription::Kind::kUnknown:
      break;
  }
  return "?";
}

std::string ValueInfo::Describe() const {
  std::string out = DescribeType(type);
  if (!has_shape) return out;
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return out + "]";
}

std::string Node::Where(size_t index) const {
  return name.empty() ? StrCat(op, " node #", index) : StrCat(op, " node '", name, "'");
}

std::string Graph::CanonicalDomain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

StatusOr<int> Graph::OpsetFor(const std::string& domain) const {
  auto it = opset_imports.find(CanonicalDomain(domain));
  if (it == opset_imports.end()) {
    return InvalidArgument("the model imports no opset for domain '", domain.empty() ? "ai.onnx" : domain, "'");
  }
  return it->second;
}

const ValueInfo* Graph::FindValueInfo(const std::string& value_name) const {
  for (const auto& v : inputs) {
    if (v.name == value_name) return &v;
  }
  for (const auto& v : outputs) {
    if (v.name == value_name) return &v;
  }
  auto it = value_types.find(value_name);
  return it == value_types.end() ? nullptr : &it->second;
}

DataType Graph::ElementTypeOf(const std::string& value_name) const {
  auto init = initializers.find(value_name);
  if (init != initializers.end()) return init->second.dtype();
  const ValueInfo* info = FindValueInfo(value_name);
  if (info == nullptr || info->type.kind != TypeDescription::Kind::kTensor) return DataType::kUndefined;
  return info->type.element_type;
}

}  // namespace onnx_light
