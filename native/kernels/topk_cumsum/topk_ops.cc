// TopK: the k largest (or smallest) values of each lane along `axis`, with their indices.
// Ties keep the lower index first; NaN ranks above every number (as numpy sorts it last).
// Selection, not a full sort. For small k (UseBounded) the k best seen so far are kept
// and an element enters only when it ranks above the worst of them: up to kInsertionMax
// they are a list sorted best first (an entering element is inserted, the worst drops
// off), above that a bounded heap. On float, double and integer lanes the comparison with
// the worst runs over blocks of kScanBlock elements on vectors (a strided lane's block
// copied together first; not for 64-bit integers) and gives a bit per element that could
// enter; only those go through the list or heap (for random data about k ln(length / k) of
// a lane's elements), so a lane costs little more than one vector comparison per element
// (float16 and bfloat16 offer every element). Otherwise the lane is gathered and std::nth_element
// splits off the k best. Then only the k are ordered: best first for sorted=1, by index
// for sorted=0 (the order ONNX leaves open, made deterministic). The ranking is a strict
// total order (value, then index), so the selected set and its order do not depend on the
// method. Lanes are independent: each participant uses its own slice of scratch reserved
// before the region; LaneCost weighs a lane by its method for the parallel decision.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "native/core/allocator.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/topk_cumsum/lane_tuning.h"

namespace onnx_light {
namespace {

using TopKTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t, Float16, float,
                           double, BFloat16>;

// Elements per block of the prefilter (two cache lines of contiguous float: the bit mask of
// a block fits 32 bits).
constexpr int64_t kScanBlock = 32;
// Elements per gathered-element unit of work (LaneCost). Instructions per element over
// 512 lanes of 1000 random floats (callgrind, ONNX_LIGHT_MAX_ISA=avx2; counts are exact
// under load): 4.2 scanned (k = 5, candidates and list included), 112 gathered (k = 500),
// a ratio of 27. Taken as 16: the scan streams its lane once at memory speed, a cost the
// instruction count does not show. One by one (float16, bfloat16; before session 9 also
// the integers and strided lanes), 14-18 per element (k = 5), a ratio of 6, taken as 4.
// Scanned, per element (topk_profile): contiguous int8 2.7, uint8 2.7, int32 3.9, float
// 4.2, int64 11.0 (against 14 offered). Strided lanes (the same 512 as [64, 1000, 8],
// axis 1) copying each block together first: float 10.4 (18 offered), int32 10.0, int64
// 17.4 (14 offered: left unscanned). A ratio of 11, taken as 8 (strided loads cost more
// than they count).
constexpr int64_t kScannedPerGathered = 16;
constexpr int64_t kScannedStridedPerGathered = 8;
constexpr int64_t kOfferedPerGathered = 4;
// k up to which the k best are a sorted list (insertion moves at most k entries, all in one
// or two cache lines); a heap above.
constexpr int64_t kInsertionMax = 16;

// Bit l set when lane l of a comparison result (all ones or zero per lane) is set.
template <typename M>
uint32_t LaneBits(M m) {
  constexpr int kLanes = static_cast<int>(sizeof(M) / sizeof(m[0]));
#if defined(__SSE2__)
  if constexpr (kLanes == 16) return static_cast<uint32_t>(_mm_movemask_epi8(reinterpret_cast<__m128i>(m)));
  if constexpr (kLanes == 8) {  // 16-bit lanes: signed saturation keeps 0 and -1
    const __m128i bytes = _mm_packs_epi16(reinterpret_cast<__m128i>(m), _mm_setzero_si128());
    return static_cast<uint32_t>(_mm_movemask_epi8(bytes));
  }
  if constexpr (kLanes == 4) return static_cast<uint32_t>(_mm_movemask_ps(reinterpret_cast<__m128>(m)));
  if constexpr (kLanes == 2) return static_cast<uint32_t>(_mm_movemask_pd(reinterpret_cast<__m128d>(m)));
#endif
  uint32_t bits = 0;
  for (int l = 0; l < kLanes; ++l) bits |= static_cast<uint32_t>(m[l] != 0) << l;
  return bits;
}

// Bit i (i < kScanBlock) set when x[i] could displace `worst` (the worst of the k best):
// a superset of the elements that do (a NaN on either side passes: it fails x <= worst;
// an element equal to worst never enters, its index being later). On 16-byte generic
// vectors (gcc/clang vector_size: the baseline SIMD of every target, SSE2 or NEON, no ISA
// flags) of the lane's own type (integers compare exactly; worst is one of the lane's
// values). Most blocks hold no candidate: their one test is an OR of the comparisons.
template <bool kLargest, typename A>
inline __attribute__((always_inline)) uint32_t CandidateBits(const A* x, A worst) {
  typedef A V __attribute__((vector_size(16)));
  constexpr int kLanes = static_cast<int>(16 / sizeof(A));
  constexpr int kVectors = static_cast<int>(kScanBlock) / kLanes;
  static_assert(kScanBlock % kLanes == 0 && kScanBlock <= 32);
  const V w = V{} + worst;
  decltype(V{} == V{}) pass[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    V xv;
    std::memcpy(&xv, x + v * kLanes, sizeof(V));
    if constexpr (kLargest) {
      pass[v] = ~(xv <= w);
    } else {
      pass[v] = ~(xv >= w);
    }
  }
  auto any = pass[0];
  for (int v = 1; v < kVectors; ++v) any |= pass[v];
  if (LaneBits(any) == 0) return 0;
  uint32_t bits = 0;
  for (int v = 0; v < kVectors; ++v) bits |= LaneBits(pass[v]) << (v * kLanes);
  return bits;
}

template <typename A>
bool Greater(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return b < a;
}

// Contiguous lanes of these types take the vector prefilter (float16 and bfloat16, stored
// as classes, are offered element by element); strided lanes too, except 64-bit integers:
// the baseline (SSE2) has no 64-bit compare, and its emulation after the copy costs more
// than it saves (callgrind in kScannedStridedPerGathered's note).
template <typename T>
constexpr bool kScanned = std::is_arithmetic_v<T>;
template <typename T>
constexpr bool kWideInteger = std::is_integral_v<T> && sizeof(T) == 8;
template <typename T>
constexpr bool kScannedStrided = kScanned<T> && !kWideInteger<T>;

// Offers each element of a lane from `begin` on, in index order: offer(i) for every i, or
// (kScanned types) only for the elements CandidateBits passes against the current worst(),
// re-read before each block. A strided lane's block (elements inner apart) is copied
// together first.
template <bool kLargest, bool kStrided, typename T, typename Worst, typename Offer>
void ScanBlocks(const T* lane, int64_t inner, int64_t* i, int64_t length, Worst& worst, Offer& offer) {
  T block[kScanBlock];
  for (; *i + kScanBlock <= length; *i += kScanBlock) {
    const T* at = lane + *i;
    if constexpr (kStrided) {
      for (int64_t e = 0; e < kScanBlock; ++e) block[e] = lane[(*i + e) * inner];
      at = block;
    }
    for (uint32_t bits = CandidateBits<kLargest>(at, static_cast<T>(worst())); bits != 0; bits &= bits - 1) {
      offer(*i + __builtin_ctz(bits));
    }
  }
}

template <bool kStrided, typename T, typename Worst, typename Offer>
void ScanBlocks(const T* lane, int64_t inner, int64_t* i, int64_t length, bool largest, Worst& worst, Offer& offer) {
  if (largest) {
    ScanBlocks<true, kStrided>(lane, inner, i, length, worst, offer);
  } else {
    ScanBlocks<false, kStrided>(lane, inner, i, length, worst, offer);
  }
}

template <typename T, typename Worst, typename Offer>
void ScanLane(const T* lane, int64_t inner, int64_t begin, int64_t length, bool largest, Worst worst, Offer offer) {
  int64_t i = begin;
  if constexpr (kScanned<T>) {
    if (inner == 1) ScanBlocks<false>(lane, inner, &i, length, largest, worst, offer);
  }
  if constexpr (kScannedStrided<T>) {
    if (inner != 1) ScanBlocks<true>(lane, inner, &i, length, largest, worst, offer);
  }
  for (; i < length; ++i) offer(i);
}

class TopKKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", -1));
    k_from_input_ = info.opset_version() >= 10;
    if (!k_from_input_) {
      OL_ASSIGN_OR_RETURN(k_attribute_, info.GetInt("k"));
    }
    OL_ASSIGN_OR_RETURN(int64_t largest, info.GetInt("largest", 1));
    largest_ = largest != 0;
    OL_ASSIGN_OR_RETURN(int64_t sorted, info.GetInt("sorted", 1));
    sorted_ = sorted != 0;
    OL_RETURN_IF_ERROR(tuning_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& shape = x->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(axis_, shape, ctx.Where()));
    int64_t k = k_attribute_;
    if (k_from_input_) {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ReadInt64Input(ctx, 1, "K"));
      if (ks.size() != 1) return InvalidArgument(ctx.Where(), ": K must hold exactly one value, got ", ks.size());
      k = ks[0];
    }
    const int64_t outer = shape.SizeTo(axis), length = shape[axis], inner = shape.SizeFrom(axis + 1);
    if (k < 0 || k > length) {
      return InvalidArgument(ctx.Where(), ": k = ", k, " is outside [0, ", length, "] for axis ", axis,
                             " of input shape ", shape.ToString());
    }
    std::vector<int64_t> dims = shape.dims();
    dims[axis] = k;
    OL_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(0, x->dtype(), Shape(dims)));
    int64_t* indices = nullptr;
    if (ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(1, DataType::kInt64, Shape(dims)));
      indices = idx->data<int64_t>();
    }
    if (outer * inner * k == 0) return Status::Ok();
    return DispatchType(TopKTypes{}, x->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Numeric<T>::Acc;
      using Entry = std::pair<A, int64_t>;
      // Per-participant scratch: the helper's decision and block, ParallelForWithParticipant.
      const bool bounded = UseBounded(k, length);
      const int64_t cost = LaneCost(bounded, PerGathered<T>(inner == 1), length);
      const bool parallel = !tuning_.Serial(outer * inner, cost);
      const ParallelPlan plan{"topk.lanes", tuning_.UnitsPerBlock(cost)};
      const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
      const int64_t per_lane = bounded ? k : length;
      const size_t bytes = static_cast<size_t>(participants) * static_cast<size_t>(per_lane) * sizeof(Entry);
      ScratchArena arena(ctx.allocator(), bytes + Allocator::kAlignment);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Entry * scratch, arena.AllocateArray<Entry>(static_cast<size_t>(participants) * per_lane));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
      const T* in = x->data<T>();
      T* out = values->data<T>();
      const bool largest = largest_, sorted = sorted_;
      // a's value ranks strictly before b's.
      auto better = [largest](A a, A b) { return largest ? Greater(a, b) : Greater(b, a); };
      // a ranks before b: strictly better value, or an equivalent value at a lower index.
      auto before = [&](const Entry& a, const Entry& b) {
        if (better(a.first, b.first)) return true;
        return !better(b.first, a.first) && a.second < b.second;
      };
      auto by_index = [](const Entry& a, const Entry& b) { return a.second < b.second; };
      auto lanes = [&](int participant, int64_t begin, int64_t end) {
        Entry* entries = scratch + static_cast<int64_t>(participant) * per_lane;
        for (int64_t lane = begin; lane < end; ++lane) {
          const T* x_lane = in + (lane / inner) * length * inner + lane % inner;
          const int64_t out_base = (lane / inner) * k * inner + lane % inner;
          // Indices arrive in increasing order, so an element enters only with a strictly
          // better value than the worst kept (an equal value never displaces an earlier one).
          auto value = [&](int64_t i) { return Numeric<T>::Load(x_lane[i * inner]); };
          if (bounded && k <= kInsertionMax) {
            // entries[0, k): best first. The first k inserted, then each better one.
            auto insert = [&](int64_t last, A v, int64_t i) {
              int64_t p = last;
              for (; p > 0 && better(v, entries[p - 1].first); --p) entries[p] = entries[p - 1];
              entries[p] = {v, i};
            };
            for (int64_t i = 0; i < k; ++i) insert(i, value(i), i);
            ScanLane(
                x_lane, inner, k, length, largest, [&] { return entries[k - 1].first; },
                [&](int64_t i) {
                  const A v = value(i);
                  if (better(v, entries[k - 1].first)) insert(k - 1, v, i);
                });
            if (!sorted) std::sort(entries, entries + k, by_index);
          } else if (bounded) {
            // Max-heap under `before`: the front is the worst of the k best so far.
            for (int64_t i = 0; i < k; ++i) entries[i] = {value(i), i};
            std::make_heap(entries, entries + k, before);
            ScanLane(
                x_lane, inner, k, length, largest, [&] { return entries[0].first; },
                [&](int64_t i) {
                  const A v = value(i);
                  if (!better(v, entries[0].first)) return;
                  std::pop_heap(entries, entries + k, before);
                  entries[k - 1] = {v, i};
                  std::push_heap(entries, entries + k, before);
                });
            if (sorted) {
              std::sort_heap(entries, entries + k, before);
            } else {
              std::sort(entries, entries + k, by_index);
            }
          } else {
            for (int64_t i = 0; i < length; ++i) entries[i] = {value(i), i};
            if (k < length) std::nth_element(entries, entries + (k - 1), entries + length, before);
            if (sorted) {
              std::sort(entries, entries + k, before);
            } else {
              std::sort(entries, entries + k, by_index);
            }
          }
          for (int64_t j = 0; j < k; ++j) {
            out[out_base + j * inner] = Numeric<T>::Store(entries[j].first);
            if (indices) indices[out_base + j * inner] = entries[j].second;
          }
        }
        return Status::Ok();
      };
      if (!parallel) return lanes(0, 0, outer * inner);
      return ParallelForWithParticipant(ctx.parallel(), outer * inner, plan, lanes);
    });
  }

 private:
  // The k best kept (sorted list or heap) for small k: about one comparison per element
  // plus the few that enter; gather + nth_element above.
  static bool UseBounded(int64_t k, int64_t length) { return k <= 64 && k * 8 <= length; }
  // A lane's work for the parallel decision and block, in the unit of parallel.minimum_elements:
  // an element gathered and partially sorted. A bounded lane compares each element once with
  // the worst kept; scanned on vectors it costs far less (see kScannedPerGathered).
  static int64_t LaneCost(bool bounded, int64_t per_gathered, int64_t length) {
    if (!bounded) return length;
    return std::max<int64_t>(1, length / per_gathered);
  }
  // Elements of a bounded lane per gathered element: 64-bit integers weigh as offered ones
  // even when scanned (their emulated compare: 11 instructions per element, against 14).
  template <typename T>
  static int64_t PerGathered(bool contiguous) {
    if (kWideInteger<T> || !kScanned<T> || (!contiguous && !kScannedStrided<T>)) return kOfferedPerGathered;
    return contiguous ? kScannedPerGathered : kScannedStridedPerGathered;
  }

  int64_t axis_ = -1, k_attribute_ = 0;
  bool k_from_input_ = true, largest_ = true, sorted_ = true;
  ThresholdedParallel tuning_;
};

std::vector<DataType> TopKTypesFor(int opset) {
  std::vector<DataType> t = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  if (opset >= 11) {
    t.insert(t.end(), {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64, DataType::kInt8,
                       DataType::kInt16, DataType::kInt32, DataType::kInt64});
  }
  if (opset >= 24) t.push_back(DataType::kBFloat16);
  return t;
}

}  // namespace

OL_REGISTER_KERNELS(topk) {
  Kernel("TopK")
      .SinceVersions({1, 10, 11, 24})
      .TypesAt(TopKTypesFor)
      .Tuning(LaneTuningParams(kTopKMinimum, kTopKBlock))
      .Factory(MakeKernel<TopKKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
