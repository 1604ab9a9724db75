// The per-ISA reorder rows (reorder_<isa>.cc, isa_library targets, empty-bodied off their
// architecture), with reorder.h's contract: reach them only through ReorderRowsVariants()
// after IsaEnabled.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace nchwc {

void ToBlockedAvx512(const float* x, int64_t ld, int lanes, int64_t count, float* out);
void FromBlockedAvx512(const float* in, int lanes, int64_t count, float* y, int64_t ld);
void ToBlockedAvx2(const float* x, int64_t ld, int lanes, int64_t count, float* out);
void FromBlockedAvx2(const float* in, int lanes, int64_t count, float* y, int64_t ld);
void ToBlockedNeon(const float* x, int64_t ld, int lanes, int64_t count, float* out);
void FromBlockedNeon(const float* in, int lanes, int64_t count, float* y, int64_t ld);

}  // namespace nchwc
}  // namespace onnx_light
