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
  // True when every column has the same zero point.
  bool zero_point_uniform() const { return zero_point_uniform_; }
  // Bytes this packed form holds (panels, column sums, zero points): what a kernel that
  // absorbed B holds in its place (KernelInfo::AbsorbConstantInput).
  int64_t held_bytes() const {
    return static_cast<int64_t>(data_.size() * sizeof(int16_t) + byte_data_.size() +
                                (column_sums_.size() + zero_points_.size()) * sizeof(int32_t));
  }

 private:
  const IgemmKernel* kernel_ = nullptr;
  int64_t k_ = 0, n_ = 0, panel_stride_ = 0;
  bool bytes_ = false;
  bool zero_point_uniform_ = true;
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

// As IgemmCompute with C written to c (row i at c + i * ldc, ldc >= n) instead of handed
// to a sink: whole tiles accumulate in c itself, edge tiles go through scratch. Same bits.
Status IgemmComputeInto(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units,
                        int64_t m, const IgemmA& a, const IgemmPackedB& b, int32_t* c, int64_t ldc,
                        int64_t* scratch_bytes = nullptr);

// IgemmCompute on the calling thread with the caller's scratch (64-byte aligned, at least
// IgemmSerialScratchBytes(m, b) bytes), for callers that split many small products over
// participants themselves: workers never allocate, so each reserves its slice beforehand.
// Same blocks and bits as IgemmCompute.
size_t IgemmSerialScratchBytes(int64_t m, const IgemmPackedB& b);
Status IgemmComputeSerial(int64_t m, const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, void* scratch);

// Indirect rows (a convolution's output positions over an NHWC input, ONNX Runtime's
// symmetric indirect convolution): C = A x B with B packed (IgemmPackedB, int8, K = taps x
// segment, row t segment + c the tap t, channel c weights) and row i of A never packed: its
// K values are the `taps` spans of `segment` values at rows[i] + offsets[t] (byte
// addresses), read in place by the kernel's indirect tile: uint8 bytes for a kernel with a
// byte tile (an int8 input is the caller's to shift by +128), else int16 values (two bytes
// each, uint8 or int8 widened as they are): IgemmIndirectElementBytes.
// No zero points are applied: C(i, j) = column_offsets[j] + sum_k A(i, k) B(k, j) exactly
// (wrapping int32; column_offsets may be null: 0). With B's zero points 0 the caller passes
// bias - azp x B's column sums (b.column_sums()) there, which the tile starts from. Blocks
// go to `sink` as IgemmCompute's do: each once, disjoint, possibly concurrently; the bits
// do not depend on the participant count.
//
//   if (IgemmIndirectSupported(*w, c)) {
//     IgemmIndirectA a{origins, tap_offsets, taps, c};
//     OL_RETURN_IF_ERROR(IgemmComputeIndirect(ctx.parallel(), ctx.allocator(), units, positions, a, *w, sink));
//   }
struct IgemmIndirectA {
  const uint8_t* const* rows = nullptr;  // per row of C: its window's origin
  const int64_t* offsets = nullptr;      // per tap: the byte offset of its span from the origin
  int64_t taps = 0, segment = 0;
  const int32_t* column_offsets = nullptr;  // n values added to every row (null: none)
};
// Whether the best kernel of this CPU has indirect tiles (VNNI's byte tile, AVX2's pairs).
bool IgemmIndirectAvailable();
// Whether IgemmComputeIndirect can run b with spans of `segment` values: the kernel has an
// indirect tile for b's format, and segment is a multiple of its K group (4 bytes, 2
// pairs: a group never straddles two taps).
bool IgemmIndirectSupported(const IgemmPackedB& b, int64_t segment);
// Bytes per value of A for IgemmComputeIndirect with b: 1 (uint8) or 2 (int16).
int IgemmIndirectElementBytes(const IgemmPackedB& b);
Status IgemmComputeIndirect(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units,
                            int64_t m, const IgemmIndirectA& a, const IgemmPackedB& b, IgemmSink sink,
                            int64_t* scratch_bytes = nullptr);

// The transposed arrangement, for products whose left operand is the constant: a
// convolution's weights (M output channels x K) times an activation block packed per run
// (K x cols, e.g. im2col columns of output positions), so C's rows are output channels and
// come out contiguous along positions (NCHW rows).
//
//   auto w = IgemmPackedA::Create(m, k, IgemmMatrix{weights, w_signed, k, 1}, wzp, wzp_count);
//   IgemmBBlock b{panels, column_sums, cols, x_signed, x_zero_point};   // scratch of
//   IgemmPackBBlock(**w, IgemmMatrix{x_rows, x_signed, ld, 1}, &b);     // IgemmBBlockBytes
//   IgemmMultiplyBlock(**w, i0, rows, b, c, ldc);                       // C rows i0..i0+rows
//
// A kernel with a byte tile (VNNI) stores both operands as bytes whatever their signedness:
// A as uint8 (int8 shifted by +128), B as int8 (uint8 shifted by -128), the zero points
// shifted alike, so (A - azp)(B - bzp) is unchanged and four u8 x s8 products stay exact.
// Other kernels take 16-bit pairs. The result is the exact wrapping int32 sum either way.
class IgemmPackedA {
 public:
  // Packs a (M x K, col_stride 1) with zero points per row (count 1 or M) for `kernel`
  // (default: the best kernel of this CPU).
  static StatusOr<std::shared_ptr<const IgemmPackedA>> Create(int64_t m, int64_t k, const IgemmMatrix& a,
                                                              const int32_t* zero_points, int64_t zero_point_count,
                                                              const IgemmKernel* kernel = nullptr);
  int64_t m() const { return m_; }
  int64_t k() const { return k_; }
  const IgemmKernel& kernel() const { return *kernel_; }
  // Bytes held: panels, row sums and zero points.
  size_t held_bytes() const {
    return data_.size() * sizeof(int16_t) + byte_data_.size() +
           (row_sums_.size() + zero_points_.size()) * sizeof(int32_t);
  }
  // The kernel's tile: row blocks start at multiples of mr; C is stored in whole tiles.
  int mr() const;
  int nr() const;
  // Internal to the engine (igemm_kernel.h formats): byte quads or 16-bit pairs, panels of
  // mr rows; row sums of the stored values; zero points per row, shifted as stored.
  bool bytes() const { return bytes_; }
  int64_t k_groups() const { return k_groups_; }
  const void* panels() const { return bytes_ ? static_cast<const void*>(byte_data_.data()) : data_.data(); }
  const std::vector<int32_t>& row_sums() const { return row_sums_; }
  const std::vector<int32_t>& zero_points() const { return zero_points_; }

 private:
  const IgemmKernel* kernel_ = nullptr;
  int64_t m_ = 0, k_ = 0, k_groups_ = 0;
  bool bytes_ = false;
  std::vector<int16_t> data_;
  std::vector<uint8_t> byte_data_;
  std::vector<int32_t> row_sums_, zero_points_;
};

// A right-hand block of `cols` columns (all of K) packed per run for a packed A: `panels`
// and `column_sums` point to the caller's scratch (IgemmBBlockBytes; panels 64-byte
// aligned), one zero point for the whole block.
struct IgemmBBlock {
  void* panels = nullptr;
  int32_t* column_sums = nullptr;
  int64_t cols = 0;
  bool is_signed = false;
  int32_t zero_point = 0;
};

// Bytes of panels for a block of `cols` columns packed for `a` (column sums: cols int32).
size_t IgemmBBlockBytes(const IgemmPackedA& a, int64_t cols);
// Packs b (K x block->cols, col_stride 1, element (kk, c) at row kk * row_stride + c) into
// block->panels and block->column_sums; the values' signedness is block->is_signed.
void IgemmPackBBlock(const IgemmPackedA& a, const IgemmMatrix& b, IgemmBBlock* block);
// As IgemmPackBBlock with row kk of the block starting at rows[kk] (block->cols bytes of
// block->is_signed values each), for a block whose rows are spans of different planes.
void IgemmPackBBlockRows(const IgemmPackedA& a, const uint8_t* const* rows, IgemmBBlock* block);
// c[(i - i0) * ldc + j] = sum_k (A(i, k) - azp(i)) (B(k, j) - bzp) for i in [i0, i0 + rows),
// j < b.cols, wrapping int32. i0 is a multiple of the kernel's mr. c must have room for RoundUp(rows, mr) rows of
// ldc >= RoundUp(b.cols, nr); the padding holds no result (a kernel with edge tiles skips
// it, igemm_kernel.h; others compute and store whole tiles).
void IgemmMultiplyBlock(const IgemmPackedA& a, int64_t i0, int64_t rows, const IgemmBBlock& b, int32_t* c, int64_t ldc);

// Requantisation of n accumulators as the ONNX reference computes it:
//   out[j] = saturate(round_half_even(double(acc[j] + bias) * multiplier[j * step] + zp))
// (the product and sum in double), to int8 if is_signed, else uint8. step is 0 (one
// multiplier) or 1. bias is one value added in wrapping int32 arithmetic.
void Requantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                bool is_signed, void* out);

// The float epilogue of MatMulIntegerToFloat / DynamicQuantizeMatMul:
//   out[j] = float(acc[j]) * scale[j * step] (+ bias[j] when bias is not null)
// with the product and the sum each rounded to float (never a fused multiply-add), which is
// what the unfused Cast(int32 -> float) -> Mul -> Add of ONNX Runtime's dynamic quantization
// chain computes, bit for bit. step is 0 (one scale) or 1. Portable code (built with
// -ffp-contract=off), which the compiler vectorises at the baseline width.
void ScaleToFloat(const int32_t* acc, int64_t n, const float* scale, int64_t step, const float* bias, float* out);

}  // namespace igemm
}  // namespace onnx_light
