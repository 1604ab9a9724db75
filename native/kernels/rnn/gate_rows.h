// The per-ISA primitives of the RNN, GRU and LSTM step, chosen once per process:
//  - the gate activations over float rows (sigmoid and tanh, the ONNX defaults),
//    vectorised with simd/math.h. Tails go through the same vector code on a zero-padded
//    buffer, so an element's value depends only on its input, never on where it sits in a
//    row or a hidden-unit block;
//  - the recurrent product of a few batch rows (the step at small batch) against gate rows
//    of R packed in panels of kStepPanel columns (PackStepPanels): each panel is read once
//    per group of rows, every row's accumulators live in registers, and each output is one
//    multiply-add chain over k in ascending order (fused where the ISA has FMA), whatever
//    m, n or its position;
//  - one batch row's LSTM gates (the default activations) in one pass over its units:
//    every gate of a unit computed in registers from the product, projection and bias
//    rows, the cell state updated in place (gate_args.h), tails as for the activations;
//  - one batch row's GRU gates (the default activations) in one pass per round: z, r, the
//    candidate and h of a unit in registers (gate_args.h's GruRowArgs), tails likewise.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/rnn/gate_args.h"
#include "native/kernels/rnn/step_panel.h"

namespace onnx_light {
namespace rnn {

// Floats PackStepPanels writes for n columns of k: whole panels, the last zero-padded.
inline int64_t StepPanelFloats(int64_t n, int64_t k) { return (n + kStepPanel - 1) / kStepPanel * kStepPanel * k; }
// Packs the n rows r[j * ldr + q] (q < k) as panels: panel p holds, for each q < k, the
// kStepPanel values r[(p * kStepPanel + l) * ldr + q] at packed[(p * k + q) * kStepPanel + l]
// (zero for columns past n).
void PackStepPanels(const float* r, int64_t n, int64_t k, int64_t ldr, float* packed);

struct GateRows {
  // x[i] = f(x[i]) for i < n, in place.
  void (*sigmoid)(float* x, int64_t n);
  void (*tanh)(float* x, int64_t n);
  // c[i * ldc + j] = sum_q a[i * lda + q] * r_j[q] for i < m, j < n, with r_j the packed
  // rows (PackStepPanels(r, n, k, ...)); c is written, not accumulated.
  void (*product)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                  int64_t ldc);
  // LstmRowArgs (gate_args.h): cell and hidden written for r.n units.
  void (*lstm)(const LstmRowArgs& r);
  // GruRowArgs (gate_args.h), r.n units each: gru_linear writes hidden; gru_reset z and
  // reset; gru_hidden hidden.
  void (*gru_linear)(const GruRowArgs& r);
  void (*gru_reset)(const GruRowArgs& r);
  void (*gru_hidden)(const GruRowArgs& r);
};

// x86-64: avx512, avx2, portable; aarch64: neon, portable. Portable is libm per element
// and unfused multiply-adds.
const std::vector<IsaVariant<GateRows>>& GateRowsVariants();
// BestVariant(GateRowsVariants()), chosen once.
const GateRows& BestGateRows();

}  // namespace rnn
}  // namespace onnx_light
