// The panel width of the packed step product (gate_rows.h), shared by the per-ISA files.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace rnn {

// Columns of one panel: 2 AVX-512, 4 AVX2 or 8 NEON vectors. (constexpr: internal linkage,
// nothing with vague linkage in the ISA-flagged archives.)
constexpr int64_t kStepPanel = 32;

}  // namespace rnn
}  // namespace onnx_light
