// The AVX-512 register tiles of the implicit-GEMM convolution (implicit_gemm_avx512.cc,
// compiled with AVX-512 flags), each with ImplicitTileFn's contract (implicit_gemm.h).
// x86-64 only; reached through ImplicitTileVariants() after IsaEnabled(Isa::kAvx512).
#pragma once

#include <cstdint>

namespace onnx_light {
namespace conv {

// 6 positions x 64 output channels (per k: 4 weight loads, 6 broadcasts, 24 FMAs).
void ImplicitTile6x64Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                            const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                            float* carry_out);
// 12 positions x 32 output channels (2 loads, 12 broadcasts: the GEMM microkernel's balance).
void ImplicitTile12x32Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                             const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                             float* carry_out);
// 8 positions x 48 output channels (3 loads, 8 broadcasts, 24 FMAs): 40 and 48 channels pad
// to 48 columns instead of 64.
void ImplicitTile8x48Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                            const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                            float* carry_out);
// 12 positions x 16 output channels (1 load, 12 broadcasts, 12 FMAs): 16, 80, 112 ...
// channels, which every wider tile pads.
void ImplicitTile12x16Avx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                             const float* bias, int valid, int channels, float* y, int64_t ldy, const float* carry_in,
                             float* carry_out);

// The same tiles storing blocked Y (ImplicitTile::blocked_fn, implicit_gemm.h); with rows
// 16 or 32 floats apart (a blocked input, stride 1 or 2) the 12-row tiles take the
// two-base-register loops too.
void ImplicitTile6x64BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                   const float* bias, int valid, int channels, float* y, int64_t ldy,
                                   const float* carry_in, float* carry_out, const float* residual, bool relu);
void ImplicitTile12x32BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                    const float* bias, int valid, int channels, float* y, int64_t ldy,
                                    const float* carry_in, float* carry_out, const float* residual, bool relu);
void ImplicitTile8x48BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                   const float* bias, int valid, int channels, float* y, int64_t ldy,
                                   const float* carry_in, float* carry_out, const float* residual, bool relu);
void ImplicitTile12x16BlockedAvx512(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w,
                                    const float* bias, int valid, int channels, float* y, int64_t ldy,
                                    const float* carry_in, float* carry_out, const float* residual, bool relu);

}  // namespace conv
}  // namespace onnx_light
