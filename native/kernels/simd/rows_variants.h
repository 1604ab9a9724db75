// Internal to simd/rows: the float row primitives of one ISA as a table, and every ISA's
// table (isa_variants.h). rows.cc dispatches through BestVariant(FloatRowsVariants());
// rows_test.cc runs every variant against the portable one.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace simd {

// rows.h's float functions, one ISA's implementations.
struct FloatRows {
  float (*exp_shifted_sum)(const float* x, float* y, int64_t n, float shift);
  void (*scale_row)(float* x, int64_t n, float factor);
  float (*row_max)(const float* x, int64_t n);
  void (*softmax_row)(const float* x, float* y, int64_t n);
  void (*log_softmax_row)(const float* x, float* y, int64_t n);
  void (*max_into)(const float* x, float* m, int64_t n);
  void (*exp_shifted_accumulate)(const float* x, const float* shift, float* y, float* sum, int64_t n);
  float (*row_sum)(const float* x, int64_t n);
  float (*row_squared_deviation_sum)(const float* x, int64_t n, float mean);
  void (*normalize_row)(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                        const float* beta);
};

// x86-64: avx512, avx2, portable; aarch64: neon, portable.
const std::vector<IsaVariant<FloatRows>>& FloatRowsVariants();

}  // namespace simd
}  // namespace onnx_light
