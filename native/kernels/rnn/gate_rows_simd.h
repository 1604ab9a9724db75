// gate_rows.h's functions over a lane type of simd/math.h; included by the per-ISA
// gate_rows_<isa>.cc files (isa_library targets) after their lane header.
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/simd/math.h"

namespace onnx_light {
namespace rnn {
namespace {

template <class S, typename S::V (*F)(typename S::V)>
void ApplyRowSimd(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(x + i, F(S::Load(x + i)));
  if (i < n) {  // the tail through the same vector code, zero-padded
    float buffer[S::kLanes] = {};
    const size_t bytes = static_cast<size_t>(n - i) * sizeof(float);
    std::memcpy(buffer, x + i, bytes);
    S::Store(buffer, F(S::Load(buffer)));
    std::memcpy(x + i, buffer, bytes);
  }
}

template <class S>
void SigmoidRowSimd(float* x, int64_t n) {
  ApplyRowSimd<S, simd::Sigmoid<S>>(x, n);
}
template <class S>
void TanhRowSimd(float* x, int64_t n) {
  ApplyRowSimd<S, simd::Tanh<S>>(x, n);
}

}  // namespace
}  // namespace rnn
}  // namespace onnx_light
