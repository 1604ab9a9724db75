// AVX2 + FMA depthwise planes: 8 output columns per vector; row ends and the last partial
// vector through masked loads (vmaskmovps never touches masked-off elements), interior
// vectors of the 3x3 and 5x5 planes through plain loads and stores. Stride 2 loads 16 consecutive
// inputs and keeps the even ones (one in-lane shuffle per load, one cross-lane permute per
// stored vector).
// Compiled by isa_library(isa = "avx2"); reached only through DepthwisePlaneVariants().
#include "native/kernels/conv/depthwise.h"

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with isa_library(isa = \"avx2\")"
#endif

#include "native/kernels/simd/lanes_avx2.h"
#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace conv {
namespace {

struct Avx2 {
  using Math = simd::Lanes8;  // simd/math.h's lanes of Vec (the activations)
  static constexpr int64_t kLanes = 8;
  static constexpr int kVectorRegisters = 16;
  static constexpr int64_t kPaddedMinVectors[2] = {kPaddedRowsNever, 3};  // depthwise_plane_simd.inc
  using Vec = __m256;
  using Mask = __m256i;
  struct Tap {
    Mask lo, hi;  // stride 1: result lanes; stride 2: elements of the first / second 8 loaded
  };
  // All-ones in lanes j of `index` (0..15) with lo <= j < hi.
  static Mask Between(__m256i index, int64_t lo, int64_t hi) {
    const int32_t l = static_cast<int32_t>(lo < 0 ? 0 : lo > 16 ? 16 : lo);
    const int32_t h = static_cast<int32_t>(hi < 0 ? 0 : hi > 16 ? 16 : hi);
    return _mm256_and_si256(_mm256_cmpgt_epi32(index, _mm256_set1_epi32(l - 1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32(h), index));
  }
  static __m256i Index(int offset) {
    return _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(offset));
  }
  static Mask Lanes(int64_t lo, int64_t hi) { return Between(Index(0), lo, hi); }
  template <int kStride>
  static Tap MakeTap(int64_t first, int64_t last) {
    if (kStride == 1) return Tap{Lanes(first, last), Lanes(0, 0)};
    // Elements [2 first, 2 last - 1) of the 16 loaded, all inside the row.
    return Tap{Between(Index(0), 2 * first, 2 * last - 1), Between(Index(8), 2 * first, 2 * last - 1)};
  }
  template <int kStride>
  static Vec Load(const float* p, const Tap& tap) {
    if (kStride == 1) return _mm256_maskload_ps(p, tap.lo);
    const __m256 a = _mm256_maskload_ps(p, tap.lo), b = _mm256_maskload_ps(p + 8, tap.hi);
    // [a0 a2 b0 b2 | a4 a6 b4 b6]: columns 0 1 4 5 2 3 6 7 (Ordered<2> restores the order).
    return _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  }
  template <int kStride>
  static Vec LoadFull(const float* p) {
    if (kStride == 1) return _mm256_loadu_ps(p);
    return _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
  }
  // Stride 2 loads leave columns in the order 0 1 4 5 2 3 6 7 (in-lane shuffles only): taps
  // and accumulators all share it, one cross-lane permute per stored vector restores it.
  template <int kStride>
  static Vec Ordered(Vec v) {
    if (kStride == 1) return v;
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Set1(float v) { return _mm256_set1_ps(v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static void Store(float* p, Mask mask, Vec v) { _mm256_maskstore_ps(p, mask, v); }
  static void StoreFull(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  // r[i][j] <- r[j][i] (8 x 8): three butterflies, each exchanging bit b of the row index
  // with bit b of the lane index: b = 4 across the 128-bit halves (vperm2f128), b = 2 inside
  // them (vshufps), b = 1 (vmovsldup / vmovshdup and a blend).
  static void Transpose(Vec* r) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const Vec a = r[i], b = r[i + 4];
      r[i] = _mm256_permute2f128_ps(a, b, 0x20);
      r[i + 4] = _mm256_permute2f128_ps(a, b, 0x31);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      if ((i & 2) != 0) continue;
      const Vec a = r[i], b = r[i + 2];
      r[i] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
      r[i + 2] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
      const Vec a = r[i], b = r[i + 1];
      r[i] = _mm256_blend_ps(a, _mm256_moveldup_ps(b), 0xAA);
      r[i + 1] = _mm256_blend_ps(_mm256_movehdup_ps(a), b, 0xAA);
    }
  }
};

#include "native/kernels/conv/depthwise_activation_simd.inc"
#include "native/kernels/conv/depthwise_channels_simd.inc"
#include "native/kernels/conv/depthwise_plane_simd.inc"

}  // namespace

DepthwisePlaneFn SelectDepthwisePlaneAvx2(const Geometry3d& g) { return SelectDepthwisePlane2d<Avx2>(g); }

void DepthwiseChannelsAvx2(const Geometry3d& g, const float* const* x, const float* w, const float* bias, int channels,
                           const PlaneActivation& act, float* y, float* scratch) {
  DepthwiseChannels2d<Avx2>(g, x, w, bias, channels, act, y, scratch);
}

}  // namespace conv
}  // namespace onnx_light

#else
namespace onnx_light {
namespace conv {
DepthwisePlaneFn SelectDepthwisePlaneAvx2(const Geometry3d&) { return nullptr; }
void DepthwiseChannelsAvx2(const Geometry3d&, const float* const*, const float*, const float*, int,
                           const PlaneActivation&, float*, float*) {}
}  // namespace conv
}  // namespace onnx_light
#endif
