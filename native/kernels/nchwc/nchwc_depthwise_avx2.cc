// AVX2 blocks of nchwc_depthwise.h: two ymm per channel block, runs of 4 positions (8
// accumulators of AVX2's 16 registers).
// Compiled by isa_library(isa = "avx2"); reached only through NchwcBlockVariants().
#include "native/kernels/nchwc/nchwc_depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

namespace onnx_light {
namespace nchwc {
namespace {

struct Avx2 {
  struct Vec {
    __m256 lo, hi;
  };
  static constexpr int kCols = 4;
  static constexpr bool kPairRows = false;
  static constexpr int kColsAlt = kCols;
  static Vec Zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static Vec Load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void Store(float* p, Vec v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static Vec Add(Vec a, Vec b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static Vec Mul(Vec a, Vec b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static Vec Fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
};

#include "native/kernels/nchwc/nchwc_depthwise_simd.inc"

}  // namespace

void NchwcDepthwiseRowAvx2(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                           const float* bias_block, int64_t oh, float* y_row) {
  BlockOps<Avx2>::DepthwiseRow(g, x_block, w_block, bias_block, oh, y_row);
}
void NchwcDepthwiseRowPairAvx2(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                               const float* bias_block, int64_t oh, float* y_rows) {
  BlockOps<Avx2>::DepthwiseRowPair(g, x_block, w_block, bias_block, oh, y_rows);
}
void NchwcBlockSumsAvx2(const float* x_block, int64_t positions, float* sums) {
  BlockOps<Avx2>::BlockSums(x_block, positions, sums);
}
void NchwcBlockScaleAvx2(const float* x_block, const float* gate, int64_t positions, float* y_block) {
  BlockOps<Avx2>::BlockScale(x_block, gate, positions, y_block);
}

}  // namespace nchwc
}  // namespace onnx_light

#else
namespace onnx_light {
namespace nchwc {
void NchwcDepthwiseRowAvx2(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcDepthwiseRowPairAvx2(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcBlockSumsAvx2(const float*, int64_t, float*) {}
void NchwcBlockScaleAvx2(const float*, const float*, int64_t, float*) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
