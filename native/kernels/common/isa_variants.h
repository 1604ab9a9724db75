// ISA variants of a kernel primitive: how a primitive lists its per-ISA implementations,
// how it picks one at run time, and how its tests run every one (isa_test_util.h).
//
// Contract:
//   - A primitive with ISA variants lists every variant compiled for this architecture,
//     best first and portable last, in one function `...Variants()` returning
//     `const std::vector<IsaVariant<Impl>>&` (Impl: a function pointer or a struct of
//     them). The last one is the portable variant: it exists on every architecture and is
//     the reference the tests compare the others against. (Other variants may also need
//     no more than Isa::kPortable, e.g. SSE2 code, the x86-64 baseline.)
//   - Dispatch takes BestVariant(list): the first whose ISA is enabled on this CPU under
//     the cap (native/core/cpu_features.h: ONNX_LIGHT_MAX_ISA or SetMaxIsa). Choose once,
//     in a function-local static; never call __builtin_cpu_supports or CPUID yourself.
//   - Per-ISA code lives in its own source file compiled by an isa_library() target
//     (native/kernels/kernel_family.bzl), which adds that ISA's compiler flags; the source
//     has no `#pragma GCC target` and no target attributes. Such a file may only be
//     reached after IsaEnabled(its ISA) said yes, and must keep its helpers in an
//     anonymous namespace (an inline function with external linkage compiled with AVX-512
//     could be picked by the linker for callers on any CPU).
//
// Example (native/kernels/simd/rows.cc):
//   const std::vector<IsaVariant<FloatRows>>& FloatRowsVariants() {
//     static const auto* variants = new std::vector<IsaVariant<FloatRows>>{
//         {"avx512", Isa::kAvx512, OL_FLOAT_ROWS(Avx512)},
//         {"avx2", Isa::kAvx2, OL_FLOAT_ROWS(Avx2)},
//         {"portable", Isa::kPortable, kPortableRows}};
//     return *variants;
//   }
//   const FloatRows& Rows() {
//     static const FloatRows rows = BestVariant(FloatRowsVariants()).impl;
//     return rows;
//   }
#pragma once

#include <vector>

#include "native/core/cpu_features.h"

namespace onnx_light {

template <typename Impl>
struct IsaVariant {
  const char* name;  // "avx512", "avx2", "neon", "portable" (or a more specific name)
  Isa isa;           // what the CPU needs (and the cap must allow) to run it
  Impl impl;
};

// The first variant enabled on this CPU under the cap; the list ends with a portable one.
template <typename Impl>
const IsaVariant<Impl>& BestVariant(const std::vector<IsaVariant<Impl>>& variants) {
  for (const IsaVariant<Impl>& v : variants) {
    if (IsaEnabled(v.isa)) return v;
  }
  return variants.back();
}

// Every enabled variant, best first (what a test runs; the rest it reports as skipped).
template <typename Impl>
std::vector<const IsaVariant<Impl>*> EnabledVariants(const std::vector<IsaVariant<Impl>>& variants) {
  std::vector<const IsaVariant<Impl>*> enabled;
  for (const IsaVariant<Impl>& v : variants) {
    if (IsaEnabled(v.isa)) enabled.push_back(&v);
  }
  return enabled;
}

// The variants compiled for this architecture's SIMD level(s), as ISA names, for tables
// that are not IsaVariant lists.
inline std::vector<Isa> CompiledIsas() {
#if defined(__x86_64__)
  return {Isa::kAvx512, Isa::kAvx2, Isa::kPortable};
#elif defined(__aarch64__)
  return {Isa::kNeon, Isa::kPortable};
#else
  return {Isa::kPortable};
#endif
}

}  // namespace onnx_light
