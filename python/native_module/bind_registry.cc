// Exposes the native kernel registry: every registration with its family, opset range,
// element types and tuning schema. The kernel inventory is derived from this.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "native/registry/kernel.h"
#include "python/native_module/bindings.h"
#include "python/native_module/record.h"

namespace nb = nanobind;

namespace onnx_light::python {

void BindRegistry(nb::module_& m) {
  Record<KernelDef>(m, "KernelRegistration", "One kernel registration: an op over an opset range, in one family.")
      .Field("domain", [](const KernelDef& d) { return d.domain.empty() ? std::string("ai.onnx") : d.domain; })
      .Field("op", &KernelDef::op)
      .Field("since_version", &KernelDef::since_version)
      .Field("end_version", [](const KernelDef& d) { return d.end_version == kOpenEnded ? -1 : d.end_version; })
      .Field("family", &KernelDef::family)
      .Field("element_types",
             [](const KernelDef& d) {
               std::vector<std::string> names;
               for (DataType t : d.element_types) names.emplace_back(DataTypeName(t));
               return names;
             })
      .Field("dispatch_input", &KernelDef::dispatch_input)
      .Field("tuning", &KernelDef::tuning)
      .Field("calibratable", &KernelDef::calibratable);

  // The registrations live as long as the process: Python holds references, not copies.
  m.def(
      "registered_kernels",
      [] {
        const KernelRegistry& registry = KernelRegistry::Global();
        ThrowIfError(registry.status());
        std::vector<const KernelDef*> out;
        for (const auto& def : registry.defs()) out.push_back(def.get());
        return out;
      },
      nb::rv_policy::reference,
      "Every kernel registration: domain, op, opset range (end -1: open), family, element types (of input "
      "dispatch_input), tuning parameters.");
}

}  // namespace onnx_light::python
