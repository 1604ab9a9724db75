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

// v with its rounding kept: GCC contracts a vector a * b + c written as two operations into
// one FMA (its default -ffp-contract=fast), which the scalar forms (and the separate
// kernels) compiled for x86-64's baseline (no FMA) do not do. An empty asm the value must
// pass through stops that.
template <class V>
inline V Rounded(V v) {
#if defined(__x86_64__)
  __asm__("" : "+x"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#endif
  return v;
}

// The activation's parameters as vectors, set once per run.
template <class S>
struct ActivationParams {
  typename S::V zero, one, alpha, beta;
  explicit ActivationParams(const Epilogue& e)
      : zero(S::Set(0.0f)), one(S::Set(1.0f)), alpha(S::Set(e.alpha)), beta(S::Set(e.beta)) {}
};

// clamp(v, 0, 1) as v < 0 ? 0 : v > 1 ? 1 : v: NaN stays NaN (the scalar UnitClamp).
template <class S>
inline typename S::V UnitClamp(const ActivationParams<S>& p, typename S::V v) {
  return S::Select(S::Less(v, p.zero), p.zero, S::Select(S::Less(p.one, v), p.one, v));
}

// One vector of the activation, in the separate kernel's arithmetic order (epilogue.h).
template <class S, Activation A>
inline typename S::V Activate(const ActivationParams<S>& p, typename S::V x) {
  if constexpr (A == Activation::kRelu) {
    // x > 0 ? x : 0, NaN kept (-0 gives +0, as the scalar form).
    return S::Select(S::IsNan(x), x, S::Select(S::Less(p.zero, x), x, p.zero));
  } else if constexpr (A == Activation::kClip) {
    const typename S::V low = S::Select(S::Less(x, p.alpha), p.alpha, x);
    return S::Select(S::Less(p.beta, low), p.beta, low);
  } else if constexpr (A == Activation::kLeakyRelu) {
    return S::Select(S::Less(x, p.zero), S::Mul(p.alpha, x), x);
  } else if constexpr (A == Activation::kSigmoid) {
    return simd::Sigmoid<S>(x);
  } else if constexpr (A == Activation::kTanh) {
    return simd::Tanh<S>(x);
  } else if constexpr (A == Activation::kHardSigmoid) {
#if defined(__aarch64__)
    // aarch64's baseline has FMA, and the HardSigmoid kernel's (and the portable
    // epilogue's) alpha * x + beta compiles to one fused multiply-add there.
    return UnitClamp<S>(p, S::Fmadd(p.alpha, x, p.beta));
#else
    return UnitClamp<S>(p, S::Add(Rounded(S::Mul(p.alpha, x)), p.beta));
#endif
  } else if constexpr (A == Activation::kHardSwish) {
    return S::Mul(x, UnitClamp<S>(p, S::Add(S::Div(x, S::Set(6.0f)), S::Set(0.5f))));
  } else if constexpr (A == Activation::kSwish) {
    return S::Mul(x, simd::Sigmoid<S>(Rounded(S::Mul(p.alpha, x))));
  } else if constexpr (A == Activation::kGelu) {
    return simd::GeluErf<S>(x);
  } else if constexpr (A == Activation::kGeluTanh) {
    return simd::GeluTanh<S>(x);
  } else {
    return x;
  }
}

// EpilogueSpans::run for one activation: full vectors, then the tail through padded
// vectors (the same instructions for every element wherever a run starts or ends).
template <class S, Activation A>
void RunWith(const Epilogue& e, float* y, int64_t n, const float* row_bias, const float* bias, const float* z) {
  using V = typename S::V;
  const ActivationParams<S> p(e);
  const V rb = S::Set(row_bias != nullptr ? *row_bias : 0.0f);
  const auto step = [&](const float* yi, const float* bi, const float* zi) {
    V v = S::Load(yi);
    if (row_bias != nullptr) v = S::Add(v, rb);
    if (bias != nullptr) v = S::Add(v, S::Load(bi));
    if (z != nullptr) v = S::Add(v, S::Load(zi));
    return Activate<S, A>(p, v);
  };
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) {
    S::Store(y + i, step(y + i, bias != nullptr ? bias + i : nullptr, z != nullptr ? z + i : nullptr));
  }
  if (i < n) {
    const size_t bytes = static_cast<size_t>(n - i) * sizeof(float);
    float yt[S::kLanes] = {}, bt[S::kLanes] = {}, zt[S::kLanes] = {};
    std::memcpy(yt, y + i, bytes);
    if (bias != nullptr) std::memcpy(bt, bias + i, bytes);
    if (z != nullptr) std::memcpy(zt, z + i, bytes);
    S::Store(yt, step(yt, bt, zt));
    std::memcpy(y + i, yt, bytes);
  }
}

template <class S>
void Run(const Epilogue& e, float* y, int64_t n, const float* row_bias, const float* bias, const float* z) {
  switch (e.activation) {
    case Activation::kNone:
      return RunWith<S, Activation::kNone>(e, y, n, row_bias, bias, z);
    case Activation::kRelu:
      return RunWith<S, Activation::kRelu>(e, y, n, row_bias, bias, z);
    case Activation::kClip:
      return RunWith<S, Activation::kClip>(e, y, n, row_bias, bias, z);
    case Activation::kLeakyRelu:
      return RunWith<S, Activation::kLeakyRelu>(e, y, n, row_bias, bias, z);
    case Activation::kSigmoid:
      return RunWith<S, Activation::kSigmoid>(e, y, n, row_bias, bias, z);
    case Activation::kTanh:
      return RunWith<S, Activation::kTanh>(e, y, n, row_bias, bias, z);
    case Activation::kHardSigmoid:
      return RunWith<S, Activation::kHardSigmoid>(e, y, n, row_bias, bias, z);
    case Activation::kHardSwish:
      return RunWith<S, Activation::kHardSwish>(e, y, n, row_bias, bias, z);
    case Activation::kSwish:
      return RunWith<S, Activation::kSwish>(e, y, n, row_bias, bias, z);
    case Activation::kGelu:
      return RunWith<S, Activation::kGelu>(e, y, n, row_bias, bias, z);
    case Activation::kGeluTanh:
      return RunWith<S, Activation::kGeluTanh>(e, y, n, row_bias, bias, z);
  }
}

template <class S>
EpilogueSpans MakeEpilogueSpans() {
  return {InPlaceSpan<S, simd::Sigmoid<S>>, InPlaceSpan<S, simd::Tanh<S>>, InPlaceSpan<S, simd::GeluErf<S>>,
          InPlaceSpan<S, simd::GeluTanh<S>>, Run<S>};
}

}  // namespace
}  // namespace gemm
}  // namespace onnx_light
