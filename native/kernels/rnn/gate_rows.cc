#include "native/kernels/rnn/gate_rows.h"

#include <algorithm>
#include <cmath>

namespace onnx_light {
namespace rnn {

// The vectorised rows, in gate_rows_<isa>.cc (each an isa_library with its ISA's flags).
#define OL_DECLARE_GATE_ROWS(Isa)                                                                                    \
  void SigmoidRow##Isa(float* x, int64_t n);                                                                         \
  void TanhRow##Isa(float* x, int64_t n);                                                                            \
  void StepProduct##Isa(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c, \
                        int64_t ldc);                                                                                \
  void LstmRow##Isa(const LstmRowArgs& r);
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

// One multiply-add chain per output, q ascending, as the vector variants (without fusing).
void StepProductPortable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                         int64_t ldc) {
  for (int64_t j0 = 0; j0 < n; j0 += kStepPanel) {
    const float* panel = packed + j0 * k;
    const int64_t cols = std::min(kStepPanel, n - j0);
    for (int64_t i = 0; i < m; ++i) {
      float acc[kStepPanel] = {};
      for (int64_t q = 0; q < k; ++q) {
        const float x = a[i * lda + q];
        for (int64_t l = 0; l < kStepPanel; ++l) acc[l] += x * panel[q * kStepPanel + l];
      }
      std::copy(acc, acc + cols, c + i * ldc + j0);
    }
  }
}

// The formulas of gate_args.h in order, libm per element, without fusing.
void LstmRowPortable(const LstmRowArgs& r) {
  const int64_t n = r.n;
  auto sigmoid = [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  auto sum = [&](int gate, int64_t j) {
    return (r.product[gate * n + j] + r.projection[gate * n + j]) + r.bias[gate * n + j];
  };
  for (int64_t j = 0; j < n; ++j) {
    const float c = r.cell[j];
    const float i = sigmoid(sum(0, j) + r.peep_i[j] * c);
    const float f = sigmoid(sum(2, j) + r.peep_f[j] * c);
    const float z = std::tanh(sum(3, j));
    const float c_next = f * c + i * z;
    const float o = sigmoid(sum(1, j) + r.peep_o[j] * c_next);
    r.cell[j] = c_next;
    r.hidden[j] = o * std::tanh(c_next);
  }
}

}  // namespace

void PackStepPanels(const float* r, int64_t n, int64_t k, int64_t ldr, float* packed) {
  for (int64_t j0 = 0; j0 < n; j0 += kStepPanel) {
    float* panel = packed + j0 * k;
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t l = 0; l < kStepPanel; ++l) {
        panel[q * kStepPanel + l] = j0 + l < n ? r[(j0 + l) * ldr + q] : 0.0f;
      }
    }
  }
}

const std::vector<IsaVariant<GateRows>>& GateRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<GateRows>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, GateRows{SigmoidRowAvx512, TanhRowAvx512, StepProductAvx512, LstmRowAvx512}},
        {"avx2", Isa::kAvx2, GateRows{SigmoidRowAvx2, TanhRowAvx2, StepProductAvx2, LstmRowAvx2}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, GateRows{SigmoidRowNeon, TanhRowNeon, StepProductNeon, LstmRowNeon}},
#endif
        {"portable", Isa::kPortable,
         GateRows{SigmoidRowPortable, TanhRowPortable, StepProductPortable, LstmRowPortable}},
  };
  return *variants;
}

const GateRows& BestGateRows() {
  static const GateRows best = BestVariant(GateRowsVariants()).impl;
  return best;
}

}  // namespace rnn
}  // namespace onnx_light
