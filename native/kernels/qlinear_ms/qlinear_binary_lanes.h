// The one algorithm of qlinear_binary_spans.h over a byte-lane type L; included by each
// variant's source after its lane type (everything here is in an unnamed namespace, so an
// ISA-flagged file's copy stays its own: isa_variants.h).
//
// L provides, for kLanes elements:
//   VF, VI                        float and int32 vectors
//   SetF(float), SetI(int32_t)
//   Widen<Q>(const Q* p) -> VI    kLanes bytes at p, sign- or zero-extended
//   Narrow<Q>(VI v, Q* p)         v saturated to Q, stored as kLanes bytes at p
//   Narrow4<Q>(const VI v[4], Q* p)  the same for four vectors, 4 * kLanes bytes in order
//   SubI, AddI, ToFloat (exact for these integers), Mul, Add, Div (IEEE, rounded once)
//   RoundClamped(VF q) -> VI      round_half_even(min(max(q, -2^16), 2^16)), NaN -> -2^16
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/qlinear_ms/qlinear_binary_spans.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

template <class L, typename Q, bool kMul, int kAStep, int kBStep>
void BinaryLoop(const Q* a, const Q* b, Q* c, int64_t n, const QLinearBinaryParams& p) {
  using VF = typename L::VF;
  using VI = typename L::VI;
  constexpr int kLanes = L::kLanes;
  const VF vsa = L::SetF(p.sa), vsb = L::SetF(p.sb), vsc = L::SetF(p.sc);
  const VI vza = L::SetI(p.za), vzb = L::SetI(p.zb), vzc = L::SetI(p.zc);
  // A broadcast operand's one value, dequantized once (the same operations as per lane).
  VF xa = L::SetF(0.0f), xb = L::SetF(0.0f);
  if constexpr (kAStep == 0) xa = L::Mul(vsa, L::ToFloat(L::SubI(L::SetI(a[0]), vza)));
  if constexpr (kBStep == 0) xb = L::Mul(vsb, L::ToFloat(L::SubI(L::SetI(b[0]), vzb)));
  auto quantized = [&](const Q* pa, const Q* pb) -> VI {
    VF x = xa, y = xb;
    if constexpr (kAStep != 0) x = L::Mul(vsa, L::ToFloat(L::SubI(L::template Widen<Q>(pa), vza)));
    if constexpr (kBStep != 0) y = L::Mul(vsb, L::ToFloat(L::SubI(L::template Widen<Q>(pb), vzb)));
    const VF v = kMul ? L::Mul(x, y) : L::Add(x, y);
    return L::AddI(L::RoundClamped(L::Div(v, vsc)), vzc);
  };
  int64_t e = 0;
  // Four vectors per step, narrowed together (fewer packing instructions per element).
  for (; e + 4 * kLanes <= n; e += 4 * kLanes) {
    VI r[4];
    for (int v = 0; v < 4; ++v) r[v] = quantized(a + (e + v * kLanes) * kAStep, b + (e + v * kLanes) * kBStep);
    L::template Narrow4<Q>(r, c + e);
  }
  for (; e + kLanes <= n; e += kLanes) L::template Narrow<Q>(quantized(a + e * kAStep, b + e * kBStep), c + e);
  if (e < n) {
    // The tail through one padded vector: the same instructions as every other element.
    Q ta[kLanes] = {}, tb[kLanes] = {}, tc[kLanes];
    const int64_t rest = n - e;
    if constexpr (kAStep != 0) std::memcpy(ta, a + e, rest);
    if constexpr (kBStep != 0) std::memcpy(tb, b + e, rest);
    L::template Narrow<Q>(quantized(ta, tb), tc);
    std::memcpy(c + e, tc, rest);
  }
}

template <class L, typename Q, bool kMul>
void BinarySpanOf(const Q* a, int64_t a_step, const Q* b, int64_t b_step, Q* c, int64_t n,
                  const QLinearBinaryParams& p) {
  if (a_step != 0 && b_step != 0) {
    BinaryLoop<L, Q, kMul, 1, 1>(a, b, c, n, p);
  } else if (a_step != 0) {
    BinaryLoop<L, Q, kMul, 1, 0>(a, b, c, n, p);
  } else if (b_step != 0) {
    BinaryLoop<L, Q, kMul, 0, 1>(a, b, c, n, p);
  } else {
    BinaryLoop<L, Q, kMul, 0, 0>(a, b, c, n, p);
  }
}

template <class L, typename Q>
void BinarySpan(const Q* a, int64_t a_step, const Q* b, int64_t b_step, Q* c, int64_t n, const QLinearBinaryParams& p) {
  if (p.mul) {
    BinarySpanOf<L, Q, true>(a, a_step, b, b_step, c, n, p);
  } else {
    BinarySpanOf<L, Q, false>(a, a_step, b, b_step, c, n, p);
  }
}

}  // namespace
}  // namespace qlinear_ms
}  // namespace onnx_light
