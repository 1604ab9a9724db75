#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "native/core/data_type.h"
#include "native/tuning/schema.h"
#include "python/native_module/bindings.h"

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

  m.def("data_type_name", [](int type) {
    if (!IsValidDataType(type)) ThrowStatus(InvalidArgument("unknown ONNX element type ", type));
    return std::string(DataTypeName(static_cast<DataType>(type)));
  });
}

}  // namespace onnx_light::python
