#include "native/kernels/gemm/typed_gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

namespace onnx_light {
namespace gemm {
namespace {

// Arithmetic type of the simple path: wrapping unsigned for integers, double for double.
template <typename T, bool = std::is_integral_v<T>>
struct AccumulatorOf {
  using type = T;
};
template <typename T>
struct AccumulatorOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Accumulator = typename AccumulatorOf<T>::type;

template <typename T>
T Combine(Accumulator<T> product, T c, double alpha, double beta) {
  if constexpr (std::is_integral_v<T>) {
    if (alpha == 1.0 && (beta == 0.0 || beta == 1.0)) {
      return static_cast<T>(beta == 0.0 ? product : product + static_cast<Accumulator<T>>(c));
    }
    return static_cast<T>(alpha * static_cast<double>(static_cast<T>(product)) + (beta == 0.0 ? 0.0 : beta * c));
  } else {
    return beta == 0.0 ? static_cast<T>(alpha * product) : static_cast<T>(alpha * product + beta * c);
  }
}

template <typename T>
Status SimpleGemm(const ParallelContext& parallel, const GemmTuning& tuning, const TypedGemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int64_t a_row = g.trans_a ? 1 : g.lda, a_col = g.trans_a ? g.lda : 1;
  const int64_t b_row = g.trans_b ? 1 : g.ldb, b_col = g.trans_b ? g.ldb : 1;
  const auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        Accumulator<T> sum = 0;
        for (int64_t kk = 0; kk < g.k; ++kk) {
          sum += static_cast<Accumulator<T>>(a[i * a_row + kk * a_col]) *
                 static_cast<Accumulator<T>>(b[kk * b_row + j * b_col]);
        }
        T& out = c[i * g.ldc + j];
        out = Combine<T>(sum, g.beta == 0.0 ? T{} : out, g.alpha, g.beta);
      }
    }
    return Status::Ok();
  };
  if (GemmWorkUnits(g.m, g.n, g.k) < tuning.parallel_minimum_tasks) return rows(0, g.m);
  const int64_t row_macs = std::max<int64_t>(1, g.n * g.k);
  const int64_t grain = std::max<int64_t>(1, kMacsPerWorkUnit / row_macs);
  return ParallelFor(parallel, g.m, ParallelPlan{"gemm.simple_rows", grain}, rows);
}

template <typename Half>
Status WidenedGemm(const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning,
                   const TypedGemmArgs& g, GemmStats* stats) {
  // Elements spanned by a strided matrix (the last row may end before its stride).
  const auto span = [](int64_t rows, int64_t cols, int64_t ld) { return rows == 0 ? 0 : (rows - 1) * ld + cols; };
  const int64_t a_count = g.trans_a ? span(g.k, g.m, g.lda) : span(g.m, g.k, g.lda);
  const int64_t b_count = g.trans_b ? span(g.n, g.k, g.ldb) : span(g.k, g.n, g.ldb);
  const int64_t c_count = span(g.m, g.n, g.ldc);
  ScratchArena arena(allocator, sizeof(float) * (a_count + b_count + c_count) + 3 * Allocator::kAlignment);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(float* a, arena.AllocateArray<float>(a_count));
  OL_ASSIGN_OR_RETURN(float* b, arena.AllocateArray<float>(b_count));
  OL_ASSIGN_OR_RETURN(float* c, arena.AllocateArray<float>(c_count));
  const auto widen = [](const void* src, int64_t count, float* dst) {
    const Half* s = static_cast<const Half*>(src);
    for (int64_t i = 0; i < count; ++i) dst[i] = s[i].ToFloat();
  };
  widen(g.a, a_count, a);
  widen(g.b, b_count, b);
  if (g.beta != 0.0) widen(g.c, c_count, c);
  OL_RETURN_IF_ERROR(Sgemm(parallel, allocator, tuning, g.trans_a, g.trans_b, g.m, g.n, g.k,
                           static_cast<float>(g.alpha), a, g.lda, b, g.ldb, static_cast<float>(g.beta), c, g.ldc,
                           stats));
  Half* out = static_cast<Half*>(g.c);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) out[i * g.ldc + j] = Half::FromFloat(c[i * g.ldc + j]);
  }
  if (stats != nullptr) stats->scratch_bytes += static_cast<int64_t>(arena.capacity());
  return Status::Ok();
}

}  // namespace

bool TypedGemmSupports(DataType type) { return HasType(TypedGemmTypes{}, type); }

Status TypedGemm(DataType type, const ParallelContext& parallel, Allocator* allocator, const GemmTuning& tuning,
                 const TypedGemmArgs& g, GemmStats* stats) {
  if (stats != nullptr) *stats = GemmStats{};
  if (g.m < 0 || g.n < 0 || g.k < 0) {
    return InvalidArgument(parallel.kernel, " GEMM: negative shape M=", g.m, " N=", g.n, " K=", g.k);
  }
  if (g.m == 0 || g.n == 0) return Status::Ok();
  return DispatchType(TypedGemmTypes{}, type, std::string(parallel.kernel) + " GEMM", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      return Sgemm(parallel, allocator, tuning, g.trans_a, g.trans_b, g.m, g.n, g.k, static_cast<float>(g.alpha),
                   static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                   static_cast<float>(g.beta), static_cast<float*>(g.c), g.ldc, stats);
    } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return WidenedGemm<T>(parallel, allocator, tuning, g, stats);
    } else {
      return SimpleGemm<T>(parallel, tuning, g);
    }
  });
}

}  // namespace gemm
}  // namespace onnx_light
