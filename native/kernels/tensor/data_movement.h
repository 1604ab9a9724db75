// Shared by the data-movement and construction families: the element-block parallel
// policy (ThresholdedParallel over parallel.minimum_elements + parallel.block_elements) and type-agnostic copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "native/kernels/common/thresholded_parallel.h"
#include "native/registry/kernel.h"

namespace onnx_light {

// Tuning of a kernel that moves or fills output elements; `minimum` is the portable
// serial cut-over in output elements.
std::vector<ParamSpec> ElementBlockTuning(int64_t minimum, int64_t grain);

// Copies n elements (of `type`, element_size bytes each) from src[src_index...] to
// dst[dst_index...]. Strings are assigned element by element, everything else is memcpy'd.
inline void CopyElements(DataType type, size_t element_size, const void* src, int64_t src_index, void* dst,
                         int64_t dst_index, int64_t n) {
  if (n <= 0) return;
  if (type == DataType::kString) {
    const auto* s = static_cast<const std::string*>(src) + src_index;
    std::copy(s, s + n, static_cast<std::string*>(dst) + dst_index);
    return;
  }
  std::memcpy(static_cast<char*>(dst) + dst_index * element_size,
              static_cast<const char*>(src) + src_index * element_size, n * element_size);
}

// out[o] = in[sum over d of offsets[d][o_d]] for every output multi-index o: the common core
// of Slice, Expand and Tile, whose outputs index their input dimension by dimension.
// offsets[d] has out.shape().dim(d) entries (input element offsets, already times the
// input's stride). Parallel over rows of the last dimension; runs of consecutive input
// offsets along that dimension are copied as blocks.
// An offset of kFillOffset in any dimension makes the element `*fill` (one element of the
// tensor's type; Pad's constant mode) instead.
inline constexpr int64_t kFillOffset = INT64_MIN;
Status CopyThroughOffsets(const KernelContext& ctx, const ThresholdedParallel& parallelism, const char* label,
                          const Tensor& in, Tensor* out, const std::vector<std::vector<int64_t>>& offsets,
                          const void* fill = nullptr);

// Element strides of a dense row-major shape.
std::vector<int64_t> DenseStrides(const Shape& shape);

// Writes n copies of the element at `value` to dst[dst_index...].
void FillElements(DataType type, size_t element_size, const void* value, void* dst, int64_t dst_index, int64_t n);

// String payloads allocate per element: their copies stay on the calling thread.
inline bool SerialPayload(DataType type) { return type == DataType::kString; }

}  // namespace onnx_light
