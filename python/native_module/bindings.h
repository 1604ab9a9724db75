// Binding entry points, one per area, called from module.cc.
#pragma once

#include <nanobind/nanobind.h>

#include "native/core/status.h"

namespace onnx_light::python {

void BindCore(nanobind::module_& m);      // DataType names, Status exceptions
void BindRegistry(nanobind::module_& m);  // registered kernels (for the inventory)
void BindTuning(nanobind::module_& m);    // descriptors, tuning sources, kernel runner, calibration
void BindSession(nanobind::module_& m);   // Graph, Session, CpuExecutionPolicy, RunOptions
void BindBuildInfo(nanobind::module_& m); // how the extension was compiled
void BindLoader(nanobind::module_& m);    // native model loading (LoadedModel)

// Raises the Python exception that matches status.code() (see onnx_light.errors).
[[noreturn]] void ThrowStatus(const Status& status);
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

}  // namespace onnx_light::python
