// What QuantizeLinear and DequantizeLinear share: attributes read once, the parameter
// layout, and the two-stage block loop (decode a chunk into doubles on the stack, then
// encode it), run through ParallelFor over contiguous element blocks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/kernels/quantization/quant_layout.h"
#include "native/kernels/quantization/quant_types.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace quantization {

// Elements decoded per stage-1 pass: two double buffers of this size live on each
// worker's stack (4 KiB), so workers never allocate.
inline constexpr int64_t kChunk = 256;

// Values of a scale or zero-point tensor as doubles (null tensor: `count` zeros).
template <typename... Ts>
StatusOr<std::vector<double>> ParamsAsDouble(TypeList<Ts...> types, const Tensor* t, int64_t count,
                                             const std::string& where, const char* what) {
  std::vector<double> values(static_cast<size_t>(count), 0.0);
  if (t == nullptr) return values;
  OL_RETURN_IF_ERROR(DispatchType(types, t->dtype(), where + " (" + what + ")", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < count; ++i) values[i] = ToDouble(t->data<T>()[i]);
    return Status::Ok();
  }));
  return values;
}

// Runs fn(chunk_begin, chunk_end) over every element in chunks of at most kChunk, blocks
// in parallel once the element count reaches the threshold.
template <typename Fn>
Status ForEachChunk(const KernelContext& ctx, const elementwise::ElementwisePolicy& policy, const char* label,
                    int64_t total, Fn&& fn) {
  return policy.Run(ctx, label, total, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; c += kChunk) fn(c, std::min(end, c + kChunk));
  });
}

}  // namespace quantization
}  // namespace onnx_light
