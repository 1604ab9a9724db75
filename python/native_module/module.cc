// The onnx_light._native extension module. Each area binds itself in its own file so that
// the module stays a table of contents.
#include <nanobind/nanobind.h>

#include "python/native_module/bindings.h"

NB_MODULE(_native, m) {
  m.doc() = "onnx-light native runtime: kernels, executor, session, tuning";
  onnx_light::python::BindCore(m);
  onnx_light::python::BindRegistry(m);
  onnx_light::python::BindTuning(m);
  onnx_light::python::BindSession(m);
  onnx_light::python::BindBuildInfo(m);
  onnx_light::python::BindLoader(m);
}
