#include "native/kernels/gemm/gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "native/core/shape.h"
#include "native/kernels/gemm/engine.h"
#include "native/kernels/gemm/packing.h"

namespace onnx_light {
namespace gemm {
namespace {

constexpr size_t kAlign = 64;
size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// GEMV output columns handled per pass: the partial sums (16 KiB) stay in L1 while the
// matrix streams through once.
constexpr int64_t kGemvChunk = 4096;

// Packing scratch of one participant running tiles at most tile_n wide.
size_t ParticipantScratchBytes(const MicroKernel& kernel, int64_t tile_n, int64_t k) {
  const int64_t kc = std::max<int64_t>(1, std::min(kernel.kc, k));
  const int64_t nc = RoundUp(std::min(kernel.nc, std::max<int64_t>(tile_n, 1)), kernel.nr);
  return AlignUp(sizeof(float) * kc * nc) + AlignUp(sizeof(float) * kc * kernel.mr);
}

// Rows [ir, ir + rows) x columns [jc, jc + nc) of C, their reduction complete: the row
// bias, then the epilogue (GemmProblem's order), one SIMD pass per row (FinishRows).
void FinishBlock(const GemmProblem& p, int64_t ir, int64_t rows, int64_t jc, int64_t nc) {
  FinishRows(p.epilogue, p.row_bias != nullptr ? p.row_bias + ir : nullptr, p.c + ir * p.ldc + jc,
             p.epilogue_offset + ir * p.ldc + jc, rows, nc, p.ldc);
}

// C = beta * C (K == 0: the product is empty), then the row bias and epilogue if any.
void ScaleC(const GemmProblem& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    float* row = p.c + i * p.ldc;
    if (p.beta == 0.0f) {
      std::fill(row, row + p.n, 0.0f);
    } else {
      for (int64_t j = 0; j < p.n; ++j) row[j] *= p.beta;
    }
    FinishBlock(p, i, 1, 0, p.n);
  }
}

// One output tile [m0, m1) x [n0, n1), Goto/BLIS loop order: B block in L2, one A
// micro-panel in L1, microkernel over register tiles. Edge tiles (rows < mr or columns
// < nr) run the kernel's partial tile straight on C, with the full tile's arithmetic, so
// every element sees the same arithmetic wherever the tile falls.
// With `prepacked_a`, A's panels are read from it (PrepackA's layout: K blocks of kc,
// each holding ceil(m / mr) panels of mr x kc) instead of being packed here. The epilogue
// and the row bias (if any) run on each mr x nc block in the last K block, right after its
// microkernels (FinishBlock).
void RunTile(const MicroKernel& kernel, const GemmProblem& p, const PackedBSource& b, int64_t m0, int64_t m1,
             int64_t n0, int64_t n1, float* b_pack, float* a_pack, const float* prepacked_a = nullptr) {
  const int mr = kernel.mr, nr = kernel.nr;
  for (int64_t jc = n0; jc < n1; jc += kernel.nc) {
    const int64_t nc = std::min(kernel.nc, n1 - jc);
    for (int64_t pc = 0; pc < p.k; pc += kernel.kc) {
      const int64_t kc = std::min(kernel.kc, p.k - pc);
      const float* panels = b.Panels(pc, kc, jc, nr);
      if (panels == nullptr) {
        b.Pack(pc, kc, jc, nc, nr, b_pack);
        panels = b_pack;
      }
      const float beta = pc == 0 ? p.beta : 1.0f;
      for (int64_t ir = m0; ir < m1; ir += mr) {
        const int rows = static_cast<int>(std::min<int64_t>(mr, m1 - ir));
        const float* a_panel = a_pack;
        if (prepacked_a != nullptr) {
          a_panel = prepacked_a + pc * RoundUp(p.m, mr) + ir * kc;
        } else {
          PackAPanel(p.trans_a, p.a, p.lda, ir, rows, pc, kc, mr, a_pack);
        }
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int cols = static_cast<int>(std::min<int64_t>(nr, nc - jr));
          const float* b_panel = panels + (jr / nr) * kc * nr;
          float* c = p.c + ir * p.ldc + jc + jr;
          if (rows == mr && cols == nr) {
            kernel.tile(kc, a_panel, b_panel, c, p.ldc, p.alpha, beta);
          } else {
            kernel.edge(kc, a_panel, b_panel, rows, cols, c, p.ldc, p.alpha, beta);
          }
        }
        if (pc + kc == p.k) FinishBlock(p, ir, rows, jc, nc);
      }
    }
  }
}

// The 2-D grid of output tiles for `participants`: minimises the estimated time of the
// slowest participant (compute plus repacking: B is packed once per row of tiles, A once
// per NC columns of each tile).
struct Grid {
  int64_t tiles_m = 1, tiles_n = 1, tile_m = 0, tile_n = 0;
  int64_t count() const { return tiles_m * tiles_n; }
};

Grid ChooseGrid(const MicroKernel& kernel, int64_t m, int64_t n, int64_t k, int participants) {
  // Packing one element costs about as much as this many multiply-adds in the microkernel.
  constexpr double kPackCostInMacs = 8.0;
  const int64_t max_m = std::min<int64_t>(CeilDiv(m, kernel.mr), 4 * participants);
  const int64_t max_n = std::min<int64_t>(CeilDiv(n, kernel.nr), 4 * participants);
  Grid best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int64_t tm = 1; tm <= max_m; ++tm) {
    for (int64_t tn = 1; tn <= max_n; ++tn) {
      const int64_t tile_m = RoundUp(CeilDiv(m, tm), kernel.mr);
      const int64_t tile_n = RoundUp(CeilDiv(n, tn), kernel.nr);
      const int64_t used_m = CeilDiv(m, tile_m), used_n = CeilDiv(n, tile_n);
      if (used_m != tm || used_n != tn) continue;  // an empty row or column of tiles
      const double rounds = static_cast<double>(CeilDiv(tm * tn, participants));
      const double per_tile = static_cast<double>(tile_m) * tile_n * k +
                              kPackCostInMacs * k * (tile_n + tile_m * CeilDiv(tile_n, kernel.nc));
      const double cost = rounds * per_tile;
      if (cost < best_cost * 0.999) {
        best_cost = cost;
        best = Grid{tm, tn, tile_m, tile_n};
      }
    }
  }
  return best;
}

// GEMV (m == 1 or n == 1), serial over output columns [j0, j1) of the vector result.
struct GemvPlan {
  GemvFn rows_fn = nullptr;      // rows form
  GemvDotsFn dots_fn = nullptr;  // dots form
  const float* x = nullptr;      // contiguous K-vector
  const float* mat = nullptr;
  int64_t ld = 0;   // rows form
  DotsLayout dots;  // dots form
  int64_t k = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool rows_form = true;  // mat[kk * ld + j] vs DotsLayout
  const Epilogue* epilogue = nullptr;
};

// Outputs [j, j + n) of a GEMV from their sums y: alpha, beta and the epilogue.
void FinishGemv(const GemvPlan& g, int64_t j, int64_t n, const float* y) {
  float* out = g.out + j * g.out_stride;
  for (int64_t t = 0; t < n; ++t) {
    float& o = out[t * g.out_stride];
    o = g.beta == 0.0f ? g.alpha * y[t] : g.alpha * y[t] + g.beta * o;
  }
  // The chunk's outputs: one row (m == 1) or one column (n == 1) of C.
  if (g.epilogue != nullptr) {
    if (g.out_stride == 1) {
      g.epilogue->Apply(out, j, 1, n, n);
    } else {
      g.epilogue->Apply(out, j * g.out_stride, n, 1, g.out_stride);
    }
  }
}

// j0 is a multiple of kDotsGroup in the dots form (where its group starts).
void RunGemv(const GemvPlan& g, int64_t j0, int64_t j1) {
  alignas(64) float y[kGemvChunk];
  for (int64_t j = j0; j < j1; j += kGemvChunk) {
    const int64_t n = std::min(kGemvChunk, j1 - j);
    if (g.rows_form) {
      g.rows_fn(g.k, n, g.x, g.mat + j, g.ld, y);
    } else {
      g.dots_fn(g.k, n, g.x, g.mat + j / kDotsGroup * g.dots.group, g.dots, y);
    }
    FinishGemv(g, j, n, y);
  }
}

// The dots form's layout of K-vectors ld apart (DotsLayout).
DotsLayout DenseDots(const MicroKernel& kernel, int64_t ld) {
  return DotsLayout{ld, kernel.dots_block, kDotsGroup * ld};
}

// The GEMV view of a problem with m == 1 or n == 1; `x_copy` receives a strided vector
// operand (K floats) when there is one.
GemvPlan MakeGemvPlan(const MicroKernel& kernel, const GemmProblem& p, float* x_copy, bool* needs_copy) {
  GemvPlan g;
  g.k = p.k;
  g.alpha = p.alpha;
  g.beta = p.beta;
  g.epilogue = p.epilogue;
  const float* x;
  int64_t x_stride;
  if (p.m == 1) {
    // C[0, j] = sum_k A(0, k) B(k, j)
    x = p.a;
    x_stride = p.trans_a ? p.lda : 1;
    g.mat = p.b;
    g.ld = p.ldb;
    g.rows_form = !p.trans_b;
    g.out = p.c;
    g.out_stride = 1;
  } else {
    // C[i, 0] = sum_k A(i, k) B(k, 0)
    x = p.b;
    x_stride = p.trans_b ? 1 : p.ldb;
    g.mat = p.a;
    g.ld = p.lda;
    g.rows_form = p.trans_a;
    g.out = p.c;
    g.out_stride = p.ldc;
  }
  g.rows_fn = kernel.gemv_rows;
  g.dots_fn = kernel.gemv_dots;
  g.dots = p.m == 1 && p.b_dots != nullptr ? *p.b_dots : DenseDots(kernel, g.ld);
  *needs_copy = x_stride != 1 && p.k > 1;
  if (*needs_copy) {
    if (x_copy != nullptr) {
      for (int64_t t = 0; t < p.k; ++t) x_copy[t] = x[t * x_stride];
    }
    g.x = x_copy;
  } else {
    g.x = x;
  }
  return g;
}

bool IsGemv(const GemmProblem& p) { return p.m == 1 || p.n == 1; }

// A GEMV reads each matrix element once for one multiply-add: it runs at memory speed,
// about kGemvMacWeight times slower per multiply-add than the packed product's register
// tiles (a core streams 2-4 floats per cycle from L3 or memory against 32 multiply-adds
// per cycle in AVX-512 tiles). Its work counts in `parallel.minimum_tasks` with that
// weight, so that the portable 16 units split a matrix of 2^18 floats (1 MB, the
// classifier layers of MobileNetV3 and EfficientNet: 576x1024, 1024x1000, 1280x1000)
// across participants, not only matrices 16 times larger.
constexpr int64_t kGemvMacWeight = 16;

int64_t GemvWorkUnits(const GemmProblem& p) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  return GemmWorkUnits(p.m, p.n, p.k <= kMax / kGemvMacWeight ? p.k * kGemvMacWeight : kMax);  // saturating
}

}  // namespace

std::vector<ParamSpec> GemmTuningParams() {
  return {ParamSpec::Int64(param::kMinimumTasks, GemmTuning{}.parallel_minimum_tasks, 1, int64_t{1} << 40,
                           "work units (64x64x64 multiply-adds each) below which the product runs serially")};
}

StatusOr<GemmTuning> ReadGemmTuning(const ResolvedTuning& tuning) {
  GemmTuning t;
  OL_ASSIGN_OR_RETURN(t.parallel_minimum_tasks, tuning.Int64(param::kMinimumTasks));
  return t;
}

int64_t GemmWorkUnits(int64_t m, int64_t n, int64_t k) {
  int64_t mn = 0, mnk = 0;
  if (MultiplyOverflows(m, n, &mn) || MultiplyOverflows(mn, k, &mnk)) return std::numeric_limits<int64_t>::max();
  return mnk / kMacsPerWorkUnit;
}

size_t SerialScratchBytesWith(const MicroKernel& kernel, int64_t m, int64_t n, int64_t k) {
  // The larger of the packed path's and the GEMV path's needs (SgemmSerialPackedB never
  // takes the GEMV path).
  return std::max(AlignUp(sizeof(float) * std::max<int64_t>(k, 1)), ParticipantScratchBytes(kernel, n, k));
}

void SgemmSerialWith(const MicroKernel& kernel, const GemmProblem& p, float* scratch) {
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0) return ScaleC(p);
  if (IsGemv(p)) {
    bool needs_copy = false;
    const GemvPlan g = MakeGemvPlan(kernel, p, scratch, &needs_copy);
    return RunGemv(g, 0, p.m == 1 ? p.n : p.m);
  }
  const DenseBSource b(p.trans_b, p.b, p.ldb);
  float* b_pack = scratch;
  float* a_pack =
      scratch +
      AlignUp(sizeof(float) * std::min(kernel.kc, p.k) * RoundUp(std::min(kernel.nc, p.n), kernel.nr)) / sizeof(float);
  RunTile(kernel, p, b, 0, p.m, 0, p.n, b_pack, a_pack);
}

Status SgemmWith(const MicroKernel& kernel, const ParallelContext& parallel, Allocator* allocator,
                 const GemmTuning& tuning, const GemmProblem& p, GemmStats* stats, const PackedBSource* b_source) {
  if (p.m < 0 || p.n < 0 || p.k < 0) {
    return InvalidArgument(parallel.kernel, " GEMM: negative shape M=", p.m, " N=", p.n, " K=", p.k);
  }
  if (stats != nullptr) *stats = GemmStats{};
  if (p.m == 0 || p.n == 0) return Status::Ok();
  if (p.k == 0) {
    ScaleC(p);
    return Status::Ok();
  }
  const bool parallel_ok =
      (IsGemv(p) ? GemvWorkUnits(p) : GemmWorkUnits(p.m, p.n, p.k)) >= tuning.parallel_minimum_tasks;

  if (IsGemv(p)) {
    bool needs_copy = false;
    MakeGemvPlan(kernel, p, nullptr, &needs_copy);
    ScratchArena arena(allocator, needs_copy ? AlignUp(sizeof(float) * p.k) : 0);
    OL_RETURN_IF_ERROR(arena.status());
    float* x_copy = nullptr;
    if (needs_copy) {
      OL_ASSIGN_OR_RETURN(x_copy, arena.AllocateArray<float>(p.k));
    }
    const GemvPlan g = MakeGemvPlan(kernel, p, x_copy, &needs_copy);
    const int64_t outputs = p.m == 1 ? p.n : p.m;
    if (stats != nullptr) stats->scratch_bytes = static_cast<int64_t>(arena.capacity());
    if (!parallel_ok) {
      RunGemv(g, 0, outputs);
      return Status::Ok();
    }
    // One contiguous column range per participant: each streams its part of the matrix once.
    const int available = AvailableParticipants(parallel, ParallelPlan{"gemm.gemv_columns", 1});
    const int64_t grain = RoundUp(CeilDiv(outputs, available), 16);
    const ParallelPlan plan{"gemm.gemv_columns", grain};
    if (stats != nullptr) stats->participants = available;
    return ParallelFor(parallel, outputs, plan, [&](int64_t begin, int64_t end) {
      RunGemv(g, begin, end);
      return Status::Ok();
    });
  }

  const ParallelPlan plan{"gemm.tiles", /*grain=*/1};
  const int available = parallel_ok ? AvailableParticipants(parallel, plan) : 1;
  const Grid grid = ChooseGrid(kernel, p.m, p.n, p.k, available);
  const int participants = static_cast<int>(std::min<int64_t>(available, grid.count()));
  const size_t per_participant = ParticipantScratchBytes(kernel, grid.tile_n, p.k);
  ScratchArena arena(allocator, per_participant * participants);
  OL_RETURN_IF_ERROR(arena.status());
  std::vector<float*> slices(participants);
  for (auto& s : slices) {
    OL_ASSIGN_OR_RETURN(s, arena.AllocateArray<float>(per_participant / sizeof(float)));
  }
  if (stats != nullptr) {
    stats->scratch_bytes = static_cast<int64_t>(arena.capacity());
    stats->participants = participants;
  }
  const DenseBSource dense(p.trans_b, p.b, p.ldb);
  const PackedBSource& b = b_source != nullptr ? *b_source : dense;
  const int64_t a_offset =
      (per_participant - AlignUp(sizeof(float) * std::min(kernel.kc, p.k) * kernel.mr)) / sizeof(float);
  const auto run_tiles = [&](int participant, int64_t begin, int64_t end) {
    float* b_pack = slices[participant];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t tm = t % grid.tiles_m, tn = t / grid.tiles_m;
      const int64_t m0 = tm * grid.tile_m, n0 = tn * grid.tile_n;
      RunTile(kernel, p, b, m0, std::min(p.m, m0 + grid.tile_m), n0, std::min(p.n, n0 + grid.tile_n), b_pack,
              b_pack + a_offset);
    }
    return Status::Ok();
  };
  if (participants == 1) return run_tiles(0, 0, grid.count());
  return ParallelForWithParticipant(parallel, grid.count(), ParallelPlan{plan.label, 1, participants}, run_tiles);
}

const MicroKernel& BestKernel() {
  static const MicroKernel* const best = SupportedKernels().front();
  return *best;
}

namespace {
const MicroKernel* ScalarKernelPointer() { return &ScalarKernel(); }
}  // namespace

#if defined(__x86_64__)
// microkernel_avx2.cc and microkernel_avx512.cc (isa_library targets).
extern const MicroKernel kAvx2MicroKernel, kAvx512MicroKernel, kAvx512Tile8x48MicroKernel;
const MicroKernel* Avx512Kernel() { return IsaEnabled(Isa::kAvx512) ? &kAvx512MicroKernel : nullptr; }
const MicroKernel* Avx512Tile8x48Kernel() { return IsaEnabled(Isa::kAvx512) ? &kAvx512Tile8x48MicroKernel : nullptr; }
const MicroKernel* Avx2Kernel() { return IsaEnabled(Isa::kAvx2) ? &kAvx2MicroKernel : nullptr; }
#else
const MicroKernel* Avx512Kernel() { return nullptr; }
const MicroKernel* Avx512Tile8x48Kernel() { return nullptr; }
const MicroKernel* Avx2Kernel() { return nullptr; }
#endif

const std::vector<IsaVariant<const MicroKernel* (*)()>>& KernelVariants() {
  static const auto* variants = new std::vector<IsaVariant<const MicroKernel* (*)()>> {
#if defined(__x86_64__)
    {"avx512_12x32", Isa::kAvx512, Avx512Kernel}, {"avx512_8x48", Isa::kAvx512, Avx512Tile8x48Kernel},
        {"avx2", Isa::kAvx2, Avx2Kernel},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, NeonKernel},
#endif
        {"scalar", Isa::kPortable, ScalarKernelPointer},
  };
  return *variants;
}

std::vector<const MicroKernel*> SupportedKernels() {
  std::vector<const MicroKernel*> kernels;
  for (const MicroKernel* k : {Avx512Kernel(), Avx512Tile8x48Kernel(), Avx2Kernel(), NeonKernel()}) {
    if (k != nullptr) kernels.push_back(k);
  }
  kernels.push_back(&ScalarKernel());
  return kernels;
}

Status Sgemm(const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning, bool trans_a,
             bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc, GemmStats* stats, const Epilogue* epilogue) {
  return SgemmWith(BestKernel(), parallel, allocator, tuning,
                   GemmProblem{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue}, stats);
}

void DenseBSource::Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const {
  PackBDense(trans_b_, b_, ldb_, k0, kc, n0, nc, nr, dst);
}

// Layout: K blocks of kc rows (the microkernel's), each holding all ceil(n / nr) panels of
// kc x nr floats; block k0 starts at k0 * n_padded.
StatusOr<std::shared_ptr<const PrepackedB>> PrepackedB::Create(Allocator* allocator, bool trans_b, int64_t k, int64_t n,
                                                               const float* b, int64_t ldb,
                                                               const std::function<void(int64_t)>& rows_read) {
  if (k < 0 || n < 0) return InvalidArgument("PrepackedB: negative shape K=", k, " N=", n);
  const MicroKernel& kernel = BestKernel();
  std::shared_ptr<PrepackedB> packed(new PrepackedB());
  packed->allocator_ = allocator;
  packed->trans_b_ = trans_b;
  packed->ldb_ = ldb;
  packed->k_ = k;
  packed->n_ = n;
  packed->kc_ = kernel.kc;
  packed->nr_ = kernel.nr;
  packed->n_padded_ = RoundUp(std::max<int64_t>(n, 1), kernel.nr);
  int64_t elements = 0;
  if (MultiplyOverflows(std::max<int64_t>(k, 1), packed->n_padded_, &elements) ||
      elements > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(sizeof(float))) {
    return ResourceExhausted("PrepackedB: K=", k, " x N=", n, " is too large to pack");
  }
  packed->bytes_ = static_cast<size_t>(elements) * sizeof(float);
  OL_ASSIGN_OR_RETURN(void* memory, allocator->Allocate(packed->bytes_));
  packed->packed_ = static_cast<float*>(memory);
  if (trans_b && rows_read) {
    // Columns of op(B) (rows of b) a group at a time, through every K block: b's rows are
    // then read for the last time in order. A group spans at least 64 KiB of b.
    const int64_t group = RoundUp(std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(k, 1)), kernel.nr);
    for (int64_t n0 = 0; n0 < n; n0 += group) {
      const int64_t nc = std::min(group, n - n0);
      for (int64_t k0 = 0; k0 < k; k0 += kernel.kc) {
        const int64_t kc = std::min(kernel.kc, k - k0);
        PackBDense(true, b, ldb, k0, kc, n0, nc, kernel.nr,
                   packed->packed_ + k0 * packed->n_padded_ + (n0 / kernel.nr) * kc * kernel.nr);
      }
      rows_read(n0 + nc);
    }
  } else {
    for (int64_t k0 = 0; k0 < k; k0 += kernel.kc) {
      const int64_t kc = std::min(kernel.kc, k - k0);
      PackBDense(trans_b, b, ldb, k0, kc, 0, n, kernel.nr, packed->packed_ + k0 * packed->n_padded_);
      if (rows_read && !trans_b) rows_read(k0 + kc);
    }
  }
  if (rows_read) rows_read(trans_b ? n : k);
  return std::shared_ptr<const PrepackedB>(std::move(packed));
}

PrepackedB::~PrepackedB() {
  if (packed_ != nullptr) allocator_->Free(packed_, bytes_);
}

const float* PrepackedB::Panels(int64_t k0, int64_t kc, int64_t n0, int nr) const {
  const bool same_blocking = nr == nr_ && k0 % kc_ == 0 && kc == std::min(kc_, k_ - k0) && n0 % nr_ == 0;
  return same_blocking ? packed_ + k0 * n_padded_ + (n0 / nr_) * kc * nr_ : nullptr;
}

void PrepackedB::Pack(int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr, float* dst) const {
  const float* panels = Panels(k0, kc, n0, nr);
  if (panels != nullptr && (nc % nr == 0 || n0 + nc == n_)) {  // no real columns where Pack writes zeros
    std::memcpy(dst, panels, sizeof(float) * kc * RoundUp(nc, nr));
    return;
  }
  // Another blocking: repack element by element from this layout (the same values, so the
  // same products as packing the dense B afresh).
  for (int64_t p0 = 0; p0 < nc; p0 += nr) {
    float* panel = dst + (p0 / nr) * kc * nr;
    for (int64_t kk = 0; kk < kc; ++kk) {
      const int64_t k = k0 + kk, block = k / kc_ * kc_, block_kc = std::min(kc_, k_ - block);
      for (int j = 0; j < nr; ++j) {
        const int64_t col = n0 + p0 + j;
        panel[kk * nr + j] =
            p0 + j < nc ? packed_[block * n_padded_ + (col / nr_) * block_kc * nr_ + (k - block) * nr_ + col % nr_]
                        : 0.0f;
      }
    }
  }
}

void PrepackedB::UnpackPanel(int64_t n0, bool column_major, float* dst) const {
  for (int64_t block = 0; block < k_; block += kc_) {
    const int64_t block_kc = std::min(kc_, k_ - block);
    const float* src = packed_ + block * n_padded_ + (n0 / nr_) * block_kc * nr_;
    if (!column_major) {
      std::memcpy(dst + block * nr_, src, sizeof(float) * block_kc * nr_);
      continue;
    }
    for (int64_t kk = 0; kk < block_kc; ++kk) {
      for (int64_t j = 0; j < nr_; ++j) dst[j * k_ + block + kk] = src[kk * nr_ + j];
    }
  }
}

namespace {

// PrepackedB's GEMV copy: groups of kDotsGroup columns, each K block of the dots form
// holding the group's columns side by side (DotsLayout's interleaved form).
DotsLayout GemvLayout(const MicroKernel& kernel, int64_t k) {
  const int64_t block = kernel.dots_block;
  return DotsLayout{block, kDotsGroup * block, kDotsGroup * RoundUp(std::max<int64_t>(k, 1), block)};
}

}  // namespace

const float* PrepackedB::GemvColumns() const {
  std::call_once(gemv_once_, [this] {
    const MicroKernel& kernel = BestKernel();  // as Create's
    const DotsLayout layout = GemvLayout(kernel, k_);
    const int64_t groups = CeilDiv(n_, kDotsGroup), block = kernel.dots_block;
    gemv_columns_.assign(static_cast<size_t>(groups * layout.group) + kAlign / sizeof(float), 0.0f);
    // 64-byte aligned: each column's block starts a cache line when dots_block fills lines.
    const uintptr_t address = reinterpret_cast<uintptr_t>(gemv_columns_.data());
    float* dst = gemv_columns_.data() + (kAlign - address % kAlign) % kAlign / sizeof(float);
    gemv_columns_start_ = dst;
    std::vector<float> column(static_cast<size_t>(nr_ * k_));
    for (int64_t n0 = 0; n0 < n_; n0 += nr_) {
      UnpackPanel(n0, /*column_major=*/true, column.data());
      for (int64_t j = n0; j < std::min(n_, n0 + nr_); ++j) {
        float* out = dst + j / kDotsGroup * layout.group + j % kDotsGroup * layout.row;
        const float* in = &column[(j - n0) * k_];
        for (int64_t k0 = 0; k0 < k_; k0 += block, out += layout.block) {
          std::memcpy(out, in + k0, sizeof(float) * std::min(block, k_ - k0));
        }
      }
    }
  });
  return gemv_columns_start_;
}

namespace {

// m == 1 against a prepacked, untransposed B, parallel over panels of nr columns: the
// rows-form GEMV run in place on each panel's K blocks (ld = nr), accumulating across the
// blocks (gemv_rows_add), so every output has the dense path's summation order, and then
// the dense path's alpha/beta step and epilogue (FinishGemv). B is streamed once, as packed:
// no copy of a panel is made (it used to be unpacked into a K x nr slab first).
Status PrepackedGemvRow(const MicroKernel& kernel, const ParallelContext& parallel, Allocator* allocator,
                        const GemmTuning& tuning, const GemmProblem& p, const PrepackedB& b, GemmStats* stats) {
  constexpr int kMaxNr = 64;
  const int64_t k = p.k, n = p.n, nr = b.nr(), kc = kernel.kc, panels = CeilDiv(n, nr);
  if (nr > kMaxNr || b.Panels(0, std::min(kc, k), 0, b.nr()) == nullptr) {
    return Internal(parallel.kernel, " GEMM: B was packed in another blocking than kernel ", kernel.name, "'s");
  }
  const int64_t x_stride = p.trans_a ? p.lda : 1;
  const ParallelPlan plan{"gemm.gemv_columns", 1};  // the dense GEMV's region and threshold, split by panels
  const bool parallel_ok = GemvWorkUnits(p) >= tuning.parallel_minimum_tasks;
  const int participants =
      parallel_ok ? static_cast<int>(std::min<int64_t>(AvailableParticipants(parallel, plan), panels)) : 1;
  const size_t x_bytes = x_stride != 1 && k > 1 ? AlignUp(sizeof(float) * k) : 0;
  ScratchArena arena(allocator, x_bytes);
  OL_RETURN_IF_ERROR(arena.status());
  const float* x = p.a;
  if (x_bytes != 0) {
    OL_ASSIGN_OR_RETURN(float* copy, arena.AllocateArray<float>(k));
    for (int64_t t = 0; t < k; ++t) copy[t] = p.a[t * x_stride];
    x = copy;
  }
  if (stats != nullptr) {
    stats->scratch_bytes = static_cast<int64_t>(arena.capacity());
    stats->participants = participants;
  }
  GemvPlan g;
  g.out = p.c;
  g.out_stride = 1;
  g.alpha = p.alpha;
  g.beta = p.beta;
  g.epilogue = p.epilogue;
  const auto run = [&](int64_t begin, int64_t end) {
    alignas(64) float y[kMaxNr];
    for (int64_t panel = begin; panel < end; ++panel) {
      const int64_t n0 = panel * nr, cols = std::min(nr, n - n0);
      std::fill(y, y + cols, 0.0f);
      for (int64_t k0 = 0; k0 < k; k0 += kc) {
        const int64_t block = std::min(kc, k - k0);
        kernel.gemv_rows_add(block, cols, x + k0, b.Panels(k0, block, n0, b.nr()), nr, y);
      }
      FinishGemv(g, n0, cols, y);
    }
    return Status::Ok();
  };
  if (participants <= 1) return run(0, panels);
  return ParallelFor(parallel, panels, ParallelPlan{plan.label, 1, participants}, run);
}

}  // namespace

Status SgemmPrepackedB(const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning, bool trans_a,
                       int64_t m, float alpha, const float* a, int64_t lda, const PrepackedB& b, float beta, float* c,
                       int64_t ldc, GemmStats* stats, const Epilogue* epilogue) {
  const MicroKernel& kernel = BestKernel();
  GemmProblem p{trans_a, b.trans_b(), m, b.n(), b.k(), alpha, a, lda, nullptr, 0, beta, c, ldc, epilogue};
  if (m <= 0 || b.n() <= 0 || b.k() <= 0 || !IsGemv(p)) {
    return SgemmWith(kernel, parallel, allocator, tuning, p, stats, &b);
  }
  if (b.trans_b() && b.n() > 1) {
    // One row against a transposed B (a classifier head): the dots-form GEMV over the kept
    // interleaved copy, read as one forward stream (the dense GEMV's summation order and
    // epilogue, its region and threshold).
    const DotsLayout layout = GemvLayout(kernel, b.k());
    p.b = b.GemvColumns();
    p.ldb = b.k();
    p.b_dots = &layout;
    return SgemmWith(kernel, parallel, allocator, tuning, p, stats, nullptr);
  }
  if (b.n() == 1) {
    // B is one K-vector: unpacked, the dense GEMV runs exactly as on the dense B.
    ScratchArena arena(allocator, AlignUp(sizeof(float) * b.k() * b.nr()));
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(float* column, arena.AllocateArray<float>(b.k() * b.nr()));
    b.UnpackPanel(0, /*column_major=*/true, column);  // column 0 is column[0, K)
    p.b = column;
    p.ldb = b.trans_b() ? b.k() : 1;  // the GEMV reads only column 0: contiguous either way
    OL_RETURN_IF_ERROR(SgemmWith(kernel, parallel, allocator, tuning, p, stats, nullptr));
    if (stats != nullptr) stats->scratch_bytes += static_cast<int64_t>(arena.capacity());
    return Status::Ok();
  }
  return PrepackedGemvRow(kernel, parallel, allocator, tuning, p, b, stats);
}

size_t PrepackedASize(int64_t m, int64_t k) {
  return static_cast<size_t>(RoundUp(std::max<int64_t>(m, 1), BestKernel().mr) * std::max<int64_t>(k, 1));
}

void PrepackA(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, float* packed,
              const std::function<void(int64_t)>& rows_read) {
  const MicroKernel& kernel = BestKernel();
  const int64_t m_pad = RoundUp(m, kernel.mr);
  if (rows_read && !trans_a) {  // panel by panel, so that A's rows are done with in order
    for (int64_t ir = 0; ir < m; ir += kernel.mr) {
      const int rows = static_cast<int>(std::min<int64_t>(kernel.mr, m - ir));
      for (int64_t pc = 0; pc < k; pc += kernel.kc) {
        const int64_t kc = std::min(kernel.kc, k - pc);
        PackAPanel(trans_a, a, lda, ir, rows, pc, kc, kernel.mr, packed + pc * m_pad + ir * kc);
      }
      rows_read(ir + rows);
    }
    return;
  }
  for (int64_t pc = 0; pc < k; pc += kernel.kc) {
    const int64_t kc = std::min(kernel.kc, k - pc);
    for (int64_t ir = 0; ir < m; ir += kernel.mr) {
      const int rows = static_cast<int>(std::min<int64_t>(kernel.mr, m - ir));
      PackAPanel(trans_a, a, lda, ir, rows, pc, kc, kernel.mr, packed + pc * m_pad + ir * kc);
    }
    if (rows_read) rows_read(pc + kc);  // trans_a: stored rows [0, pc + kc) are done
  }
}

void SgemmSerialPrepackedA(const float* packed_a, int64_t m, int64_t n, int64_t k, float alpha, const PackedBSource& b,
                           float beta, float* c, int64_t ldc, float* scratch) {
  SgemmSerialPrepackedARows(packed_a, m, 0, m, n, k, alpha, b, beta, c, ldc, scratch);
}

void SgemmSerialPrepackedARows(const float* packed_a, int64_t m, int64_t m0, int64_t m1, int64_t n, int64_t k,
                               float alpha, const PackedBSource& b, float beta, float* c, int64_t ldc, float* scratch,
                               const float* row_bias, const Epilogue* epilogue, int64_t epilogue_offset) {
  if (m1 <= m0 || n == 0) return;
  if (k == 0) {
    GemmProblem rows{false,
                     false,
                     m1 - m0,
                     n,
                     k,
                     alpha,
                     nullptr,
                     0,
                     nullptr,
                     0,
                     beta,
                     c + m0 * ldc,
                     ldc,
                     epilogue,
                     epilogue_offset + m0 * ldc,
                     row_bias != nullptr ? row_bias + m0 : nullptr};
    return ScaleC(rows);
  }
  GemmProblem p{false,   false, m,    n, k,   alpha,    nullptr,         0,
                nullptr, 0,     beta, c, ldc, epilogue, epilogue_offset, row_bias};
  RunTile(BestKernel(), p, b, m0, m1, 0, n, scratch, nullptr, packed_a);
}

GemmBlocking PreferredBlocking() {
  const MicroKernel& k = BestKernel();
  return GemmBlocking{k.mr, k.nr, k.kc, k.nc};
}

size_t SgemmSerialScratchBytes(int64_t m, int64_t n, int64_t k) {
  return SerialScratchBytesWith(BestKernel(), m, n, k);
}

void SgemmSerial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* scratch) {
  SgemmSerialWith(BestKernel(), GemmProblem{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}, scratch);
}

void SgemmSerialPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                        const PackedBSource& b, float beta, float* c, int64_t ldc, float* scratch) {
  const MicroKernel& kernel = BestKernel();
  GemmProblem p{trans_a, false, m, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc};
  if (m == 0 || n == 0) return;
  if (k == 0) return ScaleC(p);
  float* a_pack =
      scratch +
      AlignUp(sizeof(float) * std::min(kernel.kc, k) * RoundUp(std::min(kernel.nc, n), kernel.nr)) / sizeof(float);
  RunTile(kernel, p, b, 0, m, 0, n, scratch, a_pack);
}

}  // namespace gemm
}  // namespace onnx_light
