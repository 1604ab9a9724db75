// TopK: the k largest (or smallest) values of each lane along `axis`, with their indices.
// Ties keep the lower index first; NaN ranks above every number (as numpy sorts it last).
// Selection, not a full sort: for small k a bounded heap of the k best seen so far (one
// comparison with the worst of them rejects most elements, nothing is gathered; on
// contiguous float/double lanes that comparison runs over blocks of kScanBlock elements at
// once, on vectors, and only a block holding a candidate
// goes through the heap element by element), else
// the lane is gathered and std::nth_element splits off the k best; then only those k are
// sorted: best first for sorted=1, by index for sorted=0 (the order ONNX leaves open,
// made deterministic). The ranking is a strict total order (value, then index), so the
// selected set and its order do not depend on the method. Lanes are independent: each
// participant uses its own slice of scratch reserved before the region.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "native/core/allocator.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/topk_cumsum/lane_tuning.h"

namespace onnx_light {
namespace {

using TopKTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t, Float16, float,
                           double, BFloat16>;

// Elements per block of the heap path's prefilter on contiguous lanes.
constexpr int64_t kScanBlock = 16;

// Whether some x[i] (i < kScanBlock) could displace `worst` (the worst of the k best):
// a superset of the candidates (a NaN on either side passes: it fails x <= worst). On
// 16-byte generic vectors (gcc/clang vector_size: the baseline SIMD of every target, SSE2
// or NEON, no ISA flags), since gcc leaves the scalar loop unvectorised once it is inlined.
template <typename A>
bool BlockMayDisplace(const A* x, A worst, bool largest) {
  typedef A V __attribute__((vector_size(16)));
  constexpr int kLanes = static_cast<int>(16 / sizeof(A));
  static_assert(kScanBlock % kLanes == 0);
  const V w = V{} + worst;
  auto within = V{} == V{};  // per lane: every x so far ranks at or below worst
  for (int v = 0; v < static_cast<int>(kScanBlock) / kLanes; ++v) {
    V xv;
    std::memcpy(&xv, x + v * kLanes, sizeof(V));
    within &= largest ? (xv <= w) : (xv >= w);
  }
  for (int l = 0; l < kLanes; ++l) {
    if (!within[l]) return true;
  }
  return false;
}

template <typename A>
bool Greater(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return b < a;
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
      const bool parallel = !tuning_.Serial(outer * inner, length);
      const ParallelPlan plan{"topk.lanes", tuning_.UnitsPerBlock(length)};
      const int participants = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
      const bool heap = UseHeap(k, length);
      const int64_t per_lane = heap ? k : length;
      const size_t bytes = static_cast<size_t>(participants) * static_cast<size_t>(per_lane) * sizeof(Entry);
      ScratchArena arena(ctx.allocator(), bytes + Allocator::kAlignment);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Entry * scratch, arena.AllocateArray<Entry>(static_cast<size_t>(participants) * per_lane));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
      const T* in = x->data<T>();
      T* out = values->data<T>();
      const bool largest = largest_, sorted = sorted_;
      // a ranks before b: strictly better value, or an equivalent value at a lower index.
      auto before = [largest](const Entry& a, const Entry& b) {
        const bool strictly = largest ? Greater(a.first, b.first) : Greater(b.first, a.first);
        if (strictly) return true;
        const bool equivalent = largest ? !Greater(b.first, a.first) : !Greater(a.first, b.first);
        return equivalent && a.second < b.second;
      };
      auto by_index = [](const Entry& a, const Entry& b) { return a.second < b.second; };
      auto lanes = [&](int participant, int64_t begin, int64_t end) {
        Entry* entries = scratch + static_cast<int64_t>(participant) * per_lane;
        for (int64_t lane = begin; lane < end; ++lane) {
          const int64_t in_base = (lane / inner) * length * inner + lane % inner;
          const int64_t out_base = (lane / inner) * k * inner + lane % inner;
          if (heap) {
            // Max-heap under `before`: the front is the worst of the k best so far. Indices
            // arrive in increasing order, so an equal value never displaces an earlier one.
            for (int64_t i = 0; i < k; ++i) entries[i] = {Numeric<T>::Load(in[in_base + i * inner]), i};
            std::make_heap(entries, entries + k, before);
            auto offer = [&](int64_t i) {
              const Entry e{Numeric<T>::Load(in[in_base + i * inner]), i};
              if (!before(e, entries[0])) return;
              std::pop_heap(entries, entries + k, before);
              entries[k - 1] = e;
              std::push_heap(entries, entries + k, before);
            };
            int64_t i = k;
            if constexpr (std::is_floating_point_v<T>) {
              if (inner == 1) {  // blocks that cannot displace the worst are skipped whole
                for (; i + kScanBlock <= length; i += kScanBlock) {
                  if (!BlockMayDisplace(in + in_base + i, entries[0].first, largest)) continue;
                  for (int64_t j = i; j < i + kScanBlock; ++j) offer(j);
                }
              }
            }
            for (; i < length; ++i) offer(i);
            if (sorted) {
              std::sort_heap(entries, entries + k, before);
            } else {
              std::sort(entries, entries + k, by_index);
            }
          } else {
            for (int64_t i = 0; i < length; ++i) entries[i] = {Numeric<T>::Load(in[in_base + i * inner]), i};
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
  // The bounded heap for small k (its work is about length comparisons plus
  // k log k per displacement); gather + nth_element above.
  static bool UseHeap(int64_t k, int64_t length) { return k <= 64 && k * 8 <= length; }

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
      .Tuning(LaneTuningParams(kTopKMinimum))
      .Factory(MakeKernel<TopKKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
