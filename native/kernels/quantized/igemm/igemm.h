// The integer GEMM engine: C = (A - a_zero_point) x (B - b_zero_point) in exact (wrapping)
// int32 arithmetic, for 8-bit operands of either signedness, plus the vectorised
// requantisation that QLinear* kernels apply to its blocks.
//
//   auto packed = IgemmPackedB::Create(k, n, IgemmMatrix{b, b_signed, n, 1}, bzp, bzp_count);
//   IgemmA a{a_data, a_signed, lda, &azp, 1};
//   OL_RETURN_IF_ERROR(IgemmCompute(ctx.parallel(), ctx.allocator(), tuning, m, a, **packed,
//       [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
//         ... acc[r * ld + c] is C(i0 + r, j0 + c) ...
//       }));
//
// Contract:
//   - Zero points are applied by the standard decomposition, never inside the inner loop:
//     C = A.B - azp(i) colsum_B(j) - bzp(j) rowsum_A(i) + K azp(i) bzp(j), all modulo 2^32,
//     so the result equals the direct sum of shifted products reduced to int32 (what the
//     ONNX integer ops define), for any K.
//   - B is packed once (IgemmPackedB, immutable, shareable across runs and threads) for the
//     microkernel chosen at creation; a kernel with a constant B packs it in Init.
//   - The output is handed to `sink` in blocks, each exactly once, blocks disjoint; sinks of
//     different blocks may run concurrently. Results do not depend on the participant count
//     (integer arithmetic is exact; blocks depend only on the shape).
//   - Microkernels: see IgemmKernelVariants(). Every variant computes the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/executor/function_ref.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace igemm {

struct IgemmKernel;  // igemm_kernel.h

// An 8-bit matrix: element (r, c) is data[r * row_stride + c * col_stride].
struct IgemmMatrix {
  const void* data = nullptr;
  bool is_signed = false;  // int8 if true, uint8 otherwise
  int64_t row_stride = 0;
  int64_t col_stride = 1;
};

// A packed K x N right-hand operand with its per-column zero points (count 1 or N).
class IgemmPackedB {
 public:
  // Packs b (K x N) for `kernel` (default: the best kernel of this CPU).
  static StatusOr<std::shared_ptr<const IgemmPackedB>> Create(int64_t k, int64_t n, const IgemmMatrix& b,
                                                              const int32_t* zero_points, int64_t zero_point_count,
                                                              const IgemmKernel* kernel = nullptr);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  const IgemmKernel& kernel() const { return *kernel_; }

  // Internal to the engine: 16-bit pair panels, or byte quad panels when bytes() (a signed
  // B for a kernel with a byte tile; igemm_kernel.h).
  bool bytes() const { return bytes_; }
  const int16_t* panel(int64_t p) const { return data_.data() + p * panel_stride_; }
  const int8_t* byte_panel(int64_t p) const { return byte_data_.data() + p * panel_stride_; }
  const std::vector<int32_t>& column_sums() const { return column_sums_; }
  const std::vector<int32_t>& zero_points() const { return zero_points_; }

 private:
  const IgemmKernel* kernel_ = nullptr;
  int64_t k_ = 0, n_ = 0, panel_stride_ = 0;
  bool bytes_ = false;
  std::vector<int16_t> data_;         // panels of nr columns: [k pair][nr][2]
  std::vector<int8_t> byte_data_;     // or [k quad][nr][4]
  std::vector<int32_t> column_sums_;  // sum_k B(k, j)
  std::vector<int32_t> zero_points_;  // per column (expanded)
};

// The left-hand operand: M x K with a zero point per tensor (count 1) or per row, row i
// using zero_points[i % count] (a batch of matrices folded into M repeats its rows' zero
// points).
struct IgemmA {
  IgemmMatrix matrix;  // col_stride must be 1
  const int32_t* zero_points = nullptr;
  int64_t zero_point_count = 1;
};

// Receives C(i0 + r, j0 + c) = acc[r * ld + c] for r < rows, c < cols.
using IgemmSink = FunctionRef<void(int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld)>;

// Runs C = (A - azp) x (B - bzp) with B's kernel, in blocks spread over participants when
// the product is at least `parallel_minimum_units` units of 2^18 multiply-adds.
Status IgemmCompute(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units, int64_t m,
                    const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, int64_t* scratch_bytes = nullptr);

// Requantisation of n accumulators as the ONNX reference computes it:
//   out[j] = saturate(round_half_even(double(acc[j] + bias) * multiplier[j * step] + zp))
// (the product and sum in double), to int8 if is_signed, else uint8. step is 0 (one
// multiplier) or 1. bias is one value added in wrapping int32 arithmetic.
void Requantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                bool is_signed, void* out);

}  // namespace igemm
}  // namespace onnx_light
