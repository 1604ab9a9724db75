// The zero-point correction of the packed-A arrangement (IgemmMultiplyBlock), written once
// over a lane type and instantiated by each microkernel file with its ISA's flags:
//   row[j] += row_term - azp * column_sums[j]   (j < n, all modulo 2^32)
// where row_term = K azp bzp - bzp rowsum(i) and azp is the row's (stored) zero point.
//
// L provides: V (a vector of uint32 lanes), kLanes, Set, Load, Store, Add, Sub, MulLow (the
// low 32 bits of each lane's product). Integer arithmetic is exact, so every width (and
// the scalar one-lane type) gives the same bits; the last n % kLanes elements go through
// the same lanes on a copy, as simd/rows_simd.h's tails do.
//
// Internal to the engine; include inside no namespace (it opens an anonymous one, so each
// ISA file's instantiation keeps internal linkage).
#pragma once

#include <cstdint>
#include <cstring>

namespace onnx_light {
namespace igemm {
namespace {

template <class L>
inline void AddZeroPointTermsLanes(uint32_t* row, int64_t n, uint32_t row_term, uint32_t azp,
                                   const uint32_t* column_sums) {
  using V = typename L::V;
  constexpr int64_t kLanes = L::kLanes;
  const V t = L::Set(row_term), z = L::Set(azp);
  const auto step = [&](uint32_t* c, const uint32_t* s) {
    // azp == 0 (a uint8 A with zero point 0 on the pair tiles) adds the row term alone.
    const V add = azp == 0 ? t : L::Sub(t, L::MulLow(z, L::Load(s)));
    L::Store(c, L::Add(L::Load(c), add));
  };
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) step(row + j, column_sums + j);
  if (j < n) {
    uint32_t c[kLanes] = {}, s[kLanes] = {};
    const size_t bytes = static_cast<size_t>(n - j) * sizeof(uint32_t);
    std::memcpy(c, row + j, bytes);
    std::memcpy(s, column_sums + j, bytes);
    step(c, s);
    std::memcpy(row + j, c, bytes);
  }
}

}  // namespace
}  // namespace igemm
}  // namespace onnx_light
