// Internal to the GEMM engine: packing of the A and B operands into microkernel panels.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace gemm {

// A micro-panel: dst[k * mr + i] = A(i0 + i, k0 + k) for i < rows, 0 for rows <= i < mr,
// where A(i, k) = a[i * lda + k], or a[k * lda + i] when trans_a.
void PackAPanel(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                float* dst);

// A B block as PackedBSource::Pack lays it out, from B(k, j) = b[k * ldb + j], or
// b[j * ldb + k] when trans_b.
void PackBDense(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                float* dst);

// Both packers of one ISA. PackAPanel and PackBDense run the best enabled variant of
// PackingVariants(): x86-64 "avx512" (16 x 16 in-register transposes, masked row copies
// for nr a multiple of 16), "portable" (blocked scalar transposes, memcpy rows) last. They
// write the same bytes.
struct Packing {
  void (*pack_a)(bool trans_a, const float* a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int mr,
                 float* dst);
  void (*pack_b)(bool trans_b, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                 float* dst);
};
const std::vector<IsaVariant<Packing>>& PackingVariants();

}  // namespace gemm
}  // namespace onnx_light
