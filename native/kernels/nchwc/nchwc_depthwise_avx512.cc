// AVX-512 blocks of nchwc_depthwise.h: one zmm per channel block, runs of 8 positions.
// Compiled by isa_library(isa = "avx512"); reached only through NchwcBlockVariants().
#include "native/kernels/nchwc/nchwc_depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace nchwc {
namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kCols = 8;
  static constexpr bool kPairRows = true;
  static constexpr int kColsAlt = 7;  // rows of 7, 14, 28: MobileNetV3 / EfficientNet widths
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};

#include "native/kernels/nchwc/nchwc_depthwise_simd.inc"

}  // namespace

void NchwcDepthwiseRowAvx512(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                             const float* bias_block, int64_t oh, float* y_row) {
  BlockOps<Avx512>::DepthwiseRow(g, x_block, w_block, bias_block, oh, y_row);
}
void NchwcDepthwiseRowPairAvx512(const DepthwiseGeometry& g, const float* x_block, const float* w_block,
                                 const float* bias_block, int64_t oh, float* y_rows) {
  BlockOps<Avx512>::DepthwiseRowPair(g, x_block, w_block, bias_block, oh, y_rows);
}
void NchwcBlockSumsAvx512(const float* x_block, int64_t positions, float* sums) {
  BlockOps<Avx512>::BlockSums(x_block, positions, sums);
}
void NchwcBlockScaleAvx512(const float* x_block, const float* gate, int64_t positions, float* y_block) {
  BlockOps<Avx512>::BlockScale(x_block, gate, positions, y_block);
}

}  // namespace nchwc
}  // namespace onnx_light

#else
namespace onnx_light {
namespace nchwc {
void NchwcDepthwiseRowAvx512(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcDepthwiseRowPairAvx512(const DepthwiseGeometry&, const float*, const float*, const float*, int64_t, float*) {}
void NchwcBlockSumsAvx512(const float*, int64_t, float*) {}
void NchwcBlockScaleAvx512(const float*, const float*, int64_t, float*) {}
}  // namespace nchwc
}  // namespace onnx_light
#endif
