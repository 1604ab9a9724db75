#include "native/kernels/quantized/igemm/igemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "native/core/cpu_features.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "native/kernels/quantized/igemm/igemm_kernel.h"
#include "native/kernels/quantized/igemm/zero_point_terms.h"

namespace onnx_light {
namespace igemm {
namespace {

// Blocking: a task is up to kRowBlock rows x kColumnBlock columns of C; K runs in blocks of
// kKPairBlock pairs (a B panel block of 32 columns is 32 KiB).
constexpr int64_t kRowBlock = 96;
constexpr int64_t kColumnBlock = 256;
constexpr int64_t kKPairBlock = 256;
constexpr int64_t kMacsPerUnit = int64_t{1} << 18;
// IgemmCompute packs all of A once, shared by every task, when it has several row blocks
// and the packed form takes at most this (else each participant packs the row block it runs).
constexpr size_t kSharedABytes = size_t{4} << 20;

int32_t ElementAt(const IgemmMatrix& m, int64_t r, int64_t c) {
  const int64_t e = r * m.row_stride + c * m.col_stride;
  return m.is_signed ? static_cast<int32_t>(static_cast<const int8_t*>(m.data)[e])
                     : static_cast<int32_t>(static_cast<const uint8_t*>(m.data)[e]);
}

int64_t RoundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Scalar tile: the reference every other variant is tested against.
template <int Mr, int Nr>
void ScalarTile(int64_t kp, const int16_t* a, const int16_t* b, int32_t* c, int64_t ldc, bool accumulate) {
  uint32_t acc[Mr][Nr] = {};
  for (int64_t p = 0; p < kp; ++p) {
    for (int i = 0; i < Mr; ++i) {
      const int32_t a0 = a[i * 2], a1 = a[i * 2 + 1];
      for (int j = 0; j < Nr; ++j) {
        acc[i][j] += static_cast<uint32_t>(a0 * b[j * 2] + a1 * b[j * 2 + 1]);
      }
    }
    a += Mr * 2;
    b += Nr * 2;
  }
  for (int i = 0; i < Mr; ++i) {
    for (int j = 0; j < Nr; ++j) {
      const uint32_t prior = accumulate ? static_cast<uint32_t>(c[i * ldc + j]) : 0u;
      c[i * ldc + j] = static_cast<int32_t>(prior + acc[i][j]);
    }
  }
}

template <typename Q>
void ScalarRequantizeTo(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                        Q* out) {
  const double lo = std::is_signed<Q>::value ? -128.0 : 0.0, hi = std::is_signed<Q>::value ? 127.0 : 255.0;
  for (int64_t j = 0; j < n; ++j) {
    const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc[j]) + static_cast<uint32_t>(bias));
    // Product and sum rounded separately, as numpy does (built with -ffp-contract=off).
    const double r =
        std::nearbyint(static_cast<double>(v) * static_cast<double>(multiplier[j * step]) + static_cast<double>(zp));
    out[j] = static_cast<Q>(r < lo ? lo : (r > hi ? hi : r));
  }
}

void ScalarRequantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                      bool is_signed, void* out) {
  if (is_signed) {
    ScalarRequantizeTo(acc, n, bias, multiplier, step, zp, static_cast<int8_t*>(out));
  } else {
    ScalarRequantizeTo(acc, n, bias, multiplier, step, zp, static_cast<uint8_t*>(out));
  }
}

// Sum of n bytes as uint8 after xor with `flip` (SSE2 psadbw on x86-64).
int32_t ByteSum(const uint8_t* src, int64_t n, uint8_t flip) {
  int64_t kk = 0;
  uint32_t sum = 0;  // modulo 2^32, as every sum of the engine
#if defined(__x86_64__)
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip)), zero = _mm_setzero_si128();
  __m128i acc = zero;
  for (; kk + 16 <= n; kk += 16) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + kk)), vflip);
    acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
  }
  sum = static_cast<uint32_t>(_mm_cvtsi128_si32(acc)) +
        static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_unpackhi_epi64(acc, acc)));
#endif
  for (; kk < n; ++kk) sum += static_cast<uint8_t>(src[kk] ^ flip);
  return static_cast<int32_t>(sum);
}

// Packs rows [i0, i0 + rows) of A, all of K, into panels of mr rows (zero padded), and
// their row sums. Row by row: pair p of row i is one 32-bit store at panel[(p * mr + i) * 2].
void PackA(const IgemmA& a, int64_t i0, int64_t rows, int64_t k, int mr, int16_t* dst, int32_t* row_sums) {
  const int64_t kp = (k + 1) / 2, full = k / 2;
  const bool is_signed = a.matrix.is_signed;
  for (int64_t t0 = 0; t0 < rows; t0 += mr) {
    int16_t* panel = dst + t0 * kp * 2;
    for (int i = 0; i < mr; ++i) {
      const int64_t r = t0 + i;
      if (r >= rows) {
        for (int64_t p = 0; p < kp; ++p) panel[(p * mr + i) * 2] = panel[(p * mr + i) * 2 + 1] = 0;
        continue;
      }
      const uint8_t* src = static_cast<const uint8_t*>(a.matrix.data) + (i0 + r) * a.matrix.row_stride;
      const auto value = [&](int64_t kk) -> int16_t {
        return is_signed ? static_cast<int16_t>(static_cast<int8_t>(src[kk])) : static_cast<int16_t>(src[kk]);
      };
      for (int64_t p = 0; p < full; ++p) {
        const uint32_t pair = static_cast<uint16_t>(value(2 * p)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(value(2 * p + 1))) << 16);
        std::memcpy(panel + (p * mr + i) * 2, &pair, sizeof(pair));
      }
      if (k & 1) {
        panel[(full * mr + i) * 2] = value(k - 1);
        panel[(full * mr + i) * 2 + 1] = 0;
      }
      // The stored values' sum: of the uint8 bytes, less 256 per negative byte when signed
      // (ByteSum of v ^ 0x80 is the sum of v + 128).
      row_sums[r] =
          is_signed
              ? static_cast<int32_t>(static_cast<uint32_t>(ByteSum(src, k, 0x80)) - 128u * static_cast<uint32_t>(k))
              : ByteSum(src, k, 0x00);
    }
  }
}

// As PackA for byte panels (K in quads): an int8 A is shifted by +128 into uint8; the row
// sums are of the stored (shifted) values. Quad q of row i is one 32-bit store.
void PackAQuads(const IgemmA& a, int64_t i0, int64_t rows, int64_t k, int mr, uint8_t* dst, int32_t* row_sums) {
  const int64_t kq = (k + 3) / 4, full = k / 4;
  const uint8_t flip = a.matrix.is_signed ? 0x80 : 0x00;
  const uint32_t flip4 = a.matrix.is_signed ? 0x80808080u : 0u;
  for (int64_t t0 = 0; t0 < rows; t0 += mr) {
    uint8_t* panel = dst + t0 * kq * 4;
    for (int i = 0; i < mr; ++i) {
      const int64_t r = t0 + i;
      if (r >= rows) {
        for (int64_t q = 0; q < kq; ++q) std::memset(panel + (q * mr + i) * 4, 0, 4);
        continue;
      }
      const uint8_t* src = static_cast<const uint8_t*>(a.matrix.data) + (i0 + r) * a.matrix.row_stride;
      for (int64_t q = 0; q < full; ++q) {
        uint32_t quad;
        std::memcpy(&quad, src + 4 * q, sizeof(quad));
        quad ^= flip4;
        std::memcpy(panel + (q * mr + i) * 4, &quad, sizeof(quad));
      }
      if (full < kq) {
        uint8_t* tail = panel + (full * mr + i) * 4;
        for (int64_t kk = full * 4; kk < kq * 4; ++kk) tail[kk & 3] = kk < k ? static_cast<uint8_t>(src[kk] ^ flip) : 0;
      }
      row_sums[r] = ByteSum(src, k, flip);
    }
  }
}

// One uint32 lane (zero_point_terms.h): the scalar kernel's correction.
struct ScalarLane {
  using V = uint32_t;
  static constexpr int kLanes = 1;
  static V Set(uint32_t v) { return v; }
  static V Load(const uint32_t* p) { return *p; }
  static void Store(uint32_t* p, V v) { *p = v; }
  static V Add(V a, V b) { return a + b; }
  static V Sub(V a, V b) { return a - b; }
  static V MulLow(V a, V b) { return a * b; }
};

void ScalarAddZeroPointTerms(uint32_t* row, int64_t n, uint32_t row_term, uint32_t azp, const uint32_t* column_sums) {
  AddZeroPointTermsLanes<ScalarLane>(row, n, row_term, azp, column_sums);
}

}  // namespace

// The NEON kernel's requantiser (scalar code, baseline flags).
void ScalarRequantizeForNeon(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step,
                             int32_t zp, bool is_signed, void* out) {
  ScalarRequantize(acc, n, bias, multiplier, step, zp, is_signed, out);
}

const IgemmKernel& ScalarKernel() {
  static const IgemmKernel kernel{"scalar", 4,       8,       ScalarTile<4, 8>, ScalarRequantize,
                                  nullptr,  nullptr, nullptr, nullptr,          ScalarAddZeroPointTerms};
  return kernel;
}

extern const IgemmKernel kIgemmAvx2Kernel;
extern const IgemmKernel kIgemmAvx512Kernel;
extern const IgemmKernel kIgemmAvx512VnniKernel;
extern const IgemmKernel kIgemmNeonKernel;

const IgemmKernel* Avx512VnniKernel() {
#if defined(__x86_64__)
  if (IsaEnabled(Isa::kAvx512) && HostCpu().avx512vnni) return &kIgemmAvx512VnniKernel;
#endif
  return nullptr;
}

const IgemmKernel* Avx512Kernel() {
#if defined(__x86_64__)
  if (IsaEnabled(Isa::kAvx512)) return &kIgemmAvx512Kernel;
#endif
  return nullptr;
}

const IgemmKernel* Avx2Kernel() {
#if defined(__x86_64__)
  if (IsaEnabled(Isa::kAvx2)) return &kIgemmAvx2Kernel;
#endif
  return nullptr;
}

const IgemmKernel* NeonKernel() {
#if defined(__aarch64__)
  if (IsaEnabled(Isa::kNeon)) return &kIgemmNeonKernel;
#endif
  return nullptr;
}

const std::vector<IsaVariant<const IgemmKernel* (*)()>>& IgemmKernelVariants() {
  static const auto* variants = new std::vector<IsaVariant<const IgemmKernel* (*)()>> {
#if defined(__x86_64__)
    {"avx512_vnni", Isa::kAvx512, Avx512VnniKernel}, {"avx512", Isa::kAvx512, Avx512Kernel},
        {"avx2", Isa::kAvx2, Avx2Kernel},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, NeonKernel},
#endif
        {"scalar", Isa::kPortable, [] { return &ScalarKernel(); }},
  };
  return *variants;
}

const IgemmKernel& BestIgemmKernel() {
  static const IgemmKernel* best = [] {
    for (const auto& v : IgemmKernelVariants()) {
      if (!IsaEnabled(v.isa)) continue;
      if (const IgemmKernel* k = v.impl()) return k;
    }
    return &ScalarKernel();
  }();
  return *best;
}

StatusOr<std::shared_ptr<const IgemmPackedB>> IgemmPackedB::Create(int64_t k, int64_t n, const IgemmMatrix& b,
                                                                   const int32_t* zero_points, int64_t zero_point_count,
                                                                   const IgemmKernel* kernel) {
  if (k < 0 || n < 0 || (zero_point_count != 1 && zero_point_count != n)) {
    return InvalidArgument("IgemmPackedB: bad shape ", k, "x", n, " or zero point count ", zero_point_count);
  }
  auto packed = std::shared_ptr<IgemmPackedB>(new IgemmPackedB());
  packed->kernel_ = kernel != nullptr ? kernel : &BestIgemmKernel();
  const int nr = packed->kernel_->nr;
  const int64_t panels = (n + nr - 1) / nr;
  packed->k_ = k;
  packed->n_ = n;
  // A signed B goes to the byte tile when the kernel has one (u8 x s8 dot products).
  packed->bytes_ = packed->kernel_->tile_u8s8 != nullptr && b.is_signed;
  const int group = packed->bytes_ ? 4 : 2;
  packed->panel_stride_ = (k + group - 1) / group * nr * group;
  if (packed->bytes_) {
    packed->byte_data_.assign(static_cast<size_t>(panels * packed->panel_stride_), 0);
  } else {
    packed->data_.assign(static_cast<size_t>(panels * packed->panel_stride_), 0);
  }
  packed->column_sums_.assign(static_cast<size_t>(n), 0);
  packed->zero_points_.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t jj = j % nr, base = (j / nr) * packed->panel_stride_;
    uint32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int32_t v = ElementAt(b, kk, j);
      const int64_t at = base + ((kk / group) * nr + jj) * group + kk % group;
      if (packed->bytes_) {
        packed->byte_data_[at] = static_cast<int8_t>(v);
      } else {
        packed->data_[at] = static_cast<int16_t>(v);
      }
      sum += static_cast<uint32_t>(v);
    }
    packed->column_sums_[j] = static_cast<int32_t>(sum);
    packed->zero_points_[j] = zero_points == nullptr ? 0 : zero_points[zero_point_count == 1 ? 0 : j];
  }
  packed->zero_point_uniform_ = std::all_of(packed->zero_points_.begin(), packed->zero_points_.end(),
                                            [&](int32_t z) { return z == packed->zero_points_.front(); });
  return std::shared_ptr<const IgemmPackedB>(std::move(packed));
}

namespace {

// The blocking of one product and the scratch each participant needs for it.
struct Blocking {
  bool bytes = false;
  int64_t kp = 0, k_block = 0, row_block = 0, column_block = 0, row_tasks = 0, column_tasks = 0, tasks = 0;
  size_t a_bytes = 0, row_sum_bytes = 0, c_bytes = 0, column_term_bytes = 0;
  // Per participant: packed A (row_block x K, padded, as int16 storage), row sums, the
  // int32 block, the zero-point terms of a block's columns, each 64-byte aligned.
  size_t PerParticipant() const {
    return RoundUpBytes(a_bytes) + RoundUpBytes(row_sum_bytes) + RoundUpBytes(c_bytes) +
           RoundUpBytes(column_term_bytes);
  }
  static size_t RoundUpBytes(size_t v) { return (v + 63) / 64 * 64; }
};

Blocking MakeBlocking(int64_t m, const IgemmPackedB& b) {
  const IgemmKernel& kernel = b.kernel();
  Blocking l;
  l.bytes = b.bytes();
  const int group = l.bytes ? 4 : 2;  // K in pairs of 16-bit values, or quads of bytes
  l.kp = (b.k() + group - 1) / group;
  l.k_block = l.bytes ? kKPairBlock / 2 : kKPairBlock;
  // Row blocks of whole mr panels, as even as the panels allow (128 rows on a 12-row tile:
  // 72 and 56, not 96 and 32), so that participants splitting them get even shares.
  const int64_t panels = (m + kernel.mr - 1) / kernel.mr;
  const int64_t row_blocks =
      (panels + std::max<int64_t>(kRowBlock / kernel.mr, 1) - 1) / std::max<int64_t>(kRowBlock / kernel.mr, 1);
  l.row_block = (panels + row_blocks - 1) / row_blocks * kernel.mr;
  l.column_block = RoundUp(std::min<int64_t>(kColumnBlock, b.n()), kernel.nr);
  l.row_tasks = (m + l.row_block - 1) / l.row_block;
  l.column_tasks = (b.n() + l.column_block - 1) / l.column_block;
  l.tasks = l.row_tasks * l.column_tasks;
  l.a_bytes = sizeof(int16_t) * static_cast<size_t>(l.row_block * std::max<int64_t>(l.kp, 1) * 2);
  l.row_sum_bytes = sizeof(int32_t) * static_cast<size_t>(l.row_block);
  l.c_bytes = sizeof(int32_t) * static_cast<size_t>(l.row_block * l.column_block);
  l.column_term_bytes = sizeof(uint32_t) * static_cast<size_t>(l.column_block);
  return l;
}

struct Scratch {
  int16_t* a;
  int32_t* row_sums;
  int32_t* c;
  uint32_t* column_terms;
  // The row block `a` holds (-1: none): a participant's consecutive tasks of one row block,
  // in one ParallelFor block or several, pack A once.
  int64_t packed_row_block = -1;
};

Scratch CarveScratch(const Blocking& l, void* base) {
  auto* p = static_cast<char*>(base);
  Scratch s;
  s.a = reinterpret_cast<int16_t*>(p);
  s.row_sums = reinterpret_cast<int32_t*>(p + Blocking::RoundUpBytes(l.a_bytes));
  p += Blocking::RoundUpBytes(l.a_bytes) + Blocking::RoundUpBytes(l.row_sum_bytes);
  s.c = reinterpret_cast<int32_t*>(p);
  s.column_terms = reinterpret_cast<uint32_t*>(p + Blocking::RoundUpBytes(l.c_bytes));
  return s;
}

// Packs row block rt of A (all of K) into a_panels with its row sums.
void PackRowBlock(const Blocking& l, int64_t m, const IgemmA& a, int64_t k, int mr, int64_t rt, int16_t* a_panels,
                  int32_t* row_sums) {
  const int64_t i0 = rt * l.row_block, rows = std::min(l.row_block, m - i0);
  if (l.bytes) {
    PackAQuads(a, i0, rows, k, mr, reinterpret_cast<uint8_t*>(a_panels), row_sums);
  } else {
    PackA(a, i0, rows, k, mr, a_panels, row_sums);
  }
}

// All of A packed once (row block rt's panels at a + rt * a_stride, its row sums at
// row_sums + rt * row_block), read by every task.
struct SharedA {
  int16_t* a = nullptr;
  int32_t* row_sums = nullptr;
  int64_t a_stride = 0;
};

// C written in place (IgemmComputeInto): row i at c + i * ldc.
struct DirectC {
  int32_t* c = nullptr;
  int64_t ldc = 0;
};

// Tasks [begin, end) of the product with the participant's scratch s. Without a shared A,
// tasks run row block by row block (the column blocks of one row block consecutive, so a
// participant packs each row block it runs once into s); with one, column block by column
// block (the row blocks of one column block consecutive, so its B panels are read from
// cache for all rows, and participants splitting the tasks get equal column ranges).
// With `direct`, whole mr x nr tiles accumulate in C itself, the edge tiles in s.c (copied
// to C at the end of the block), and sink is not called.
Status RunTasks(const Blocking& l, int64_t m, const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, Scratch& s,
                const SharedA* shared, const DirectC* direct, int64_t begin, int64_t end) {
  const int64_t n = b.n(), k = b.k();
  const IgemmKernel& kernel = b.kernel();
  const int mr = kernel.mr, nr = kernel.nr;
  const bool bytes = l.bytes;
  const int64_t kp = l.kp, k_block = l.k_block, row_block = l.row_block, column_block = l.column_block;
  const int64_t column_tasks = l.column_tasks;
  const bool edges = bytes ? kernel.edge_tile_u8s8 != nullptr : kernel.edge_tile != nullptr;
  // A byte-packed int8 A is stored shifted by +128: its zero point shifts alike.
  const int32_t a_shift = bytes && a.matrix.is_signed ? 128 : 0;
  const auto& column_sums = b.column_sums();
  const auto& bzp = b.zero_points();
  for (int64_t task = begin; task < end; ++task) {
    const int64_t rt = shared != nullptr ? task % l.row_tasks : task / column_tasks;
    const int64_t ct = shared != nullptr ? task / l.row_tasks : task % column_tasks;
    const int64_t i0 = rt * row_block, rows = std::min(row_block, m - i0);
    const int64_t j0 = ct * column_block, cols = std::min(column_block, n - j0);
    const int64_t rows_padded = RoundUp(rows, mr), cols_padded = RoundUp(cols, nr);
    const int16_t* a_panels = s.a;
    const int32_t* row_sums = s.row_sums;
    if (shared != nullptr) {
      a_panels = shared->a + rt * shared->a_stride;
      row_sums = shared->row_sums + rt * row_block;
    } else if (s.packed_row_block != rt) {
      PackRowBlock(l, m, a, k, mr, rt, s.a, s.row_sums);
      s.packed_row_block = rt;
    }
    const int64_t ldc = cols_padded;
    // Rows and columns of the block held in C itself (whole tiles; none without `direct`).
    const int64_t in_place_rows = direct != nullptr ? rows / mr * mr : 0;
    const int64_t in_place_cols = direct != nullptr ? cols / nr * nr : 0;
    int32_t* const c_block = direct != nullptr ? direct->c + i0 * direct->ldc + j0 : nullptr;
    const auto tile_c = [&](int64_t it, int64_t jt, int64_t* ld) {
      if (it < in_place_rows && jt < in_place_cols) {
        *ld = direct->ldc;
        return c_block + it * direct->ldc + jt;
      }
      *ld = ldc;
      return s.c + it * ldc + jt;
    };
    if (kp == 0) {
      std::fill(s.c, s.c + rows_padded * ldc, 0);
      for (int64_t r = 0; r < in_place_rows; ++r) {
        std::fill(c_block + r * direct->ldc, c_block + r * direct->ldc + in_place_cols, 0);
      }
    }
    for (int64_t p0 = 0; p0 < kp; p0 += k_block) {
      const int64_t pc = std::min(k_block, kp - p0);
      for (int64_t jt = 0; jt < cols_padded; jt += nr) {
        const int64_t panel = (j0 + jt) / nr;
        const int tile_cols = static_cast<int>(std::min<int64_t>(nr, cols - jt));
        for (int64_t it = 0; it < rows_padded; it += mr) {
          int64_t ld = 0;
          int32_t* c = tile_c(it, jt, &ld);
          // The block's last row and column tiles are edge tiles when the kernel has them
          // (no padding rows or columns computed; same sums in the cells they store).
          const int tile_rows = static_cast<int>(std::min<int64_t>(mr, rows - it));
          const bool full = !edges || (tile_rows == mr && tile_cols == nr);
          if (bytes) {
            const uint8_t* ap = reinterpret_cast<const uint8_t*>(a_panels) + (it * kp + p0 * mr) * 4;
            const IgemmByteTileFn tile = full ? kernel.tile_u8s8 : kernel.edge_tile_u8s8(tile_rows, tile_cols);
            tile(pc, ap, b.byte_panel(panel) + p0 * nr * 4, c, ld, p0 > 0);
          } else {
            const IgemmTileFn tile = full ? kernel.tile : kernel.edge_tile(tile_rows, tile_cols);
            tile(pc, a_panels + (it * kp + p0 * mr) * 2, b.panel(panel) + p0 * nr * 2, c, ld, p0 > 0);
          }
        }
      }
    }
    // Row r of the block, indexed by column: in C up to in_place_cols (rows below
    // in_place_rows), in s.c past it.
    const auto row_at = [&](int64_t r, int64_t cc) -> uint32_t* {
      return reinterpret_cast<uint32_t*>(r < in_place_rows && cc < in_place_cols ? c_block + r * direct->ldc + cc
                                                                                 : s.c + r * ldc + cc);
    };
    const auto split = [&](int64_t r) { return r < in_place_rows ? in_place_cols : 0; };
    // Zero points: - azp(i) colsum(j) - bzp(j) rowsum(i) + K azp(i) bzp(j), modulo 2^32.
    // With one A zero point the column terms K azp bzp(j) - azp colsum(j) are formed once
    // per block, and with one B zero point - bzp rowsum(i) is one value per row: then each
    // element takes two additions (the same sum modulo 2^32).
    if (a.zero_points == nullptr || a.zero_point_count == 1) {
      const uint32_t azp = static_cast<uint32_t>((a.zero_points == nullptr ? 0 : a.zero_points[0]) + a_shift);
      const uint32_t k_azp = static_cast<uint32_t>(k) * azp;
      for (int64_t cc = 0; cc < cols; ++cc) {
        s.column_terms[cc] =
            k_azp * static_cast<uint32_t>(bzp[j0 + cc]) - azp * static_cast<uint32_t>(column_sums[j0 + cc]);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const uint32_t row_sum = static_cast<uint32_t>(row_sums[r]);
        const std::pair<int64_t, int64_t> parts[2] = {{0, split(r)}, {split(r), cols}};
        for (const auto& [from, to] : parts) {
          if (from >= to) continue;
          uint32_t* c = row_at(r, from) - from;
          if (b.zero_point_uniform()) {
            const uint32_t row_term = 0u - static_cast<uint32_t>(bzp[0]) * row_sum;
            for (int64_t cc = from; cc < to; ++cc) c[cc] += s.column_terms[cc] + row_term;
          } else {
            for (int64_t cc = from; cc < to; ++cc) {
              c[cc] += s.column_terms[cc] - static_cast<uint32_t>(bzp[j0 + cc]) * row_sum;
            }
          }
        }
      }
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t zp = a.zero_points[(i0 + r) % a.zero_point_count];
        const uint32_t azp = static_cast<uint32_t>(zp + a_shift);
        const uint32_t row_sum = static_cast<uint32_t>(row_sums[r]);
        const uint32_t k_azp = static_cast<uint32_t>(k) * azp;
        const std::pair<int64_t, int64_t> parts[2] = {{0, split(r)}, {split(r), cols}};
        for (const auto& [from, to] : parts) {
          if (from >= to) continue;
          uint32_t* c = row_at(r, from) - from;
          for (int64_t cc = from; cc < to; ++cc) {
            const uint32_t z = static_cast<uint32_t>(bzp[j0 + cc]);
            c[cc] += k_azp * z - azp * static_cast<uint32_t>(column_sums[j0 + cc]) - z * row_sum;
          }
        }
      }
    }
    if (direct != nullptr) {  // the edge tiles' results to C
      for (int64_t r = 0; r < rows; ++r) {
        std::copy(s.c + r * ldc + split(r), s.c + r * ldc + cols, c_block + r * direct->ldc + split(r));
      }
      continue;
    }
    sink(i0, static_cast<int>(rows), j0, static_cast<int>(cols), s.c, ldc);
  }
  return Status::Ok();
}

Status ComputeImpl(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units, int64_t m,
                   const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, const DirectC* direct,
                   int64_t* scratch_bytes) {
  const int64_t n = b.n(), k = b.k();
  if (m <= 0 || n <= 0) return Status::Ok();
  const Blocking l = MakeBlocking(m, b);
  // Work units, saturating.
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(std::max<int64_t>(k, 1));
  const bool serial = macs / static_cast<double>(kMacsPerUnit) < static_cast<double>(parallel_minimum_units);
  const ParallelPlan plan{"igemm.blocks", 1};
  const int participants = serial ? 1 : AvailableParticipants(parallel, plan);
  const size_t per = l.PerParticipant();
  const size_t a_block_bytes = Blocking::RoundUpBytes(l.a_bytes);
  const size_t shared_a_bytes = static_cast<size_t>(l.row_tasks) * a_block_bytes;
  const bool share_a = l.row_tasks > 1 && shared_a_bytes <= kSharedABytes;
  const size_t shared_bytes =
      share_a ? shared_a_bytes + Blocking::RoundUpBytes(static_cast<size_t>(l.row_tasks) * l.row_sum_bytes) : 0;
  const size_t total = per * static_cast<size_t>(participants) + shared_bytes;
  ScratchArena arena(allocator, total + 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(void* base, arena.Allocate(total));
  std::vector<Scratch> scratch(static_cast<size_t>(participants));
  for (int p = 0; p < participants; ++p) scratch[p] = CarveScratch(l, static_cast<char*>(base) + p * per);
  if (scratch_bytes != nullptr) *scratch_bytes = static_cast<int64_t>(arena.capacity());
  SharedA shared;
  if (share_a) {
    char* at = static_cast<char*>(base) + per * static_cast<size_t>(participants);
    shared.a = reinterpret_cast<int16_t*>(at);
    shared.row_sums = reinterpret_cast<int32_t*>(at + shared_a_bytes);
    shared.a_stride = static_cast<int64_t>(a_block_bytes / sizeof(int16_t));
    const auto pack = [&](int64_t begin, int64_t end) {
      for (int64_t rt = begin; rt < end; ++rt) {
        PackRowBlock(l, m, a, k, b.kernel().mr, rt, shared.a + rt * shared.a_stride,
                     shared.row_sums + rt * l.row_block);
      }
      return Status::Ok();
    };
    if (serial || participants <= 1) {
      OL_RETURN_IF_ERROR(pack(0, l.row_tasks));
    } else {
      OL_RETURN_IF_ERROR(ParallelFor(parallel, l.row_tasks, ParallelPlan{"igemm.pack_a", 1, participants}, pack));
    }
  }
  const SharedA* shared_a = share_a ? &shared : nullptr;
  const auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
    return RunTasks(l, m, a, b, sink, scratch[static_cast<size_t>(participant)], shared_a, direct, begin, end);
  };
  if (serial || participants <= 1) return run(0, 0, l.tasks);
  return ParallelForWithParticipant(parallel, l.tasks, ParallelPlan{"igemm.blocks", 1, participants}, run);
}

}  // namespace

Status IgemmCompute(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units, int64_t m,
                    const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, int64_t* scratch_bytes) {
  return ComputeImpl(parallel, allocator, parallel_minimum_units, m, a, b, sink, nullptr, scratch_bytes);
}

Status IgemmComputeInto(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units,
                        int64_t m, const IgemmA& a, const IgemmPackedB& b, int32_t* c, int64_t ldc,
                        int64_t* scratch_bytes) {
  if (ldc < b.n()) return InvalidArgument("IgemmComputeInto: ldc ", ldc, " < n ", b.n());
  const DirectC direct{c, ldc};
  const auto no_sink = [](int64_t, int, int64_t, int, const int32_t*, int64_t) {};
  return ComputeImpl(parallel, allocator, parallel_minimum_units, m, a, b, no_sink, &direct, scratch_bytes);
}

bool IgemmIndirectAvailable() {
  const IgemmKernel& k = BestIgemmKernel();
  return k.indirect_tile_u8s8 != nullptr || k.indirect_tile_pairs != nullptr;
}

bool IgemmIndirectSupported(const IgemmPackedB& b, int64_t segment) {
  if (segment <= 0) return false;
  if (b.bytes()) return b.kernel().indirect_tile_u8s8 != nullptr && segment % 4 == 0;
  return b.kernel().indirect_tile_pairs != nullptr && segment % 2 == 0;
}

int IgemmIndirectElementBytes(const IgemmPackedB& b) { return b.bytes() ? 1 : 2; }

Status IgemmComputeIndirect(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units,
                            int64_t m, const IgemmIndirectA& a, const IgemmPackedB& b, IgemmSink sink,
                            int64_t* scratch_bytes) {
  const int64_t n = b.n();
  if (!IgemmIndirectSupported(b, a.segment) || a.taps * a.segment != b.k()) {
    return InvalidArgument("IgemmComputeIndirect: B (K ", b.k(), ") cannot take ", a.taps, " spans of ", a.segment,
                           " bytes on kernel ", b.kernel().name);
  }
  if (m <= 0 || n <= 0) return Status::Ok();
  const IgemmKernel& kernel = b.kernel();
  const int mr = kernel.mr, nr = kernel.nr;
  // Tasks of up to kRowBlock rows x kIndirectColumns columns, row block by row block (a
  // participant's consecutive tasks read the same input rows); within a task, column panel
  // by panel, so that a panel of B (nr columns x K) is read from cache for all its rows.
  constexpr int64_t kIndirectColumns = 128;
  const int64_t panels = (m + mr - 1) / mr, per_block = std::max<int64_t>(kRowBlock / mr, 1);
  const int64_t row_blocks = (panels + per_block - 1) / per_block;
  const int64_t row_block = (panels + row_blocks - 1) / row_blocks * mr;
  const int64_t column_block = RoundUp(std::min<int64_t>(kIndirectColumns, n), nr);
  const int64_t column_tasks = (n + column_block - 1) / column_block;
  const int64_t tasks = row_blocks * column_tasks;
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(b.k());
  const bool serial = macs / static_cast<double>(kMacsPerUnit) < static_cast<double>(parallel_minimum_units);
  const ParallelPlan plan{"igemm.indirect_blocks", 1};
  const int participants = serial ? 1 : AvailableParticipants(parallel, plan);
  const size_t per = Blocking::RoundUpBytes(sizeof(int32_t) * static_cast<size_t>(row_block * column_block));
  const int64_t n_padded = RoundUp(n, nr);  // the column offsets, zero past n (tiles read whole 8-column steps)
  ScratchArena arena(allocator, per * static_cast<size_t>(participants) + sizeof(int32_t) * n_padded + 128);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(void* base, arena.Allocate(per * static_cast<size_t>(participants)));
  OL_ASSIGN_OR_RETURN(int32_t * init, arena.AllocateArray<int32_t>(n_padded));
  if (scratch_bytes != nullptr) *scratch_bytes = static_cast<int64_t>(arena.capacity());
  std::fill(init, init + n_padded, 0);
  if (a.column_offsets != nullptr) std::copy(a.column_offsets, a.column_offsets + n, init);
  const int64_t groups = a.segment / (b.bytes() ? 4 : 2);  // quads or pairs per tap
  const auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
    auto* c = reinterpret_cast<int32_t*>(static_cast<char*>(base) + per * static_cast<size_t>(participant));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t i0 = task / column_tasks * row_block, rows = std::min(row_block, m - i0);
      const int64_t j0 = task % column_tasks * column_block, cols = std::min(column_block, n - j0);
      for (int64_t jt = 0; jt < cols; jt += nr) {
        const int64_t panel = (j0 + jt) / nr;
        const int tile_cols = static_cast<int>(std::min<int64_t>(nr, cols - jt));
        for (int64_t it = 0; it < rows; it += mr) {
          const int tile_rows = static_cast<int>(std::min<int64_t>(mr, rows - it));
          int32_t* tile_c = c + it * column_block + jt;
          if (b.bytes()) {
            kernel.indirect_tile_u8s8(tile_rows, tile_cols)(a.taps, groups, a.rows + i0 + it, a.offsets,
                                                            b.byte_panel(panel), init + j0 + jt, tile_c, column_block);
          } else {
            kernel.indirect_tile_pairs(tile_rows, tile_cols)(a.taps, groups, a.rows + i0 + it, a.offsets,
                                                             b.panel(panel), init + j0 + jt, tile_c, column_block);
          }
        }
      }
      sink(i0, static_cast<int>(rows), j0, static_cast<int>(cols), c, column_block);
    }
    return Status::Ok();
  };
  if (serial || participants <= 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(parallel, tasks, ParallelPlan{"igemm.indirect_blocks", 1, participants}, run);
}

size_t IgemmSerialScratchBytes(int64_t m, const IgemmPackedB& b) {
  return m <= 0 || b.n() <= 0 ? 0 : MakeBlocking(m, b).PerParticipant();
}

Status IgemmComputeSerial(int64_t m, const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, void* scratch) {
  if (m <= 0 || b.n() <= 0) return Status::Ok();
  if (reinterpret_cast<uintptr_t>(scratch) % 64 != 0) {
    return InvalidArgument("IgemmComputeSerial: scratch must be 64-byte aligned");
  }
  const Blocking l = MakeBlocking(m, b);
  Scratch s = CarveScratch(l, scratch);
  return RunTasks(l, m, a, b, sink, s, nullptr, nullptr, 0, l.tasks);
}

// ---- Packed A (the constant left operand) times blocks of B packed per run ----
//
// Formats (igemm_kernel.h): a byte-tile kernel stores A as uint8 (shift +128 when signed)
// and B as int8 (shift -128 when unsigned), K in quads; other kernels store both as 16-bit
// pairs, unshifted. Row and column sums are of the stored values; the zero points used in
// the decomposition are shifted alike.

namespace {

int32_t ShiftA(bool bytes, bool is_signed) { return bytes && is_signed ? 128 : 0; }
int32_t ShiftB(bool bytes, bool is_signed) { return bytes && !is_signed ? -128 : 0; }

}  // namespace

StatusOr<std::shared_ptr<const IgemmPackedA>> IgemmPackedA::Create(int64_t m, int64_t k, const IgemmMatrix& a,
                                                                   const int32_t* zero_points, int64_t zero_point_count,
                                                                   const IgemmKernel* kernel) {
  if (m < 0 || k < 0 || (zero_point_count != 1 && zero_point_count != m)) {
    return InvalidArgument("IgemmPackedA: bad shape ", m, "x", k, " or zero point count ", zero_point_count);
  }
  auto packed = std::shared_ptr<IgemmPackedA>(new IgemmPackedA());
  packed->kernel_ = kernel != nullptr ? kernel : &BestIgemmKernel();
  const int mr = packed->kernel_->mr;
  packed->m_ = m;
  packed->k_ = k;
  packed->bytes_ = packed->kernel_->tile_u8s8 != nullptr;
  const int group = packed->bytes_ ? 4 : 2;
  packed->k_groups_ = (k + group - 1) / group;
  const int64_t m_padded = RoundUp(std::max<int64_t>(m, 1), mr);
  const size_t size = static_cast<size_t>(m_padded * packed->k_groups_ * group);
  const int32_t shift = ShiftA(packed->bytes_, a.is_signed);
  if (packed->bytes_) {
    packed->byte_data_.assign(size, 0);
  } else {
    packed->data_.assign(size, 0);
  }
  packed->row_sums_.assign(static_cast<size_t>(m), 0);
  packed->zero_points_.resize(static_cast<size_t>(m));
  // The panels are PackAQuads' / PackA's (the row-block packing of IgemmCompute) over all m
  // rows: a 32-bit quad or pair store per row and group, row sums by ByteSum, in place of an
  // element-by-element loop (ResNet-18's weights: 244M instructions at creation before).
  if (a.col_stride == 1) {
    const IgemmA whole{a, nullptr, 1};
    if (packed->bytes_) {
      PackAQuads(whole, 0, m, k, mr, packed->byte_data_.data(), packed->row_sums_.data());
    } else {
      PackA(whole, 0, m, k, mr, packed->data_.data(), packed->row_sums_.data());
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    if (a.col_stride != 1) {  // a strided A element by element
      const int64_t base = (i / mr) * packed->k_groups_ * mr * group, ii = i % mr;
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int32_t v = ElementAt(a, i, kk) + shift;
        const int64_t at = base + ((kk / group) * mr + ii) * group + kk % group;
        if (packed->bytes_) {
          packed->byte_data_[at] = static_cast<uint8_t>(v);
        } else {
          packed->data_[at] = static_cast<int16_t>(v);
        }
        sum += static_cast<uint32_t>(v);
      }
      packed->row_sums_[i] = static_cast<int32_t>(sum);
    }
    packed->zero_points_[i] = (zero_points == nullptr ? 0 : zero_points[zero_point_count == 1 ? 0 : i]) + shift;
  }
  return std::shared_ptr<const IgemmPackedA>(std::move(packed));
}

int IgemmPackedA::mr() const { return kernel_->mr; }
int IgemmPackedA::nr() const { return kernel_->nr; }

size_t IgemmBBlockBytes(const IgemmPackedA& a, int64_t cols) {
  const int nr = a.kernel().nr;
  const int64_t group = a.bytes() ? 4 : 2, element = a.bytes() ? 1 : 2;
  return static_cast<size_t>(RoundUp(std::max<int64_t>(cols, 1), nr) * std::max<int64_t>(a.k_groups(), 1) * group *
                             element);
}

namespace {

using BRows = IgemmRows;

// One panel (nr columns from col0, `width` of them real) of the K rows,
// K in groups of G, values converted by `load` into Stored; sums[c] += stored values.
template <int G, typename Stored, typename Load>
void PackBPanel(const BRows& rows, int64_t col0, int64_t k, int64_t k_groups, int nr, int64_t width, Stored* dst,
                int32_t* sums, Load load) {
  for (int64_t q = 0; q < k_groups; ++q) {
    Stored* out = dst + q * nr * G;
    for (int t = 0; t < G; ++t) {
      const int64_t kk = q * G + t;
      if (kk >= k) {
        for (int c = 0; c < nr; ++c) out[c * G + t] = 0;
        continue;
      }
      const uint8_t* row = rows.at(kk, col0);
      for (int64_t c = 0; c < width; ++c) {
        const Stored v = load(row[c]);
        out[c * G + t] = v;
        sums[c] += v;
      }
      for (int64_t c = width; c < nr; ++c) out[c * G + t] = 0;
    }
  }
}

#if defined(__x86_64__)
// SSE2 (the x86-64 baseline) packing of a strip of 16 columns (`width` of them real) of a
// panel, K in groups of G: the same panels and column sums as PackBPanel.
__m128i LoadRow(const uint8_t* row, int64_t width, uint8_t fill) {
  if (width >= 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row));
  alignas(16) uint8_t tmp[16];
  std::memset(tmp, fill, sizeof(tmp));
  std::memcpy(tmp, row, static_cast<size_t>(width));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
}

// Adds the 16 int16 sums (lo: columns 0-7, hi: 8-15) to four int32 vectors.
void FlushSums(__m128i lo, __m128i hi, __m128i* acc) {
  acc[0] = _mm_add_epi32(acc[0], _mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 16));
  acc[1] = _mm_add_epi32(acc[1], _mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 16));
  acc[2] = _mm_add_epi32(acc[2], _mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 16));
  acc[3] = _mm_add_epi32(acc[3], _mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 16));
}

void StoreSums(const __m128i* acc, int32_t correction, int64_t width, int32_t* sums) {
  alignas(16) int32_t all[16];
  for (int v = 0; v < 4; ++v) _mm_store_si128(reinterpret_cast<__m128i*>(all + 4 * v), acc[v]);
  for (int64_t c = 0; c < std::min<int64_t>(width, 16); ++c) sums[c] += all[c] + correction;
}

// 16-bit pairs: stored int16 = the raw value sign- or zero-extended.
void PackPairStrip(const BRows& rows, int64_t col0, int64_t k, int64_t kg, int nr, int64_t width, bool is_signed,
                   int16_t* dst, int32_t* sums) {
  const __m128i zero = _mm_setzero_si128();
  __m128i acc[4] = {zero, zero, zero, zero}, lo = zero, hi = zero;
  for (int64_t q = 0; q < kg; ++q) {
    __m128i e_lo[2], e_hi[2];
    for (int t = 0; t < 2; ++t) {
      const int64_t kk = q * 2 + t;
      const __m128i r = kk < k ? LoadRow(rows.at(kk, col0), width, 0) : zero;
      if (is_signed) {
        e_lo[t] = _mm_srai_epi16(_mm_unpacklo_epi8(r, r), 8);
        e_hi[t] = _mm_srai_epi16(_mm_unpackhi_epi8(r, r), 8);
      } else {
        e_lo[t] = _mm_unpacklo_epi8(r, zero);
        e_hi[t] = _mm_unpackhi_epi8(r, zero);
      }
      lo = _mm_add_epi16(lo, e_lo[t]);
      hi = _mm_add_epi16(hi, e_hi[t]);
    }
    __m128i* out = reinterpret_cast<__m128i*>(dst + q * nr * 2);
    _mm_storeu_si128(out, _mm_unpacklo_epi16(e_lo[0], e_lo[1]));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(e_lo[0], e_lo[1]));
    _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(e_hi[0], e_hi[1]));
    _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(e_hi[0], e_hi[1]));
    if ((q & 31) == 31) {  // 32 pairs: |sum| <= 32 * 2 * 255 < 2^15
      FlushSums(lo, hi, acc);
      lo = hi = zero;
    }
  }
  FlushSums(lo, hi, acc);
  StoreSums(acc, 0, width, sums);
}
#endif  // __x86_64__

}  // namespace

namespace {

void PackBlock(const IgemmPackedA& a, const BRows& rows, IgemmBBlock* block) {
  const int nr = a.kernel().nr;
  const int64_t k = a.k(), kg = a.k_groups(), cols = block->cols;
  std::fill(block->column_sums, block->column_sums + cols, 0);
  for (int64_t j0 = 0; j0 < cols; j0 += nr) {
    const int64_t width = std::min<int64_t>(nr, cols - j0);
    int32_t* sums = block->column_sums + j0;
    if (a.kernel().pack_panel != nullptr) {  // the kernel's own packing
      // Either format stores 4 bytes per column per K group (a quad of bytes, a pair of int16).
      a.kernel().pack_panel(rows, j0, k, width, block->is_signed, static_cast<char*>(block->panels) + j0 * kg * 4,
                            sums);
      continue;
    }
#if defined(__x86_64__)
    if (!a.bytes() && nr % 16 == 0) {  // the AVX-512 kernel's pair panels, 16 columns at a time
      for (int64_t c0 = 0; c0 < nr; c0 += 16) {
        const int64_t strip = width - c0;  // real columns in this strip (may be <= 0: all padding)
        int16_t* strip_dst = static_cast<int16_t*>(block->panels) + j0 * kg * 2 + c0 * 2;
        if (strip <= 0) {
          for (int64_t q = 0; q < kg; ++q) std::memset(strip_dst + q * nr * 2, 0, 64);
          continue;
        }
        PackPairStrip(rows, j0 + c0, k, kg, nr, strip, block->is_signed, strip_dst, sums + c0);
      }
      continue;
    }
#endif
    if (a.bytes()) {
      int8_t* dst = static_cast<int8_t*>(block->panels) + j0 * kg * 4;
      if (block->is_signed) {
        PackBPanel<4>(rows, j0, k, kg, nr, width, dst, sums, [](uint8_t v) { return static_cast<int8_t>(v); });
      } else {
        PackBPanel<4>(rows, j0, k, kg, nr, width, dst, sums, [](uint8_t v) { return static_cast<int8_t>(v ^ 0x80); });
      }
    } else {
      int16_t* dst = static_cast<int16_t*>(block->panels) + j0 * kg * 2;
      if (block->is_signed) {
        PackBPanel<2>(rows, j0, k, kg, nr, width, dst, sums,
                      [](uint8_t v) { return static_cast<int16_t>(static_cast<int8_t>(v)); });
      } else {
        PackBPanel<2>(rows, j0, k, kg, nr, width, dst, sums, [](uint8_t v) { return static_cast<int16_t>(v); });
      }
    }
  }
}

}  // namespace

void IgemmPackBBlock(const IgemmPackedA& a, const IgemmMatrix& b, IgemmBBlock* block) {
  PackBlock(a, BRows{static_cast<const uint8_t*>(b.data), b.row_stride, nullptr}, block);
}

void IgemmPackBBlockRows(const IgemmPackedA& a, const uint8_t* const* rows, IgemmBBlock* block) {
  PackBlock(a, BRows{nullptr, 0, rows}, block);
}

void IgemmMultiplyBlock(const IgemmPackedA& a, int64_t i0, int64_t rows, const IgemmBBlock& b, int32_t* c,
                        int64_t ldc) {
  const IgemmKernel& kernel = a.kernel();
  const int mr = kernel.mr, nr = kernel.nr;
  const bool bytes = a.bytes();
  const int64_t kg = a.k_groups(), k_block = bytes ? kKPairBlock / 2 : kKPairBlock;
  const int64_t rows_padded = RoundUp(rows, mr), cols_padded = RoundUp(b.cols, nr);
  if (rows <= 0 || b.cols <= 0) return;
  if (kg == 0) {
    for (int64_t r = 0; r < rows_padded; ++r) std::fill(c + r * ldc, c + r * ldc + cols_padded, 0);
  }
  // i0 starts a panel of A (a multiple of mr, documented): panel index (i0 + it) / mr. The
  // last row and column tiles are edge tiles when the kernel has them (no padding computed).
  const bool edges = bytes ? kernel.edge_tile_u8s8 != nullptr : kernel.edge_tile != nullptr;
  for (int64_t p0 = 0; p0 < kg; p0 += k_block) {
    const int64_t pc = std::min(k_block, kg - p0);
    for (int64_t jt = 0; jt < cols_padded; jt += nr) {
      const int tile_cols = static_cast<int>(std::min<int64_t>(nr, b.cols - jt));
      for (int64_t it = 0; it < rows_padded; it += mr) {
        const int64_t a_panel = (i0 + it) / mr;
        const int tile_rows = static_cast<int>(std::min<int64_t>(mr, rows - it));
        const bool full = !edges || (tile_rows == mr && tile_cols == nr);
        if (bytes) {
          const auto* ap = static_cast<const uint8_t*>(a.panels()) + (a_panel * kg + p0) * mr * 4;
          const auto* bp = static_cast<const int8_t*>(b.panels) + (jt * kg + p0 * nr) * 4;
          const IgemmByteTileFn tile = full ? kernel.tile_u8s8 : kernel.edge_tile_u8s8(tile_rows, tile_cols);
          tile(pc, ap, bp, c + it * ldc + jt, ldc, p0 > 0);
        } else {
          const auto* ap = static_cast<const int16_t*>(a.panels()) + (a_panel * kg + p0) * mr * 2;
          const auto* bp = static_cast<const int16_t*>(b.panels) + (jt * kg + p0 * nr) * 2;
          const IgemmTileFn tile = full ? kernel.tile : kernel.edge_tile(tile_rows, tile_cols);
          tile(pc, ap, bp, c + it * ldc + jt, ldc, p0 > 0);
        }
      }
    }
  }
  // Zero points: - azp(i) colsum(j) - bzp rowsum(i) + K azp(i) bzp, modulo 2^32, by the
  // kernel's lanes (zero_point_terms.h).
  const uint32_t bzp = static_cast<uint32_t>(b.zero_point + ShiftB(bytes, b.is_signed));
  const uint32_t k = static_cast<uint32_t>(a.k());
  const auto* column_sums = reinterpret_cast<const uint32_t*>(b.column_sums);
  const AddZeroPointTermsFn add_terms =
      kernel.add_zero_point_terms != nullptr ? kernel.add_zero_point_terms : ScalarAddZeroPointTerms;
  for (int64_t r = 0; r < rows; ++r) {
    const uint32_t azp = static_cast<uint32_t>(a.zero_points()[i0 + r]);
    const uint32_t row_term = k * azp * bzp - bzp * static_cast<uint32_t>(a.row_sums()[i0 + r]);
    add_terms(reinterpret_cast<uint32_t*>(c + r * ldc), b.cols, row_term, azp, column_sums);
  }
}

void ScaleToFloat(const int32_t* acc, int64_t n, const float* scale, int64_t step, const float* bias, float* out) {
  // Four loops, so that each inner loop is a plain vectorisable map.
  if (step == 0) {
    const float s = scale[0];
    if (bias == nullptr) {
      for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(acc[j]) * s;
    } else {
      for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(acc[j]) * s + bias[j];
    }
  } else if (bias == nullptr) {
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(acc[j]) * scale[j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(acc[j]) * scale[j] + bias[j];
  }
}

void Requantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                bool is_signed, void* out) {
  static const RequantizeFn requantize = BestIgemmKernel().requantize;
  requantize(acc, n, bias, multiplier, step, zp, is_signed, out);
}

}  // namespace igemm
}  // namespace onnx_light
