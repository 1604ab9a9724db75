#include "native/kernels/elementwise/streaming_store.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onnx_light {
namespace elementwise {

#if defined(__x86_64__)
// streaming_store_avx512.cc (isa_library "avx512").
void StreamingCopyAvx512(void* dst, const void* src, size_t bytes);
#endif

namespace {

#if defined(__x86_64__)
void StreamingCopySse2(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  std::memcpy(d + i, s + i, bytes - i);
}
#endif

void StreamingCopyPortable(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

}  // namespace

const std::vector<IsaVariant<StreamingCopyFn>>& StreamingCopyVariants() {
  static const auto* variants = new std::vector<IsaVariant<StreamingCopyFn>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, StreamingCopyAvx512}, {"sse2", Isa::kPortable, StreamingCopySse2},
#endif
        {"portable", Isa::kPortable, StreamingCopyPortable},
  };
  return *variants;
}

void StreamingCopy(void* dst, const void* src, size_t bytes) {
  static const StreamingCopyFn copy = BestVariant(StreamingCopyVariants()).impl;
  copy(dst, src, bytes);
}

void StreamingFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace elementwise
}  // namespace onnx_light
