// The AVX2 register tiles of the implicit-GEMM convolution (implicit_gemm_avx2.cc, compiled
// with AVX2 + FMA flags), with ImplicitTileFn's contract (implicit_gemm.h). x86-64 only;
// reached through ImplicitTileVariants() after IsaEnabled(Isa::kAvx2).
#pragma once

#include <cstdint>

namespace onnx_light {
namespace conv {

// 3 positions x 32 output channels (per k: 4 weight loads, 3 broadcasts, 12 FMAs).
void ImplicitTile3x32Avx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                          const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                          float* carry_out);
// 6 positions x 16 output channels (per k: 2 weight loads, 6 broadcasts, 12 FMAs).
void ImplicitTile6x16Avx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                          const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                          float* carry_out);

// The same tiles storing blocked Y (ImplicitTile::blocked_fn, implicit_gemm.h).
void ImplicitTile3x32BlockedAvx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                 const float* bias, int valid, int channels, float* y, int64_t ldy,
                                 const float* carry_in, float* carry_out, const float* residual, bool relu);
void ImplicitTile6x16BlockedAvx2(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                 const float* bias, int valid, int channels, float* y, int64_t ldy,
                                 const float* carry_in, float* carry_out, const float* residual, bool relu);

}  // namespace conv
}  // namespace onnx_light
