// EpilogueSpans from simd/math.h for one lane type; included by the per-ISA epilogue files
// (isa_library targets, compiled with their ISA's flags) after their lane header.
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace gemm {
namespace {

// Full vectors, then the tail through a padded vector: every element is computed by the
// same instructions wherever a block starts or ends (as the unary family's spans).
template <class S, typename S::V (*F)(typename S::V)>
void InPlaceSpan(float* y, int64_t n) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(y + i, F(S::Load(y + i)));
  if (i < n) {
    float buffer[S::kLanes] = {};
    std::memcpy(buffer, y + i, (n - i) * sizeof(float));
    S::Store(buffer, F(S::Load(buffer)));
    std::memcpy(y + i, buffer, (n - i) * sizeof(float));
  }
}

template <class S>
EpilogueSpans MakeEpilogueSpans() {
  return {InPlaceSpan<S, simd::Sigmoid<S>>, InPlaceSpan<S, simd::Tanh<S>>, InPlaceSpan<S, simd::GeluErf<S>>,
          InPlaceSpan<S, simd::GeluTanh<S>>};
}

}  // namespace
}  // namespace gemm
}  // namespace onnx_light
