// onnx_light._native.build_info(): how this extension was compiled, so that a user (and
// wheel_test) can tell an optimised build from a debug one without timing anything.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "native/core/cpu_features.h"
#include "python/native_module/bindings.h"
#include "python/native_module/record.h"

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

std::vector<std::string> CompiledIsas() {
  std::vector<std::string> compiled;
#if defined(__x86_64__)
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) compiled.emplace_back(IsaName(isa));
#elif defined(__aarch64__)
  for (Isa isa : {Isa::kPortable, Isa::kNeon}) compiled.emplace_back(IsaName(isa));
#else
  compiled.emplace_back(IsaName(Isa::kPortable));
#endif
  return compiled;
}

struct NativeBuildInfo {
  std::string compilation_mode = CompilationMode();
#ifdef __OPTIMIZE__
  bool optimized = true;
#else
  bool optimized = false;
#endif
#ifdef NDEBUG
  bool assertions = false;
#else
  bool assertions = true;
#endif
  std::string compiler = Compiler();
#if defined(__x86_64__)
  std::string architecture = "x86_64";
#elif defined(__aarch64__)
  std::string architecture = "aarch64";
#else
  std::string architecture = "unknown";
#endif
  // Every variant is compiled into the extension (per-ISA translation units); the
  // kernels pick the best one this CPU runs, under the cap (native/core/cpu_features.h).
  std::vector<std::string> isa_compiled = CompiledIsas();
  std::string isa_supported = IsaName(HostIsa());
  std::string isa_selected = IsaName(MaxIsa());
  std::optional<std::string> isa_cap = [] {
    const char* cap = std::getenv("ONNX_LIGHT_MAX_ISA");
    return cap != nullptr && *cap != '\0' ? std::optional<std::string>(cap) : std::nullopt;
  }();
};

}  // namespace

void BindBuildInfo(nb::module_& m) {
  Record<NativeBuildInfo>(m, "BuildInfo", "How the extension was compiled and which ISA its kernels use here.")
      .Field("compilation_mode", &NativeBuildInfo::compilation_mode)
      .Field("optimized", &NativeBuildInfo::optimized)
      .Field("assertions", &NativeBuildInfo::assertions)
      .Field("compiler", &NativeBuildInfo::compiler)
      .Field("architecture", &NativeBuildInfo::architecture)
      .Field("isa_compiled", &NativeBuildInfo::isa_compiled)
      .Field("isa_supported", &NativeBuildInfo::isa_supported)
      .Field("isa_selected", &NativeBuildInfo::isa_selected)
      .Field("isa_cap", &NativeBuildInfo::isa_cap);
  m.def("native_build_info", [] { return NativeBuildInfo(); });
}

}  // namespace onnx_light::python
