// Record: how the extension returns a native struct (descriptors, events, reports) to
// Python: a bound class with read-only properties, never a hand-built dict.
//
//   Record<CacheLevel>(m, "CacheLevel", "One cache of cpu0 (sysfs).")
//       .Field("level", &CacheLevel::level)
//       .Field("type", &CacheLevel::type)
//       .Field("size_bytes", &CacheLevel::size_bytes);
//
// Rule: each field is declared once, with Field (a data member, or a getter taking const T&
// for a converted value); to_dict() and __repr__ are derived from the declared fields, so
// the three cannot disagree. to_dict() is plain Python data for JSON and for the callers
// whose documented result is a dict (onnx_light.kernel_tuning, build_info()): nested
// records through their own to_dict(), lists and dicts item by item. A field declared
// kOmitNone is left out of to_dict() when it is None (bounds exist for numeric parameters
// only). python/onnx_light/_native.pyi is generated from these declarations.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace onnx_light::python {

enum class DictEntry { kAlways, kOmitNone };

struct RecordFields {
  std::string class_name;
  std::vector<std::pair<std::string, DictEntry>> fields;
};

// The fields of `self` as a dict of plain data; "Name(field=value, ...)".
nanobind::dict RecordToDict(nanobind::handle self, const RecordFields& fields);
std::string RecordRepr(nanobind::handle self, const RecordFields& fields);

template <typename T>
class Record {
 public:
  Record(nanobind::handle scope, const char* name, const char* doc)
      : class_(scope, name, doc), fields_(std::make_shared<RecordFields>()) {
    fields_->class_name = name;
    auto fields = fields_;  // filled by Field after these are bound
    class_.def(
        "to_dict", [fields](nanobind::handle self) { return RecordToDict(self, *fields); },
        "The fields as plain Python data (records as dicts), e.g. for JSON.");
    class_.def("__repr__", [fields](nanobind::handle self) { return RecordRepr(self, *fields); });
  }

  template <typename Getter>
  Record& Field(const char* name, Getter getter, DictEntry entry = DictEntry::kAlways) {
    if constexpr (std::is_member_object_pointer_v<Getter>) {
      class_.def_ro(name, getter);
    } else {
      class_.def_prop_ro(name, getter);
    }
    fields_->fields.emplace_back(name, entry);
    return *this;
  }

 private:
  nanobind::class_<T> class_;
  std::shared_ptr<RecordFields> fields_;
};

}  // namespace onnx_light::python
