// Exposes the native kernel registry: every registration with its family, opset range,
// element types and tuning schema. The kernel inventory is derived from this.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "native/registry/kernel.h"
#include "python/native_module/bindings.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

nb::object ParamValueToPython(const ParamValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return nb::int_(*i);
  if (auto* d = std::get_if<double>(&v)) return nb::float_(*d);
  if (auto* b = std::get_if<bool>(&v)) return nb::bool_(*b);
  return nb::str(std::get<std::string>(v).c_str());
}

nb::dict ParamToDict(const ParamSpec& p) {
  nb::dict d;
  d["name"] = p.name;
  d["type"] = std::string(ParamTypeName(p.type));
  d["default"] = ParamValueToPython(p.portable_default);
  if (p.type == ParamType::kInt64) {
    d["minimum"] = static_cast<int64_t>(p.minimum);
    d["maximum"] = static_cast<int64_t>(p.maximum);
  } else if (p.type == ParamType::kDouble) {
    d["minimum"] = p.minimum;
    d["maximum"] = p.maximum;
  }
  if (p.type == ParamType::kEnum) d["values"] = p.enum_values;
  d["meaning"] = p.meaning;
  return d;
}

}  // namespace

void BindRegistry(nb::module_& m) {
  m.def("registered_kernels", [] {
    const KernelRegistry& registry = KernelRegistry::Global();
    ThrowIfError(registry.status());
    nb::list out;
    for (const auto& def : registry.defs()) {
      nb::dict d;
      d["domain"] = def->domain.empty() ? std::string("ai.onnx") : def->domain;
      d["op"] = def->op;
      d["since_version"] = def->since_version;
      d["end_version"] = def->end_version == kOpenEnded ? -1 : def->end_version;
      d["family"] = def->family;
      nb::list types;
      for (DataType t : def->element_types) types.append(std::string(DataTypeName(t)));
      d["element_types"] = types;
      d["dispatch_input"] = def->dispatch_input;
      nb::list params;
      for (const auto& p : def->tuning) params.append(ParamToDict(p));
      d["tuning"] = params;
      d["calibratable"] = def->calibratable;
      out.append(d);
    }
    return out;
  }, "Every kernel registration: domain, op, opset range, family, element types (of input dispatch_input), tuning parameters.");
}

}  // namespace onnx_light::python
