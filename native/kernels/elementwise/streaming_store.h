// Non-temporal output writes for outputs larger than the caches. A normal store first reads
// the destination line (read-for-ownership), so an elementwise op moves one output's worth
// of bytes more than it counts; memcpy avoids that with streaming stores, and so do the
// elementwise kernels above algorithm.streaming_store_elements: they compute a chunk into
// an L1 buffer and stream it out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace elementwise {

// Bytes computed per chunk before they are streamed out (fits L1 with the inputs).
inline constexpr size_t kStreamChunkBytes = 4096;

// Copies with non-temporal stores where dst allows, plain copies for the unaligned head and
// the tail: the best variant of StreamingCopyVariants() (chosen once; streaming_store.cc).
void StreamingCopy(void* dst, const void* src, size_t bytes);

// Orders the streamed stores before whatever signals the block's completion.
void StreamingFence();

// Every StreamingCopy variant compiled for this architecture, best first: x86-64 "avx512"
// (whole 64-byte lines per store: fewer store instructions for the write-combining buffers
// to merge), "sse2" (16-byte streams, the x86-64 baseline, so Isa::kPortable); everywhere
// "portable" (memcpy), last. Each copies exactly the bytes memcpy would.
using StreamingCopyFn = void (*)(void* dst, const void* src, size_t bytes);
const std::vector<IsaVariant<StreamingCopyFn>>& StreamingCopyVariants();

// Writes out[0, n) through span(buffer, offset, count), which computes elements
// [offset, offset + count) into buffer, chunk by chunk with streaming stores.
template <typename O, typename SpanFn>
void WriteStreaming(O* out, int64_t n, SpanFn&& span) {
  static_assert(std::is_trivially_copyable_v<O>, "streamed outputs must be trivially copyable");
  constexpr int64_t kChunk = kStreamChunkBytes / sizeof(O);
  alignas(64) O buffer[kChunk];
  for (int64_t offset = 0; offset < n; offset += kChunk) {
    const int64_t count = std::min(kChunk, n - offset);
    span(buffer, offset, count);
    StreamingCopy(out + offset, buffer, count * sizeof(O));
  }
}

}  // namespace elementwise
}  // namespace onnx_light
