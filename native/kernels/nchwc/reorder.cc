#include "native/kernels/nchwc/reorder.h"

#include "native/kernels/nchwc/reorder_rows.h"

namespace onnx_light {
namespace nchwc {
namespace {

void ToBlockedPortable(const float* x, int64_t ld, int lanes, int64_t count, float* out) {
  for (int64_t p = 0; p < count; ++p) {
    for (int l = 0; l < kBlock; ++l) out[p * kBlock + l] = l < lanes ? x[l * ld + p] : 0.0f;
  }
}

void FromBlockedPortable(const float* in, int lanes, int64_t count, float* y, int64_t ld) {
  for (int l = 0; l < lanes; ++l) {
    for (int64_t p = 0; p < count; ++p) y[l * ld + p] = in[p * kBlock + l];
  }
}

}  // namespace

const std::vector<IsaVariant<ReorderRows>>& ReorderRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<ReorderRows>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, ReorderRows{ToBlockedAvx512, FromBlockedAvx512}},
        {"avx2", Isa::kAvx2, ReorderRows{ToBlockedAvx2, FromBlockedAvx2}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, ReorderRows{ToBlockedNeon, FromBlockedNeon}},
#endif
        {"portable", Isa::kPortable, ReorderRows{ToBlockedPortable, FromBlockedPortable}},
  };
  return *variants;
}

const ReorderRows& BestReorderRows() {
  static const ReorderRows rows = BestVariant(ReorderRowsVariants()).impl;
  return rows;
}

}  // namespace nchwc
}  // namespace onnx_light
