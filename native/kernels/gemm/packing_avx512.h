// The AVX-512 functions of the GEMM packing (packing_avx512.cc, compiled with AVX-512
// flags). x86-64 only; call them only after IsaEnabled(Isa::kAvx512) (packing.cc does).
#pragma once

#include <cstdint>

namespace onnx_light {
namespace gemm {

// dst[k * stride + i] = src[i * ld + k] for i < rows, k < cols, in 16 x 16 register blocks.
void TransposeAvx512(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t stride);

// B (kc rows of ldb, nc columns) into panels of nr columns (nr a multiple of 16), the
// partial panel zero-padded.
void PackBRowsAvx512(const float* b, int64_t ldb, int64_t kc, int64_t nc, int nr, float* dst);

}  // namespace gemm
}  // namespace onnx_light
