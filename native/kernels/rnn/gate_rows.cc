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
  void LstmRow##Isa(const LstmRowArgs& r);                                                                           \
  void GruLinearRow##Isa(const GruRowArgs& r);                                                                       \
  void GruResetRow##Isa(const GruRowArgs& r);                                                                        \
  void GruHiddenRow##Isa(const GruRowArgs& r);
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

// GRU rows: the formulas of gate_args.h in order, libm per element, without fusing.
float SigmoidPortable(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float GruSum(const GruRowArgs& r, int gate, int64_t j) {
  return (r.product[gate * r.n + j] + r.projection[gate * r.n + j]) + r.bias[gate * r.n + j];
}
float GruBlend(float z, float candidate, float h_prev) { return z * h_prev + (1.0f - z) * candidate; }

void GruLinearRowPortable(const GruRowArgs& r) {
  const int64_t n = r.n;
  for (int64_t j = 0; j < n; ++j) {
    const float z = SigmoidPortable(GruSum(r, 0, j)), reset = SigmoidPortable(GruSum(r, 1, j));
    const float candidate =
        std::tanh((r.projection[2 * n + j] + r.bias[2 * n + j]) + reset * (r.product[2 * n + j] + r.bias_rh[j]));
    r.hidden[j] = GruBlend(z, candidate, r.h_prev[j]);
  }
}

void GruResetRowPortable(const GruRowArgs& r) {
  for (int64_t j = 0; j < r.n; ++j) {
    const float z = SigmoidPortable(GruSum(r, 0, j)), reset = SigmoidPortable(GruSum(r, 1, j));
    r.reset[j] = reset * r.h_prev[j];
    r.z[j] = z;
  }
}

void GruHiddenRowPortable(const GruRowArgs& r) {
  const int64_t n = r.n;
  for (int64_t j = 0; j < n; ++j) {
    const float candidate =
        std::tanh(((r.projection[2 * n + j] + r.bias[2 * n + j]) + r.product[2 * n + j]) + r.bias_rh[j]);
    r.hidden[j] = GruBlend(r.z[j], candidate, r.h_prev[j]);
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
    {"avx512", Isa::kAvx512,
     GateRows{SigmoidRowAvx512, TanhRowAvx512, StepProductAvx512, LstmRowAvx512, GruLinearRowAvx512, GruResetRowAvx512,
              GruHiddenRowAvx512}},
        {"avx2", Isa::kAvx2,
         GateRows{SigmoidRowAvx2, TanhRowAvx2, StepProductAvx2, LstmRowAvx2, GruLinearRowAvx2, GruResetRowAvx2,
                  GruHiddenRowAvx2}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon,
     GateRows{SigmoidRowNeon, TanhRowNeon, StepProductNeon, LstmRowNeon, GruLinearRowNeon, GruResetRowNeon,
              GruHiddenRowNeon}},
#endif
        {"portable", Isa::kPortable,
         GateRows{SigmoidRowPortable, TanhRowPortable, StepProductPortable, LstmRowPortable, GruLinearRowPortable,
                  GruResetRowPortable, GruHiddenRowPortable}},
  };
  return *variants;
}

const GateRows& BestGateRows() {
  static const GateRows best = BestVariant(GateRowsVariants()).impl;
  return best;
}

}  // namespace rnn
}  // namespace onnx_light
