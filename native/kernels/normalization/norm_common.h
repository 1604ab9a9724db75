// Shared pieces of the normalization family: its tuning schema, mean/variance of a
// contiguous block, and per-channel or broadcast parameters widened into scratch before
// any region starts (workers never allocate).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// Read by a ThresholdedParallel (Init); a unit is an item, costing its input elements.
std::vector<ParamSpec> NormTuningParams(int64_t minimum_elements);

// The family's element types, bfloat16 joining at the versions that added it.
using NormFloats = TypeList<Float16, float, double>;
using NormFloatsBf = decltype(NormFloats{} + TypeList<BFloat16>{});

// Portable parallel.minimum_elements defaults: the serial run must last about 100 us
// (about three times the ~30 us, 100k-cycle cost of opening a region). Serial costs per
// element from benchmarks/reduce_norm.
inline constexpr int64_t kStatisticsNormMinimum = int64_t{1} << 16;  // mean/var + apply: ~0.9-1.3 ns/element
inline constexpr int64_t kAffineNormMinimum = int64_t{1} << 18;      // BatchNorm inference: ~0.31 ns/element

// Runs fn(item) for items [0, items), each touching `item_elements` input elements
// (ThresholdedParallel: serially below parallel.minimum_elements, else blocks of items).
template <typename F>
Status ForEachItem(const KernelContext& ctx, const ThresholdedParallel& tuning, const char* label, int64_t items,
                   int64_t item_elements, F&& fn) {
  return tuning.Run(ctx.parallel(), label, items, item_elements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

// Population mean and variance of x[0, n) in A, two passes (stable for large means).
template <typename A, typename T>
void MeanVariance(const T* x, int64_t n, A* mean, A* variance) {
  A sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<A>(Numeric<T>::Load(x[i]));
  const A m = n > 0 ? sum / static_cast<A>(n) : A(0);
  A squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    const A d = static_cast<A>(Numeric<T>::Load(x[i])) - m;
    squares += d * d;
  }
  *mean = m;
  *variance = n > 0 ? squares / static_cast<A>(n) : A(0);
}

// `param` (any float type) broadcast unidirectionally to `target` (right-aligned, each
// dim equal or 1), written as A. InvalidArgument naming `where`, `name` and both shapes
// when it does not broadcast.
template <typename A>
Status BroadcastParam(const Tensor& param, const Shape& target, const std::string& where, const char* name, A* out) {
  const Shape& src = param.shape();
  const int offset = target.rank() - src.rank();
  bool ok = offset >= 0;
  for (int d = 0; ok && d < src.rank(); ++d) ok = src[d] == 1 || src[d] == target[d + offset];
  if (!ok) {
    return InvalidArgument(where, ": ", name, " of shape ", src.ToString(), " does not broadcast to ",
                           target.ToString());
  }
  return DispatchType(FloatTypes{}, param.dtype(), where, [&](auto tag) {
    using P = typename decltype(tag)::type;
    const P* p = param.data<P>();
    std::vector<int64_t> index(target.rank(), 0);
    for (int64_t i = 0, count = target.num_elements(); i < count; ++i) {
      int64_t s = 0;
      for (int d = 0; d < src.rank(); ++d) s = s * src[d] + (src[d] == 1 ? 0 : index[d + offset]);
      out[i] = static_cast<A>(Numeric<P>::Load(p[s]));
      for (int d = target.rank() - 1; d >= 0; --d) {
        if (++index[d] < target[d]) break;
        index[d] = 0;
      }
    }
    return Status::Ok();
  });
}

// Scratch for a kernel's widened parameters (up to kMaxSlices of them), reserved on the
// session thread before any region starts and recorded as the node's scratch.
class ParamScratch {
 public:
  static constexpr int kMaxSlices = 6;
  ParamScratch(KernelContext& ctx, size_t bytes) : arena_(ctx.allocator(), bytes + kMaxSlices * Allocator::kAlignment) {
    ctx.RecordScratch(static_cast<int64_t>(arena_.capacity()));
  }
  const Status& status() const { return arena_.status(); }

  template <typename A>
  StatusOr<A*> Take(int64_t count) {
    return arena_.AllocateArray<A>(static_cast<size_t>(count));
  }
  // `count` = target.num_elements() values of `param` broadcast to `target`.
  template <typename A>
  StatusOr<A*> Broadcast(const Tensor& param, const Shape& target, const std::string& where, const char* name) {
    OL_ASSIGN_OR_RETURN(A * out, Take<A>(target.num_elements()));
    OL_RETURN_IF_ERROR(BroadcastParam<A>(param, target, where, name, out));
    return out;
  }

 private:
  ScratchArena arena_;
};

}  // namespace onnx_light
