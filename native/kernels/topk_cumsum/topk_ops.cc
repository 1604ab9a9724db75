// TopK: the k largest (or smallest) values of each lane along `axis`, with their indices.
// Ties keep the lower index first; NaN ranks above every number (as numpy sorts it last).
// Output is always sorted, which sorted=0 permits. Lanes are independent: each
// participant gathers a lane into its own slice of scratch reserved before the region.
#include <algorithm>
#include <cmath>
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
      const size_t bytes = static_cast<size_t>(participants) * static_cast<size_t>(length) * sizeof(Entry);
      ScratchArena arena(ctx.allocator(), bytes + Allocator::kAlignment);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Entry * scratch, arena.AllocateArray<Entry>(static_cast<size_t>(participants) * length));
      ctx.RecordScratch(static_cast<int64_t>(bytes));
      const T* in = x->data<T>();
      T* out = values->data<T>();
      const bool largest = largest_;
      auto before = [largest](const Entry& a, const Entry& b) {
        const bool strictly = largest ? Greater(a.first, b.first) : Greater(b.first, a.first);
        if (strictly) return true;
        const bool equivalent = largest ? !Greater(b.first, a.first) : !Greater(a.first, b.first);
        return equivalent && a.second < b.second;
      };
      auto lanes = [&](int participant, int64_t begin, int64_t end) {
        Entry* entries = scratch + static_cast<int64_t>(participant) * length;
        for (int64_t lane = begin; lane < end; ++lane) {
          const int64_t in_base = (lane / inner) * length * inner + lane % inner;
          const int64_t out_base = (lane / inner) * k * inner + lane % inner;
          for (int64_t i = 0; i < length; ++i) entries[i] = {Numeric<T>::Load(in[in_base + i * inner]), i};
          std::partial_sort(entries, entries + k, entries + length, before);
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
  int64_t axis_ = -1, k_attribute_ = 0;
  bool k_from_input_ = true, largest_ = true;
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
