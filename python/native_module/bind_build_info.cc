// onnx_light._native.build_info(): how this extension was compiled, so that a user (and
// wheel_test) can tell an optimised build from a debug one without timing anything.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdlib>
#include <string>

#include "native/core/cpu_features.h"
#include "python/native_module/bindings.h"

namespace nb = nanobind;

namespace onnx_light::python {
namespace {

// Set by python/BUILD from Bazel's --compilation_mode (0 fastbuild, 1 dbg, 2 opt).
#ifndef ONNX_LIGHT_COMPILATION_MODE
#error "python/BUILD defines ONNX_LIGHT_COMPILATION_MODE"
#endif

const char* CompilationMode() {
  switch (ONNX_LIGHT_COMPILATION_MODE) {
    case 2:
      return "opt";
    case 1:
      return "dbg";
    default:
      return "fastbuild";
  }
}

std::string Compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

void BindBuildInfo(nb::module_& m) {
  m.def("native_build_info", [] {
    nb::dict info;
    info["compilation_mode"] = CompilationMode();
#ifdef __OPTIMIZE__
    info["optimized"] = true;
#else
    info["optimized"] = false;
#endif
#ifdef NDEBUG
    info["assertions"] = false;
#else
    info["assertions"] = true;
#endif
    info["compiler"] = Compiler();
#if defined(__x86_64__)
    info["architecture"] = "x86_64";
#elif defined(__aarch64__)
    info["architecture"] = "aarch64";
#else
    info["architecture"] = "unknown";
#endif
    // Every variant is compiled into the extension (per-ISA translation units); the
    // kernels pick the best one this CPU runs, under the cap (native/core/cpu_features.h).
    nb::list compiled;
#if defined(__x86_64__)
    for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) compiled.append(IsaName(isa));
#elif defined(__aarch64__)
    for (Isa isa : {Isa::kPortable, Isa::kNeon}) compiled.append(IsaName(isa));
#else
    compiled.append(IsaName(Isa::kPortable));
#endif
    info["isa_compiled"] = compiled;
    info["isa_supported"] = IsaName(HostIsa());
    info["isa_selected"] = IsaName(MaxIsa());
    const char* cap = std::getenv("ONNX_LIGHT_MAX_ISA");
    info["isa_cap"] = cap != nullptr && *cap != '\0' ? nb::cast(std::string(cap)) : nb::none();
    return info;
  });
}

}  // namespace onnx_light::python
