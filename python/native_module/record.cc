#include "python/native_module/record.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

nb::object PlainData(nb::handle value) {
  if (nb::hasattr(value, "to_dict") && nb::inst_check(value)) return value.attr("to_dict")();
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    nb::list out;
    for (nb::handle item : value) out.append(PlainData(item));
    return nb::isinstance<nb::tuple>(value) ? nb::object(nb::tuple(out)) : nb::object(out);
  }
  if (nb::isinstance<nb::dict>(value)) {
    nb::dict out;
    for (auto [k, v] : nb::borrow<nb::dict>(value)) out[k] = PlainData(v);
    return out;
  }
  return nb::borrow(value);
}

}  // namespace

nb::dict RecordToDict(nb::handle self, const RecordFields& fields) {
  nb::dict out;
  for (const auto& [name, entry] : fields.fields) {
    nb::object value = self.attr(name.c_str());
    if (entry == DictEntry::kOmitNone && value.is_none()) continue;
    out[name.c_str()] = PlainData(value);
  }
  return out;
}

std::string RecordRepr(nb::handle self, const RecordFields& fields) {
  std::string out = fields.class_name + "(";
  for (size_t i = 0; i < fields.fields.size(); ++i) {
    const std::string& name = fields.fields[i].first;
    if (i) out += ", ";
    out += name + "=" + nb::cast<std::string>(nb::repr(self.attr(name.c_str())));
  }
  return out + ")";
}

}  // namespace onnx_light::python
