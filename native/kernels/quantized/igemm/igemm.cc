#include "native/kernels/quantized/igemm/igemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "native/core/cpu_features.h"
#include "native/kernels/quantized/igemm/igemm_kernel.h"

namespace onnx_light {
namespace igemm {
namespace {

// Blocking: a task is up to kRowBlock rows x kColumnBlock columns of C; K runs in blocks of
// kKPairBlock pairs (a B panel block of 32 columns is 32 KiB).
constexpr int64_t kRowBlock = 96;
constexpr int64_t kColumnBlock = 256;
constexpr int64_t kKPairBlock = 256;
constexpr int64_t kMacsPerUnit = int64_t{1} << 18;

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

// Packs rows [i0, i0 + rows) of A, all of K, into panels of mr rows (zero padded), and
// their row sums.
void PackA(const IgemmA& a, int64_t i0, int64_t rows, int64_t k, int mr, int16_t* dst, int32_t* row_sums) {
  const int64_t kp = (k + 1) / 2;
  for (int64_t t0 = 0; t0 < rows; t0 += mr) {
    int16_t* panel = dst + t0 * kp * 2;
    for (int i = 0; i < mr; ++i) {
      const int64_t r = t0 + i;
      int32_t sum = 0;
      if (r < rows) {
        const int64_t e0 = (i0 + r) * a.matrix.row_stride;
        if (a.matrix.is_signed) {
          const int8_t* src = static_cast<const int8_t*>(a.matrix.data) + e0;
          for (int64_t kk = 0; kk < k; ++kk) {
            panel[((kk >> 1) * mr + i) * 2 + (kk & 1)] = src[kk];
            sum += src[kk];
          }
        } else {
          const uint8_t* src = static_cast<const uint8_t*>(a.matrix.data) + e0;
          for (int64_t kk = 0; kk < k; ++kk) {
            panel[((kk >> 1) * mr + i) * 2 + (kk & 1)] = src[kk];
            sum += src[kk];
          }
        }
        if (k & 1) panel[((k >> 1) * mr + i) * 2 + 1] = 0;
      } else {
        for (int64_t p = 0; p < kp; ++p) panel[(p * mr + i) * 2] = panel[(p * mr + i) * 2 + 1] = 0;
      }
      row_sums[r] = sum;
    }
  }
}

// As PackA for byte panels (K in quads): an int8 A is shifted by +128 into uint8; the row
// sums are of the stored (shifted) values.
void PackAQuads(const IgemmA& a, int64_t i0, int64_t rows, int64_t k, int mr, uint8_t* dst, int32_t* row_sums) {
  const int64_t kq = (k + 3) / 4;
  const uint8_t flip = a.matrix.is_signed ? 0x80 : 0x00;
  for (int64_t t0 = 0; t0 < rows; t0 += mr) {
    uint8_t* panel = dst + t0 * kq * 4;
    for (int i = 0; i < mr; ++i) {
      const int64_t r = t0 + i;
      int32_t sum = 0;
      if (r < rows) {
        const uint8_t* src = static_cast<const uint8_t*>(a.matrix.data) + (i0 + r) * a.matrix.row_stride;
        for (int64_t kk = 0; kk < k; ++kk) {
          const uint8_t v = static_cast<uint8_t>(src[kk] ^ flip);
          panel[((kk >> 2) * mr + i) * 4 + (kk & 3)] = v;
          sum += v;
        }
        for (int64_t kk = k; kk < kq * 4; ++kk) panel[((kk >> 2) * mr + i) * 4 + (kk & 3)] = 0;
      } else {
        for (int64_t kk = 0; kk < kq * 4; ++kk) panel[((kk >> 2) * mr + i) * 4 + (kk & 3)] = 0;
      }
      row_sums[r] = sum;
    }
  }
}

}  // namespace

// The NEON kernel's requantiser (scalar code, baseline flags).
void ScalarRequantizeForNeon(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step,
                             int32_t zp, bool is_signed, void* out) {
  ScalarRequantize(acc, n, bias, multiplier, step, zp, is_signed, out);
}

const IgemmKernel& ScalarKernel() {
  static const IgemmKernel kernel{"scalar", 4, 8, ScalarTile<4, 8>, ScalarRequantize, nullptr};
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
  return std::shared_ptr<const IgemmPackedB>(std::move(packed));
}

Status IgemmCompute(const ParallelContext& parallel, Allocator* allocator, int64_t parallel_minimum_units, int64_t m,
                    const IgemmA& a, const IgemmPackedB& b, IgemmSink sink, int64_t* scratch_bytes) {
  const int64_t n = b.n(), k = b.k();
  if (m <= 0 || n <= 0) return Status::Ok();
  const IgemmKernel& kernel = b.kernel();
  const int mr = kernel.mr, nr = kernel.nr;
  // K in groups: pairs of 16-bit values, or quads of bytes (b.bytes()).
  const bool bytes = b.bytes();
  const int group = bytes ? 4 : 2;
  const int64_t kp = (k + group - 1) / group, k_block = bytes ? kKPairBlock / 2 : kKPairBlock;
  // A byte-packed int8 A is stored shifted by +128: its zero point shifts alike.
  const int32_t a_shift = bytes && a.matrix.is_signed ? 128 : 0;
  const int64_t row_block = RoundUp(std::min<int64_t>(kRowBlock, m), mr);
  const int64_t column_block = RoundUp(std::min<int64_t>(kColumnBlock, n), nr);
  const int64_t row_tasks = (m + row_block - 1) / row_block, column_tasks = (n + column_block - 1) / column_block;
  const int64_t tasks = row_tasks * column_tasks;
  // Work units, saturating.
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(std::max<int64_t>(k, 1));
  const bool serial = macs / static_cast<double>(kMacsPerUnit) < static_cast<double>(parallel_minimum_units);
  const ParallelPlan plan{"igemm.blocks", 1};
  const int participants = serial ? 1 : AvailableParticipants(parallel, plan);
  // Per participant: packed A (row_block x K, padded, as int16 storage), row sums, the int32 block.
  const size_t a_bytes = sizeof(int16_t) * static_cast<size_t>(row_block * std::max<int64_t>(kp, 1) * 2);
  const size_t c_bytes = sizeof(int32_t) * static_cast<size_t>(row_block * column_block);
  const size_t per = a_bytes + c_bytes + sizeof(int32_t) * static_cast<size_t>(row_block) + 3 * 64;
  ScratchArena arena(allocator, per * static_cast<size_t>(participants));
  OL_RETURN_IF_ERROR(arena.status());
  struct Scratch {
    int16_t* a;
    int32_t* row_sums;
    int32_t* c;
  };
  std::vector<Scratch> scratch(static_cast<size_t>(participants));
  for (auto& s : scratch) {
    OL_ASSIGN_OR_RETURN(s.a,
                        arena.AllocateArray<int16_t>(static_cast<size_t>(row_block * std::max<int64_t>(kp, 1) * 2)));
    OL_ASSIGN_OR_RETURN(s.row_sums, arena.AllocateArray<int32_t>(static_cast<size_t>(row_block)));
    OL_ASSIGN_OR_RETURN(s.c, arena.AllocateArray<int32_t>(static_cast<size_t>(row_block * column_block)));
  }
  if (scratch_bytes != nullptr) *scratch_bytes = static_cast<int64_t>(arena.capacity());
  const auto& column_sums = b.column_sums();
  const auto& bzp = b.zero_points();
  const auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
    const Scratch& s = scratch[static_cast<size_t>(participant)];
    int64_t packed_row_task = -1;
    for (int64_t task = begin; task < end; ++task) {
      // Column tasks of one row block are consecutive: A is packed once per row block run.
      const int64_t rt = task / column_tasks, ct = task % column_tasks;
      const int64_t i0 = rt * row_block, rows = std::min(row_block, m - i0);
      const int64_t j0 = ct * column_block, cols = std::min(column_block, n - j0);
      const int64_t rows_padded = RoundUp(rows, mr), cols_padded = RoundUp(cols, nr);
      if (packed_row_task != rt) {
        if (bytes) {
          PackAQuads(a, i0, rows, k, mr, reinterpret_cast<uint8_t*>(s.a), s.row_sums);
        } else {
          PackA(a, i0, rows, k, mr, s.a, s.row_sums);
        }
        packed_row_task = rt;
      }
      const int64_t ldc = cols_padded;
      if (kp == 0) std::fill(s.c, s.c + rows_padded * ldc, 0);
      for (int64_t p0 = 0; p0 < kp; p0 += k_block) {
        const int64_t pc = std::min(k_block, kp - p0);
        for (int64_t jt = 0; jt < cols_padded; jt += nr) {
          const int64_t panel = (j0 + jt) / nr;
          for (int64_t it = 0; it < rows_padded; it += mr) {
            if (bytes) {
              const uint8_t* ap = reinterpret_cast<const uint8_t*>(s.a) + (it * kp + p0 * mr) * 4;
              kernel.tile_u8s8(pc, ap, b.byte_panel(panel) + p0 * nr * 4, s.c + it * ldc + jt, ldc, p0 > 0);
            } else {
              kernel.tile(pc, s.a + (it * kp + p0 * mr) * 2, b.panel(panel) + p0 * nr * 2, s.c + it * ldc + jt, ldc,
                          p0 > 0);
            }
          }
        }
      }
      // Zero points: - azp(i) colsum(j) - bzp(j) rowsum(i) + K azp(i) bzp(j), modulo 2^32.
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t zp =
            a.zero_points == nullptr ? 0 : a.zero_points[a.zero_point_count == 1 ? 0 : (i0 + r) % a.zero_point_count];
        const uint32_t azp = static_cast<uint32_t>(zp + a_shift);
        const uint32_t row_sum = static_cast<uint32_t>(s.row_sums[r]);
        const uint32_t k_azp = static_cast<uint32_t>(k) * azp;
        uint32_t* c = reinterpret_cast<uint32_t*>(s.c + r * ldc);
        for (int64_t cc = 0; cc < cols; ++cc) {
          const uint32_t z = static_cast<uint32_t>(bzp[j0 + cc]);
          c[cc] += k_azp * z - azp * static_cast<uint32_t>(column_sums[j0 + cc]) - z * row_sum;
        }
      }
      sink(i0, static_cast<int>(rows), j0, static_cast<int>(cols), s.c, ldc);
    }
    return Status::Ok();
  };
  if (serial || participants <= 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(parallel, tasks, ParallelPlan{"igemm.blocks", 1, participants}, run);
}

void Requantize(const int32_t* acc, int64_t n, int32_t bias, const float* multiplier, int64_t step, int32_t zp,
                bool is_signed, void* out) {
  static const RequantizeFn requantize = BestIgemmKernel().requantize;
  requantize(acc, n, bias, multiplier, step, zp, is_signed, out);
}

}  // namespace igemm
}  // namespace onnx_light
