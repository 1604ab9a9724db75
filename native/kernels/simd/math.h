// Vectorised float functions written once over a SIMD width. Each is a template over a
// lane type `S` (lanes_avx2.h, lanes_avx512.h, lanes_neon.h) with the operations below;
// a file compiled with the flags its lane type needs (an isa_library target, see
// native/kernels/common/README.md) instantiates them, so every
// lane of every width runs the same instructions on the same constants and gives the
// same value.
//
// S provides: V (float vector), M (lane mask), kLanes, Set, Load, Store, Add, Sub, Mul,
// Div, Min, Max, Fmadd(a,b,c)=a*b+c, Fnmadd(a,b,c)=c-a*b, Fmsub(a,b,c)=a*b-c,
// RoundNearest, Abs, SignOf (x's sign bit alone), Or, Less, IsNan, Select(m, t, f) = m ? t : f,
// ScaleByPow2(p, n) = p * 2^n for integral n in [-151, 128] without overflowing 2^n, and
// ScaleByNormalPow2(p, n), the same for n in [-126, 127] (2^n one normal factor; other n,
// NaN included, give an unspecified value for the caller to replace, never a trap).
#pragma once

namespace onnx_light {
namespace simd {
namespace {

// The exp family's core: with n = round(x / ln2), e^r for r = x - n ln2 (Cody-Waite, two
// constants) by Cephes' degree-6 polynomial. Exp and its variants differ only in the clamps
// before it and how 2^n is applied after it.
template <class S>
inline typename S::V ExpReducedPolynomial(typename S::V x, typename S::V n) {
  using V = typename S::V;
  V r = S::Fnmadd(n, S::Set(0.693359375f), x);
  r = S::Fnmadd(n, S::Set(-2.12194440e-4f), r);
  V p = S::Set(1.9875691500e-4f);
  p = S::Fmadd(p, r, S::Set(1.3981999507e-3f));
  p = S::Fmadd(p, r, S::Set(8.3334519073e-3f));
  p = S::Fmadd(p, r, S::Set(4.1665795894e-2f));
  p = S::Fmadd(p, r, S::Set(1.6666665459e-1f));
  p = S::Fmadd(p, r, S::Set(5.0000001201e-1f));
  p = S::Fmadd(p, S::Mul(r, r), S::Add(r, S::Set(1.0f)));
  return p;
}

// exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, Cephes' degree-6 polynomial for
// e^r, and 2^n applied as two factors so that results in the subnormal range stay exact.
template <class S>
inline typename S::V Exp(typename S::V x) {
  using V = typename S::V;
  const V clamped = S::Min(S::Max(x, S::Set(-104.0f)), S::Set(89.0f));
  const V n = S::RoundNearest(S::Mul(clamped, S::Set(1.44269504088896341f)));
  const V p = ExpReducedPolynomial<S>(clamped, n);
  return S::Select(S::IsNan(x), x, S::ScaleByPow2(p, n));  // NaN stays NaN
}

// Exp's value for every x <= 88 (no overflow possible) or NaN, in three fewer operations:
// no upper clamp, and the lower one takes x as Max's second operand, which a NaN passes
// through on every lane type (x86's max returns its second operand when either is NaN,
// NEON's returns NaN), so the NaN reaches p and the result without Exp's final select.
// The same instructions on the same values as Exp otherwise: the same bits. For arguments
// known to lie at or below 0 up to rounding: Sigmoid's -|x|, GeluErf's exponent.
template <class S>
inline typename S::V ExpNoOverflow(typename S::V x) {
  using V = typename S::V;
  const V clamped = S::Max(S::Set(-104.0f), x);
  const V n = S::RoundNearest(S::Mul(clamped, S::Set(1.44269504088896341f)));
  const V p = ExpReducedPolynomial<S>(clamped, n);
  return S::ScaleByPow2(p, n);
}

// exp(x) for x <= 0 or NaN, flushed to 0 below float's normal range (x < -87.33654, -inf
// included): softmax's exp of a value minus its row's maximum, where masked scores (-inf or
// very negative) must weigh exactly nothing. Exp's reduction and polynomial without its
// clamps (nothing lies above 0; the flushed lanes are replaced) and 2^n as one normal factor
// (n in [-126, 0] wherever the result is kept): the value of Exp, or 0, for every such x
// (p * 2^n is exact, or rounded once into the subnormals, either way), in four fewer
// operations on AVX-512 and nine on AVX2. A NaN stays NaN (through the arithmetic).
template <class S>
inline typename S::V ExpNonPositiveOrZero(typename S::V x) {
  using V = typename S::V;
  const V n = S::RoundNearest(S::Mul(x, S::Set(1.44269504088896341f)));
  const V p = ExpReducedPolynomial<S>(x, n);
  return S::Select(S::Less(x, S::Set(-87.33654f)), S::Set(0.0f), S::ScaleByNormalPow2(p, n));
}

// sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) below, with e = exp(-|x|): no overflow,
// no cancellation. -|x| is x with its sign bit set (one operation; -0 for 0, whose
// exponential is 1 like +0's), and cannot overflow exp.
template <class S>
inline typename S::V Sigmoid(typename S::V x) {
  using V = typename S::V;
  const V e = ExpNoOverflow<S>(S::Or(x, S::Set(-0.0f)));
  const V s = S::Div(S::Set(1.0f), S::Add(S::Set(1.0f), e));
  return S::Select(S::Less(x, S::Set(0.0f)), S::Mul(e, s), s);
}

// tanh: Cephes' odd polynomial below |x| = 0.625 (where 1 - 2/(e^2x + 1) would cancel),
// the exponential form above; the sign is copied back.
template <class S>
inline typename S::V Tanh(typename S::V x) {
  using V = typename S::V;
  const V a = S::Abs(x);
  const V z = S::Mul(x, x);
  V p = S::Set(-5.70498872745e-3f);
  p = S::Fmadd(p, z, S::Set(2.06390887954e-2f));
  p = S::Fmadd(p, z, S::Set(-5.37397155531e-2f));
  p = S::Fmadd(p, z, S::Set(1.33314422036e-1f));
  p = S::Fmadd(p, z, S::Set(-3.33332819422e-1f));
  const V small = S::Fmadd(S::Mul(p, z), x, x);
  const V e = Exp<S>(S::Add(a, a));
  const V large_abs = S::Sub(S::Set(1.0f), S::Div(S::Set(2.0f), S::Add(e, S::Set(1.0f))));
  return S::Select(S::Less(a, S::Set(0.625f)), small, S::Or(large_abs, S::SignOf(x)));
}

// gelu(x) = x - 0.5 x erfc(x/sqrt2) for x >= 0 and 0.5 x erfc(|x|/sqrt2) below, with
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2) (Numerical Recipes' erfcc, relative error
// < 1.2e-7 for all z >= 0).
template <class S>
inline typename S::V GeluErf(typename S::V x) {
  using V = typename S::V;
  const V z = S::Mul(S::Abs(x), S::Set(0.70710678118654752f));
  const V t = S::Div(S::Set(1.0f), S::Fmadd(z, S::Set(0.5f), S::Set(1.0f)));
  // P(t) by Estrin's scheme: the same polynomial as a Horner chain of 9 FMAs, in 4 levels.
  // Gelu's cost is latency (a long chain per vector), not throughput.
  const V t2 = S::Mul(t, t);
  const V t4 = S::Mul(t2, t2);
  const V t8 = S::Mul(t4, t4);
  const V p01 = S::Fmadd(S::Set(1.00002368f), t, S::Set(-1.26551223f));
  const V p23 = S::Fmadd(S::Set(0.09678418f), t, S::Set(0.37409196f));
  const V p45 = S::Fmadd(S::Set(0.27886807f), t, S::Set(-0.18628806f));
  const V p67 = S::Fmadd(S::Set(1.48851587f), t, S::Set(-1.13520398f));
  const V p89 = S::Fmadd(S::Set(0.17087277f), t, S::Set(-0.82215223f));
  const V p0123 = S::Fmadd(p23, t2, p01);
  const V p4567 = S::Fmadd(p67, t2, p45);
  const V p = S::Fmadd(p89, t8, S::Fmadd(p4567, t4, p0123));
  const V xx = S::Mul(x, x);
  const V xx_error = S::Fmsub(x, x, xx);
  const V half = S::Set(0.5f);
  // exponent = p - x^2/2 as hi + lo (Fast2Sum): hi alone is only good to half an ulp of
  // ~|x|^2/2, which e^hi would turn into a relative error of several 1e-6 for |x| > 8.
  const V minus_half_xx = S::Mul(S::Set(-0.5f), xx);
  const V hi = S::Add(minus_half_xx, p);
  const V lo = S::Fnmadd(half, xx_error, S::Sub(p, S::Sub(hi, minus_half_xx)));
  const V e = ExpNoOverflow<S>(hi);  // hi <= P(1) < 1e-7: no overflow
  const V erfc = S::Mul(t, S::Fmadd(e, lo, e));
  const V half_x = S::Mul(half, x);
  return S::Select(S::Less(x, S::Set(0.0f)), S::Mul(half_x, erfc), S::Fnmadd(half_x, erfc, x));
}

// gelu_tanh(x) = x * sigmoid(2 u), u = sqrt(2/pi) (x + 0.044715 x^3): the same value as
// 0.5 x (1 + tanh u) without its cancellation for negative x.
template <class S>
inline typename S::V GeluTanh(typename S::V x) {
  using V = typename S::V;
  const V x3 = S::Mul(S::Mul(x, x), x);
  const V u = S::Mul(S::Set(1.5957691216057308f), S::Fmadd(x3, S::Set(0.044715f), x));  // 2 sqrt(2/pi) u
  return S::Mul(x, Sigmoid<S>(u));
}

}  // namespace
}  // namespace simd
}  // namespace onnx_light
