// KernelRegistration: how a family registers an op, with named fields instead of a
// positional KernelDef. The family is not typed by hand: kernel_family() (kernel_family.bzl)
// compiles the family's sources with OL_KERNEL_FAMILY="<name>", and Kernel(op) takes it.
//
// Contract:
// - Kernel(op) starts a registration of `op` in the ai.onnx domain for this source's family.
// - One op usually spans several opset ranges: Opsets({Since(v, types), ...}) or
//   SinceVersions({v, ...}) start a range at each v that ends where the next one starts
//   (the last one is open-ended, or ends at Until(end)). Versions(since, end) is one
//   explicit range. Each range becomes one KernelDef; none given: one range from opset 1.
// - Types(list) gives every range without types of its own the same element types;
//   TypesAt(f) computes them from the range's since_version. No types: untyped.
// - Everything else has the KernelDef's defaults (dispatch input 0, no tuning schema, not
//   calibratable, never in place); AddTo(registry) adds the defs (errors are collected by
//   the registry, as for KernelRegistry::Add).
//
// Example (an elementwise op over its opset history):
//   OL_REGISTER_KERNELS(gemm_op) {
//     Kernel("Gemm").Opsets({Since(1, Floats{}), Since(9, GemmTypes{}), Since(13, GemmTypesBf{})})
//         .Tuning(gemm::GemmTuningParams()).Calibratable().Factory(MakeKernel<GemmKernel>())
//         .AddTo(registry);
//   }
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// One step of an op's opset history: the element types from `since_version` on.
struct OpsetTypes {
  int since_version;
  std::vector<DataType> types;
};

template <typename... Ts>
OpsetTypes Since(int since_version, TypeList<Ts...> types) {
  return {since_version, DataTypesOf(types)};
}

class KernelRegistration {
 public:
  // Prefer Kernel(op), which fills `family` from the build.
  KernelRegistration(std::string family, std::string op) {
    def_.family = std::move(family);
    def_.op = std::move(op);
  }

  KernelRegistration& Domain(std::string domain) {
    def_.domain = std::move(domain);
    return *this;
  }
  // One explicit range [since, end] (end inclusive; kOpenEnded for no end).
  KernelRegistration& Versions(int since, int end) {
    ranges_.push_back({since, end, {}, false});
    return *this;
  }
  // Ranges starting at each of `versions` (ascending), each ending where the next starts.
  KernelRegistration& SinceVersions(std::vector<int> versions) {
    for (int v : versions) ranges_.push_back({v, kDerivedEnd, {}, false});
    return *this;
  }
  // The same, each range with its own element types: Opsets({Since(7, Floats{}), ...}).
  KernelRegistration& Opsets(std::vector<OpsetTypes> history) {
    for (OpsetTypes& o : history) ranges_.push_back({o.since_version, kDerivedEnd, std::move(o.types), true});
    return *this;
  }
  // End of the last range (inclusive) instead of open-ended.
  KernelRegistration& Until(int end) {
    last_end_ = end;
    return *this;
  }
  KernelRegistration& Types(std::vector<DataType> types) {
    types_at_ = [types = std::move(types)](int) { return types; };
    return *this;
  }
  template <typename... Ts>
  KernelRegistration& Types(TypeList<Ts...> types) {
    return Types(DataTypesOf(types));
  }
  KernelRegistration& TypesAt(std::function<std::vector<DataType>(int since_version)> types_at) {
    types_at_ = std::move(types_at);
    return *this;
  }
  KernelRegistration& DispatchInput(int input) {
    def_.dispatch_input = input;
    return *this;
  }
  KernelRegistration& Tuning(std::vector<ParamSpec> tuning) {
    def_.tuning = std::move(tuning);
    return *this;
  }
  KernelRegistration& Calibratable(bool calibratable = true) {
    def_.calibratable = calibratable;
    return *this;
  }
  KernelRegistration& Factory(KernelFactory factory) {
    def_.factory = std::move(factory);
    return *this;
  }
  KernelRegistration& OutputMayOverwriteInput(int input) {
    def_.output_may_overwrite_input = input;
    return *this;
  }

  // One KernelDef per range (one open-ended range from opset 1 when none was given).
  std::vector<KernelDef> Defs() const {
    std::vector<Range> ranges = ranges_;
    if (ranges.empty()) ranges.push_back({1, kDerivedEnd, {}, false});
    std::vector<KernelDef> defs;
    for (size_t k = 0; k < ranges.size(); ++k) {
      KernelDef def = def_;
      def.since_version = ranges[k].since;
      def.end_version = ranges[k].end != kDerivedEnd ? ranges[k].end
                        : k + 1 < ranges.size()      ? ranges[k + 1].since - 1
                                                     : last_end_;
      if (ranges[k].has_types) {
        def.element_types = ranges[k].types;
      } else if (types_at_) {
        def.element_types = types_at_(def.since_version);
      }
      defs.push_back(std::move(def));
    }
    return defs;
  }

  void AddTo(KernelRegistry& registry) const {
    for (KernelDef& def : Defs()) registry.Add(std::move(def));
  }

 private:
  static constexpr int kDerivedEnd = -1;
  struct Range {
    int since;
    int end;
    std::vector<DataType> types;
    bool has_types;
  };

  KernelDef def_;
  std::vector<Range> ranges_;
  int last_end_ = kOpenEnded;
  std::function<std::vector<DataType>(int)> types_at_;
};

#ifdef OL_KERNEL_FAMILY
// A registration of `op` for the family this source is compiled into. Internal linkage:
// each family's sources see their own OL_KERNEL_FAMILY.
static inline KernelRegistration Kernel(std::string op) { return KernelRegistration(OL_KERNEL_FAMILY, std::move(op)); }
#endif

}  // namespace onnx_light
