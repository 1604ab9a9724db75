// StreamingCopy with whole 64-byte lines per non-temporal store; compiled by
// isa_library(isa = "avx512"), reached only through StreamingCopyVariants().
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#if !defined(__AVX512F__)
#error "build with isa_library(isa = \"avx512\")"
#endif

namespace onnx_light {
namespace elementwise {

void StreamingCopyAvx512(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  size_t head = (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64;
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
  }
  std::memcpy(d + i, s + i, bytes - i);
}

}  // namespace elementwise
}  // namespace onnx_light

#endif  // __x86_64__
