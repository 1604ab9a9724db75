#include "native/kernels/attention/panel_matmul.h"

namespace onnx_light {
namespace attention {

#if defined(__x86_64__)
// panel_matmul_avx2.cc and panel_matmul_avx512.cc (isa_library targets).
void PanelMatMulAvx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                     int64_t packed_rows, float* c, int64_t ldc);
void PanelMatMulAvx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                       int64_t packed_rows, float* c, int64_t ldc);
#endif

namespace {

// Portable kernel: the compiler vectorises the inner column loop (SSE2, NEON).
constexpr int64_t kPortableRows = 4;

template <typename T>
void PanelMatMulPortable(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b_packed,
                         int64_t packed_rows, T* c, int64_t ldc) {
  const int64_t panels = RoundUp(n, kPanelWidth) / kPanelWidth;
  for (int64_t p = 0; p < panels; ++p) {
    const T* panel = b_packed + p * packed_rows * kPanelWidth;
    for (int64_t i = 0; i < m; i += kPortableRows) {
      T acc[kPortableRows][kPanelWidth] = {};
      for (int64_t r = 0; r < k; ++r) {
        const T* b_row = panel + r * kPanelWidth;
        for (int64_t bi = 0; bi < kPortableRows; ++bi) {
          const T av = a[(i + bi) * lda + r];
          for (int64_t j = 0; j < kPanelWidth; ++j) acc[bi][j] += av * b_row[j];
        }
      }
      for (int64_t bi = 0; bi < kPortableRows; ++bi) {
        T* c_row = c + (i + bi) * ldc + p * kPanelWidth;
        for (int64_t j = 0; j < kPanelWidth; ++j) c_row[j] = acc[bi][j];
      }
    }
  }
}

}  // namespace

const std::vector<IsaVariant<PanelMatMulFn>>& PanelMatMulVariants() {
  static const auto* variants = new std::vector<IsaVariant<PanelMatMulFn>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, PanelMatMulAvx512}, {"avx2", Isa::kAvx2, PanelMatMulAvx2},
#endif
        {"portable", Isa::kPortable, PanelMatMulPortable<float>},
  };
  return *variants;
}

void PanelMatMul(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b_packed,
                 int64_t packed_rows, float* c, int64_t ldc) {
  static const PanelMatMulFn best = BestVariant(PanelMatMulVariants()).impl;
  best(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
}

void PanelMatMul(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b_packed,
                 int64_t packed_rows, double* c, int64_t ldc) {
  PanelMatMulPortable(m, n, k, a, lda, b_packed, packed_rows, c, ldc);
}

}  // namespace attention
}  // namespace onnx_light
