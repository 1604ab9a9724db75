#include "native/kernels/rnn/gate_rows.h"

#include <cmath>

namespace onnx_light {
namespace rnn {

// The vectorised rows, in gate_rows_<isa>.cc (each an isa_library with its ISA's flags).
#define OL_DECLARE_GATE_ROWS(Isa)            \
  void SigmoidRow##Isa(float* x, int64_t n); \
  void TanhRow##Isa(float* x, int64_t n);
#if defined(__x86_64__)
OL_DECLARE_GATE_ROWS(Avx2)
OL_DECLARE_GATE_ROWS(Avx512)
#elif defined(__aarch64__)
OL_DECLARE_GATE_ROWS(Neon)
#endif
#undef OL_DECLARE_GATE_ROWS

namespace {

void SigmoidRowPortable(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + std::exp(-x[i]));
}
void TanhRowPortable(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

}  // namespace

const std::vector<IsaVariant<GateRows>>& GateRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<GateRows>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, GateRows{SigmoidRowAvx512, TanhRowAvx512}},
        {"avx2", Isa::kAvx2, GateRows{SigmoidRowAvx2, TanhRowAvx2}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, GateRows{SigmoidRowNeon, TanhRowNeon}},
#endif
        {"portable", Isa::kPortable, GateRows{SigmoidRowPortable, TanhRowPortable}},
  };
  return *variants;
}

const GateRows& BestGateRows() {
  static const GateRows best = BestVariant(GateRowsVariants()).impl;
  return best;
}

}  // namespace rnn
}  // namespace onnx_light
