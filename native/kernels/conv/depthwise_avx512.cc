// AVX-512 depthwise planes: 16 output columns per vector; row ends and the last partial
// vector through load masks (masked-off lanes are never read). Stride 2 loads 32
// consecutive inputs and keeps the even ones.
// Compiled by isa_library(isa = "avx512"); reached only through DepthwisePlaneVariants().
#include "native/kernels/conv/depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

#include "native/kernels/simd/lanes_avx512.h"
#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace conv {
namespace {

struct Avx512 {
  using Math = simd::Lanes16;  // simd/math.h's lanes of Vec (the activations)
  static constexpr int64_t kLanes = 16;
  static constexpr int kVectorRegisters = 32;
  static constexpr int64_t kPaddedMinVectors[2] = {kPaddedRowsNever, kPaddedRowsNever};  // depthwise_plane_simd.inc
  using Vec = __m512;
  using Mask = __mmask16;
  struct Tap {
    Mask lanes, lo, hi;  // result lanes; stride 2: elements of the first / second 16 loaded
  };
  static Mask Lanes(int64_t lo, int64_t hi) {
    lo = lo < 0 ? 0 : lo > 16 ? 16 : lo;
    hi = hi < lo ? lo : hi > 16 ? 16 : hi;
    return static_cast<Mask>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  }
  template <int kStride>
  static Tap MakeTap(int64_t first, int64_t last) {
    // Stride 2: elements [2 first, 2 last - 1) of the 32 loaded, all inside the row.
    return kStride == 1 ? Tap{Lanes(first, last), 0, 0}
                        : Tap{Lanes(first, last), Lanes(2 * first, 2 * last - 1), Lanes(2 * first - 16, 2 * last - 17)};
  }
  template <int kStride>
  static Vec Load(const float* p, const Tap& tap) {
    if (kStride == 1) return _mm512_maskz_loadu_ps(tap.lanes, p);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(tap.lo, p), even, _mm512_maskz_loadu_ps(tap.hi, p + 16));
  }
  template <int kStride>
  static Vec LoadFull(const float* p) {
    if (kStride == 1) return _mm512_loadu_ps(p);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
  }
  // Loads give columns in order (vpermt2ps picks the even elements in place).
  template <int kStride>
  static Vec Ordered(Vec v) {
    return v;
  }
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Set1(float v) { return _mm512_set1_ps(v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static void Store(float* p, Mask mask, Vec v) { _mm512_mask_storeu_ps(p, mask, v); }
  static void StoreFull(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  // r[i][j] <- r[j][i] (16 x 16): four butterflies, each exchanging bit b of the row index
  // with bit b of the lane index (b = 8, 4, 2, 1), one vpermt2ps per row and stage.
  static void Transpose(Vec* r) {
    Butterfly<8>(r);
    Butterfly<4>(r);
    Butterfly<2>(r);
    Butterfly<1>(r);
  }
  template <int kB>
  static void Butterfly(Vec* r) {
    // Row i (bit kB clear) takes lanes l with bit kB clear from itself, the others from row
    // i + kB's lane l - kB; row i + kB lanes l with bit kB set from itself, the others from
    // row i's lane l + kB.
    alignas(64) int32_t low[16], high[16];
    for (int l = 0; l < 16; ++l) {
      low[l] = (l & kB) == 0 ? l : 16 + l - kB;
      high[l] = (l & kB) == 0 ? l + kB : 16 + l;
    }
    const __m512i lo = _mm512_load_si512(low), hi = _mm512_load_si512(high);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if ((i & kB) != 0) continue;
      const Vec a = r[i], b = r[i + kB];
      r[i] = _mm512_permutex2var_ps(a, lo, b);
      r[i + kB] = _mm512_permutex2var_ps(a, hi, b);
    }
  }
};

#include "native/kernels/conv/depthwise_activation_simd.inc"
#include "native/kernels/conv/depthwise_channels_simd.inc"
#include "native/kernels/conv/depthwise_plane_simd.inc"

}  // namespace

DepthwisePlaneFn SelectDepthwisePlaneAvx512(const Geometry3d& g) { return SelectDepthwisePlane2d<Avx512>(g); }

void DepthwiseChannelsAvx512(const Geometry3d& g, const float* const* x, const float* w, const float* bias,
                             int channels, const PlaneActivation& act, float* y, float* scratch) {
  DepthwiseChannels2d<Avx512>(g, x, w, bias, channels, act, y, scratch);
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
DepthwisePlaneFn SelectDepthwisePlaneAvx512(const Geometry3d&) { return nullptr; }
void DepthwiseChannelsAvx512(const Geometry3d&, const float* const*, const float*, const float*, int,
                             const PlaneActivation&, float*, float*) {}
}  // namespace conv
}  // namespace onnx_light
#endif
