// Non-temporal output writes for outputs larger than the caches. A normal store first reads
// the destination line (read-for-ownership), so an elementwise op moves one output's worth
// of bytes more than it counts; memcpy avoids that with streaming stores, and so do the
// elementwise kernels above algorithm.streaming_store_elements: they compute a chunk into
// an L1 buffer and stream it out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#include "native/kernels/common/isa_variants.h"
#endif

namespace onnx_light {
namespace elementwise {

// Bytes computed per chunk before they are streamed out (fits L1 with the inputs).
inline constexpr size_t kStreamChunkBytes = 4096;

#if defined(__x86_64__)
// Whole 64-byte lines per store where the CPU has AVX-512: fewer store instructions for
// the write-combining buffers to merge.
__attribute__((target("avx512f"))) inline size_t StreamLines512(char* d, const char* s, size_t bytes) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
  }
  return i;
}

inline bool HasAvx512Streams() {
  static const bool has = IsaEnabled(Isa::kAvx512);
  return has;
}
#endif

// Copies with non-temporal stores (64-byte with AVX-512, else 16-byte SSE2, baseline on
// x86-64) where dst allows, plain copies for the unaligned head and the tail; a plain
// memcpy elsewhere.
inline void StreamingCopy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (HasAvx512Streams()) {
    const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64);
    std::memcpy(d, s, head);
    const size_t i = head + StreamLines512(d + head, s + head, bytes - head);
    std::memcpy(d + i, s + i, bytes - i);
    return;
  }
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Orders the streamed stores before whatever signals the block's completion.
inline void StreamingFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

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
