// Registers one op over its opset history: one KernelDef per range of versions, each with
// the element types the ONNX schema of that range allows, all sharing one factory.
#pragma once

#include <utility>
#include <vector>

#include "native/kernels/elementwise/element_types.h"
#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace elementwise {

struct OpsetTypes {
  int since_version;
  std::vector<DataType> types;
};

template <typename... Ts>
OpsetTypes Since(int version, TypeList<Ts...> types) {
  return {version, DataTypesOf(types)};
}

struct OpRegistration {
  const char* op;
  const char* family;
  std::vector<OpsetTypes> versions;  // ascending since_version; the last one is open-ended
  KernelFactory factory;
  int64_t minimum_elements;  // portable default of parallel.minimum_elements
  bool calibratable = true;
  int dispatch_input = 0;
};

inline void Register(KernelRegistry& registry, const OpRegistration& r) {
  for (size_t k = 0; k < r.versions.size(); ++k) {
    KernelDef def;
    def.op = r.op;
    def.since_version = r.versions[k].since_version;
    def.end_version = k + 1 < r.versions.size() ? r.versions[k + 1].since_version - 1 : kOpenEnded;
    def.family = r.family;
    def.element_types = r.versions[k].types;
    def.dispatch_input = r.dispatch_input;
    def.tuning = ElementwiseTuning(r.minimum_elements);
    def.calibratable = r.calibratable;
    def.factory = r.factory;
    def.output_may_overwrite_input = r.dispatch_input;  // elementwise: same index in, same index out
    registry.Add(std::move(def));
  }
}

}  // namespace elementwise
}  // namespace onnx_light
