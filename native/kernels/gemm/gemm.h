// The fp32 GEMM engine shared by Gemm, MatMul, Conv, Attention and the quantized kernels.
//
//   C = alpha * op(A) * op(B) + beta * C,   op(X) = X or X^T,   C is M x N row-major.
//
// Structure (GotoBLAS/BLIS): B is packed block by block (KC x NC, L2-resident) into panels
// of NR columns, A is packed one MR-row micro-panel at a time (L1-resident), and a
// microkernel chosen at run time for the CPU (AVX-512, AVX2+FMA, NEON, portable scalar)
// accumulates MR x NR register tiles; the tiles at C's edges (M or N not a multiple of MR or
// NR: 49 output positions, MatMul with 2..8 rows) run partial tiles that compute only the
// vectors they fill (microkernel.h, EdgeTileFn). M == 1 or N == 1 take a bandwidth-bound GEMV path
// (a constant transposed B keeps a copy laid out for it: PrepackedB::GemvColumns).
//
// Parallelism: the output is cut into a 2-D grid of tiles (M x N blocks) run through
// ParallelFor; every element's K reduction has one fixed order, so the result is
// bit-identical for any participant count. Packing scratch is reserved before the region
// and sliced per participant; its size is bounded by the blocking, not by the matrices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/executor/parallel_for.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace gemm {

// Tuning values of a GEMM call site, read once from the kernel's ResolvedTuning.
struct GemmTuning {
  // Below this much work (in units of kMacsPerWorkUnit multiply-adds) the product runs
  // on the calling thread.
  int64_t parallel_minimum_tasks = 16;
};

// One work unit of `parallel.minimum_tasks`: 64 x 64 x 64 multiply-adds.
inline constexpr int64_t kMacsPerWorkUnit = int64_t{1} << 18;

// The schema parameters every GEMM-based kernel declares (currently parallel.minimum_tasks).
std::vector<ParamSpec> GemmTuningParams();
// Reads them back; Internal if the schema lacks them.
StatusOr<GemmTuning> ReadGemmTuning(const ResolvedTuning& tuning);

// Work units of an M x N x K product (saturating).
int64_t GemmWorkUnits(int64_t m, int64_t n, int64_t k);

// What a call used, for the kernel's accounting (ctx.RecordScratch).
struct GemmStats {
  int64_t scratch_bytes = 0;
  int participants = 1;
};

struct Epilogue;  // epilogue.h

// Parallel GEMM. Reserves its packing scratch from `allocator` before any worker starts.
// Strides are in elements; lda is the row stride of A as stored (K for A = M x K
// untransposed, M for a transposed A stored K x M), likewise ldb and ldc. beta == 0
// means C is write-only (NaNs in C are not propagated). Shapes must be non-negative.
// `epilogue` (optional, epilogue.h) is applied to each output block right after its K
// reduction completes (C indexed from 0 with row stride ldc for its residual).
Status Sgemm(const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning, bool trans_a,
             bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc, GemmStats* stats = nullptr,
             const Epilogue* epilogue = nullptr);

// For callers that run many small products inside their own ParallelFor region
// (attention heads, conv tiles): a serial GEMM in caller-provided scratch, which must be
// 64-byte aligned (ScratchArena slices are) and hold SgemmSerialScratchBytes(m, n, k)
// bytes. The result is bit-identical to Sgemm's.
size_t SgemmSerialScratchBytes(int64_t m, int64_t n, int64_t k);
void SgemmSerial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* scratch);

// Supplies the B operand already in the engine's packed layout, so that a caller can
// generate B on the fly (Conv's im2col) instead of materialising it.
class PackedBSource {
 public:
  virtual ~PackedBSource() = default;
  // Writes rows [k0, k0 + kc) x columns [n0, n0 + nc) of B as ceil(nc / nr) panels, each
  // kc x nr floats stored k-major (panel[k * nr + j]); columns past nc are zero.
  // Called concurrently from several participants: must be thread-safe (read-only).
  virtual void Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const = 0;
  // When B is held packed already in this blocking (PrepackedB): the panels Pack would
  // write for rows [k0, k0 + kc) from column n0 on, to be read in place. Null otherwise.
  virtual const float* Panels(int64_t k0, int64_t kc, int64_t n0, int nr) const { return nullptr; }
};

// The register tile and cache blocks of the microkernel chosen for this CPU: a caller that
// tiles its own work (Conv's output columns) picks tiles of whole panels and blocks.
struct GemmBlocking {
  int mr = 1, nr = 1;
  int64_t kc = 1, nc = 1;
};
GemmBlocking PreferredBlocking();

// Serial GEMM with a generated B: C (m x n, ldc) = alpha * op(A) * B + beta * C, with
// scratch as for SgemmSerial. Always takes the packed (non-GEMV) path.
void SgemmSerialPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                        const PackedBSource& b, float beta, float* c, int64_t ldc, float* scratch);

// B given as a dense matrix, for the calls below that take a PackedBSource.
class DenseBSource final : public PackedBSource {
 public:
  DenseBSource(bool trans_b, const float* b, int64_t ldb) : trans_b_(trans_b), b_(b), ldb_(ldb) {}
  void Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const override;

 private:
  bool trans_b_;
  const float* b_;
  int64_t ldb_;
};

// B packed once for every product that uses it (a constant weight matrix of Gemm or
// MatMul), in the layout of the microkernel this process runs: the tiles read its panels
// in place, so a call packs only A. Self-contained: the dense B is read only by Create, so
// a kernel may absorb it (registry/kernel.h). GEMV shapes (m == 1 or n == 1) run the dense
// GEMV's arithmetic on the panels: m == 1 with an untransposed B the rows form in place on
// each panel's K blocks, accumulating across them. Results are bit-identical to packing B
// on every call, and to the dense GEMV.
class PrepackedB final : public PackedBSource {
 public:
  // op(B) is k x n; the packed copy comes from `allocator`.
  // `rows_read`, when given, is called as the dense B is read, with r meaning: rows
  // [0, r) of b as stored (ldb floats apart: K rows, or N rows when trans_b) are never read
  // again, so that a caller that owns b may return them to the system while packing goes
  // on (registry/kernel.h, ConstantConsumer): the packed copy and b never coexist whole.
  // An untransposed B is read K block by K block; a transposed one a group of columns
  // (rows of b) at a time through every K block. The packed bytes are the same either way.
  static StatusOr<std::shared_ptr<const PrepackedB>> Create(Allocator* allocator, bool trans_b, int64_t k, int64_t n,
                                                            const float* b, int64_t ldb,
                                                            const std::function<void(int64_t)>& rows_read = nullptr);
  ~PrepackedB() override;
  PrepackedB(const PrepackedB&) = delete;
  PrepackedB& operator=(const PrepackedB&) = delete;

  void Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const override;
  const float* Panels(int64_t k0, int64_t kc, int64_t n0, int nr) const override;

  bool trans_b() const { return trans_b_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int nr() const { return static_cast<int>(nr_); }
  size_t bytes() const { return bytes_; }

  // Columns [n0, n0 + nr()) of op(B) (n0 a multiple of nr(); columns past n() are zero),
  // all K rows: k-major (dst[k * nr() + j]) or one K-vector per column (dst[j * k() + k]).
  void UnpackPanel(int64_t n0, bool column_major, float* dst) const;

  // op(B)'s columns in the layout the one-row GEMV of a transposed B streams (a batch-1
  // classifier head: the dots form's interleaved DotsLayout of the microkernel this process
  // runs, microkernel.h): built on the first call and kept, 64-byte aligned, so that the
  // GEMV reads the weights as one forward stream, each group of columns side by side, instead
  // of a K-vector per column at a time (or transposing every panel on every run). The same
  // bits as the dense GEMV. It costs the dense B's size again, only in sessions that run
  // such a product. Thread-safe.
  const float* GemvColumns() const;

 private:
  PrepackedB() = default;
  Allocator* allocator_ = nullptr;
  float* packed_ = nullptr;
  size_t bytes_ = 0;
  bool trans_b_ = false;
  int64_t ldb_ = 0;  // of the dense B Create read: the GEMV view of n == 1 keeps it
  int64_t k_ = 0, n_ = 0, kc_ = 1, nr_ = 1, n_padded_ = 0;
  mutable std::once_flag gemv_once_;
  mutable std::vector<float> gemv_columns_;
  mutable const float* gemv_columns_start_ = nullptr;  // in gemv_columns_, 64-byte aligned
};

// C = alpha * op(A) * B + beta * C with B prepacked (shapes: op(A) m x k, B b.k() x b.n()).
Status SgemmPrepackedB(const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning, bool trans_a,
                       int64_t m, float alpha, const float* a, int64_t lda, const PrepackedB& b, float beta, float* c,
                       int64_t ldc, GemmStats* stats = nullptr, const Epilogue* epilogue = nullptr);

// A packed once and shared read-only by many products (a convolution's weights used by
// every output tile): PrepackedASize(m, k) floats (64-byte aligned buffer), filled by
// PrepackA, then consumed by SgemmSerialPrepackedA, which packs only B.
// `rows_read`, when given, is called as `a` is read, with r meaning: rows [0, r) of a as
// stored (lda floats apart: M rows, or K rows when trans_a) are never read again (the
// caller may return them to the system, as with PrepackedB::Create). An untransposed A is
// then packed one MR-row panel at a time through every K block; a transposed one K block
// by K block. The packed bytes are the same with or without the callback.
size_t PrepackedASize(int64_t m, int64_t k);
void PrepackA(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, float* packed,
              const std::function<void(int64_t)>& rows_read = nullptr);
void SgemmSerialPrepackedA(const float* packed_a, int64_t m, int64_t n, int64_t k, float alpha, const PackedBSource& b,
                           float beta, float* c, int64_t ldc, float* scratch);
// Rows [m0, m1) of that product only, C still addressed from row 0; m0 must be a multiple
// of PreferredBlocking().mr. Lets tasks share one packed A split by rows; each element's
// result is the same as in the whole product.
// Optionally fused into the write of each mr x nc block (in L1), once its reduction is
// complete: row_bias[i] added to row i (i a row of the whole product), then `epilogue`,
// whose output index of c[0] is `epilogue_offset`. The same values as a second pass over C
// doing the same (a convolution's bias and activation, its residual at its output index).
void SgemmSerialPrepackedARows(const float* packed_a, int64_t m, int64_t m0, int64_t m1, int64_t n, int64_t k,
                               float alpha, const PackedBSource& b, float beta, float* c, int64_t ldc, float* scratch,
                               const float* row_bias = nullptr, const Epilogue* epilogue = nullptr,
                               int64_t epilogue_offset = 0);

}  // namespace gemm
}  // namespace onnx_light
