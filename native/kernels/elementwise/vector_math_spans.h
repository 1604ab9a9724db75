// SpanKernels from simd/math.h for one lane type; included by the per-ISA vector_math
// files (isa_library targets, compiled with their ISA's flags) after their lane header.
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/elementwise/vector_math.h"
#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace elementwise {
namespace vector_math {
namespace {

// Full vectors, then the tail through a padded vector: every element is computed by the
// same instructions wherever the block boundaries fall.
template <class S, typename S::V (*F)(typename S::V)>
void Span(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(out + i, F(S::Load(in + i)));
  if (i < n) {
    float buffer[S::kLanes] = {};
    std::memcpy(buffer, in + i, (n - i) * sizeof(float));
    S::Store(buffer, F(S::Load(buffer)));
    std::memcpy(out + i, buffer, (n - i) * sizeof(float));
  }
}

template <class S>
SpanKernels MakeSpanKernels(const char* isa) {
  using namespace simd;  // NOLINT: the algorithms
  return {isa, Span<S, Exp<S>>, Span<S, Sigmoid<S>>, Span<S, Tanh<S>>, Span<S, GeluErf<S>>, Span<S, GeluTanh<S>>};
}

}  // namespace
}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
