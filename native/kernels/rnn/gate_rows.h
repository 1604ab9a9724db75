// The gate activations of RNN, GRU and LSTM over float rows (sigmoid and tanh, the ONNX
// defaults), vectorised with simd/math.h on each ISA and chosen once per process. Tails go
// through the same vector code on a zero-padded buffer, so an element's value depends
// only on its input, never on where it sits in a row or a hidden-unit block.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace rnn {

// x[i] = f(x[i]) for i < n, in place.
struct GateRows {
  void (*sigmoid)(float* x, int64_t n);
  void (*tanh)(float* x, int64_t n);
};

// x86-64: avx512, avx2, portable; aarch64: neon, portable. Portable is libm per element.
const std::vector<IsaVariant<GateRows>>& GateRowsVariants();
// BestVariant(GateRowsVariants()), chosen once.
const GateRows& BestGateRows();

}  // namespace rnn
}  // namespace onnx_light
