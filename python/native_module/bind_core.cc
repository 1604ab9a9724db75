#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <variant>

#include "native/core/allocator.h"
#include "native/core/data_type.h"
#include "native/executor/region_events.h"
#include "native/tuning/schema.h"
#include "python/native_module/bindings.h"
#include "python/native_module/record.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

// Python exception classes, created once in BindCore; subclasses of the builtin that a
// user would expect (ValueError for bad input, NotImplementedError, ...).
nb::object g_exceptions[6];

}  // namespace

[[noreturn]] void ThrowStatus(const Status& status) {
  const int code = static_cast<int>(status.code());
  PyErr_SetString(g_exceptions[code].ptr(), status.message().c_str());
  throw nb::python_error();
}

void BindCore(nb::module_& m) {
  const auto make = [&](const char* name, PyObject* base) {
    PyObject* cls = PyErr_NewException((std::string("onnx_light._native.") + name).c_str(), base, nullptr);
    m.attr(name) = nb::steal(cls);
    return m.attr(name);
  };
  g_exceptions[static_cast<int>(StatusCode::kInvalidArgument)] = make("InvalidArgument", PyExc_ValueError);
  g_exceptions[static_cast<int>(StatusCode::kNotImplemented)] = make("NotImplemented", PyExc_NotImplementedError);
  g_exceptions[static_cast<int>(StatusCode::kCancelled)] = make("Cancelled", PyExc_RuntimeError);
  g_exceptions[static_cast<int>(StatusCode::kResourceExhausted)] = make("ResourceExhausted", PyExc_MemoryError);
  g_exceptions[static_cast<int>(StatusCode::kInternal)] = make("InternalError", PyExc_RuntimeError);
  g_exceptions[static_cast<int>(StatusCode::kOk)] = g_exceptions[static_cast<int>(StatusCode::kInternal)];

  // Opaque base of tuning sources (profiles); the session takes one, native/tuning's
  // bindings derive from it.
  nb::class_<TuningSource>(m, "TuningSource");

  // Records more than one area returns: tuning parameters (registry and schemas), region
  // events (session runs and run_kernel), allocation counters.
  using Bound = std::optional<std::variant<int64_t, double>>;
  Record<ParamSpec>(m, "TuningParameter", "One tuning parameter of a kernel's schema.")
      .Field("name", &ParamSpec::name)
      .Field("type", [](const ParamSpec& p) { return std::string(ParamTypeName(p.type)); })
      .Field("default", &ParamSpec::portable_default)
      .Field(
          "minimum",
          [](const ParamSpec& p) -> Bound {
            if (p.type == ParamType::kInt64) return static_cast<int64_t>(p.minimum);
            if (p.type == ParamType::kDouble) return p.minimum;
            return std::nullopt;
          },
          DictEntry::kOmitNone)
      .Field(
          "maximum",
          [](const ParamSpec& p) -> Bound {
            if (p.type == ParamType::kInt64) return static_cast<int64_t>(p.maximum);
            if (p.type == ParamType::kDouble) return p.maximum;
            return std::nullopt;
          },
          DictEntry::kOmitNone)
      .Field(
          "values",
          [](const ParamSpec& p) -> std::optional<std::vector<std::string>> {
            if (p.type != ParamType::kEnum) return std::nullopt;
            return p.enum_values;
          },
          DictEntry::kOmitNone)
      .Field("meaning", &ParamSpec::meaning);

  Record<RegionEvent>(m, "RegionEvent", "One parallel region a kernel opened (native/executor/region_events.h).")
      .Field("label", [](const RegionEvent& e) { return std::string(e.label); })
      .Field("kernel", [](const RegionEvent& e) { return std::string(e.kernel); })
      .Field("total", &RegionEvent::total)
      .Field("grain", &RegionEvent::grain)
      .Field("requested_participants", &RegionEvent::requested_participants)
      .Field("admitted_participants", &RegionEvent::admitted_participants)
      .Field("observed_participants", &RegionEvent::observed_participants)
      .Field("joined_participants", &RegionEvent::joined_participants)
      .Field("nested", &RegionEvent::nested)
      .Field("wall_ns", &RegionEvent::wall_ns)
      .Field("cpu_ns", &RegionEvent::cpu_ns)
      .Field("dispatch_ns", &RegionEvent::dispatch_ns)
      .Field("first_join_ns", &RegionEvent::first_join_ns)
      .Field("end_wait_ns", &RegionEvent::end_wait_ns);

  Record<AllocationStats>(m, "AllocationStats", "An allocator's counters.")
      .Field("allocations", &AllocationStats::allocations)
      .Field("bytes_allocated", &AllocationStats::bytes_allocated)
      .Field("current_bytes", &AllocationStats::current_bytes)
      .Field("peak_bytes", &AllocationStats::peak_bytes);

  m.def("data_type_name", [](int type) {
    if (!IsValidDataType(type)) ThrowStatus(InvalidArgument("unknown ONNX element type ", type));
    return std::string(DataTypeName(static_cast<DataType>(type)));
  });
}

}  // namespace onnx_light::python
