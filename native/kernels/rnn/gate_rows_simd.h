// gate_rows.h's functions over a lane type of simd/math.h; included by the per-ISA
// gate_rows_<isa>.cc files (isa_library targets) after their lane header.
#pragma once

#include <cstdint>
#include <cstring>

#include "native/kernels/rnn/gate_args.h"
#include "native/kernels/rnn/step_panel.h"
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

// GateRows::lstm in two passes over kLanes units at offset j of each stream (LstmRow's
// layout), so that each pass's dependency chain is one activation deep and the out-of-
// order core overlaps the units of several vectors (one pass would chain four: i, c', o,
// tanh c'). Pass 1: i, f, z and the new cell state c' (stored in place).
template <class S>
inline typename S::V LstmGateSum(const LstmRowArgs& r, int gate, int64_t j) {
  return S::Add(S::Add(S::Load(r.product + gate * r.n + j), S::Load(r.projection + gate * r.n + j)),
                S::Load(r.bias + gate * r.n + j));
}

template <class S>
void LstmCellLanes(const LstmRowArgs& r, int64_t j) {
  using V = typename S::V;
  const V c = S::Load(r.cell + j);
  const V i = simd::Sigmoid<S>(S::Fmadd(S::Load(r.peep_i + j), c, LstmGateSum<S>(r, 0, j)));
  const V f = simd::Sigmoid<S>(S::Fmadd(S::Load(r.peep_f + j), c, LstmGateSum<S>(r, 2, j)));
  const V z = simd::Tanh<S>(LstmGateSum<S>(r, 3, j));
  S::Store(r.cell + j, S::Fmadd(f, c, S::Mul(i, z)));
}

// Pass 2: o from c' and h = o tanh(c').
template <class S>
void LstmHiddenLanes(const LstmRowArgs& r, int64_t j) {
  using V = typename S::V;
  const V c = S::Load(r.cell + j);
  const V o = simd::Sigmoid<S>(S::Fmadd(S::Load(r.peep_o + j), c, LstmGateSum<S>(r, 1, j)));
  S::Store(r.hidden + j, S::Mul(o, simd::Tanh<S>(c)));
}

// GateRows::lstm: whole vectors in place, the tail through the same vector code on
// zero-padded copies of its streams (a unit's result depends only on its own inputs).
template <class S>
void LstmRowSimd(const LstmRowArgs& r) {
  const int64_t whole = r.n / S::kLanes * S::kLanes;
  for (int64_t j = 0; j < whole; j += S::kLanes) LstmCellLanes<S>(r, j);
  for (int64_t j = 0; j < whole; j += S::kLanes) LstmHiddenLanes<S>(r, j);
  const int64_t j = whole, tail = r.n - whole;
  if (tail == 0) return;
  constexpr int64_t L = S::kLanes;
  float product[4 * L] = {}, projection[4 * L] = {}, bias[4 * L] = {}, peep[3 * L] = {}, cell[L] = {}, hidden[L];
  const size_t bytes = static_cast<size_t>(tail) * sizeof(float);
  for (int g = 0; g < 4; ++g) {
    std::memcpy(product + g * L, r.product + g * r.n + j, bytes);
    std::memcpy(projection + g * L, r.projection + g * r.n + j, bytes);
    std::memcpy(bias + g * L, r.bias + g * r.n + j, bytes);
  }
  std::memcpy(peep, r.peep_i + j, bytes);
  std::memcpy(peep + L, r.peep_o + j, bytes);
  std::memcpy(peep + 2 * L, r.peep_f + j, bytes);
  std::memcpy(cell, r.cell + j, bytes);
  const LstmRowArgs padded{L, product, projection, bias, peep, peep + L, peep + 2 * L, cell, hidden};
  LstmCellLanes<S>(padded, 0);
  LstmHiddenLanes<S>(padded, 0);
  std::memcpy(r.cell + j, cell, bytes);
  std::memcpy(r.hidden + j, hidden, bytes);
}

// GateRows' GRU rows (gate_args.h's GruRowArgs) over kLanes units at offset j; each a
// single pass (z and r are independent, the candidate waits for r alone).
template <class S>
inline typename S::V GruGateSum(const GruRowArgs& r, int gate, int64_t j) {
  return S::Add(S::Add(S::Load(r.product + gate * r.n + j), S::Load(r.projection + gate * r.n + j)),
                S::Load(r.bias + gate * r.n + j));
}

// h = z h_prev + ((1 - z) h~).
template <class S>
inline typename S::V GruBlend(typename S::V z, typename S::V candidate, typename S::V h_prev) {
  return S::Fmadd(z, h_prev, S::Mul(S::Sub(S::Set(1.0f), z), candidate));
}

template <class S>
void GruLinearLanes(const GruRowArgs& r, int64_t j) {
  using V = typename S::V;
  const V z = simd::Sigmoid<S>(GruGateSum<S>(r, 0, j));
  const V reset = simd::Sigmoid<S>(GruGateSum<S>(r, 1, j));
  const V linear = S::Add(S::Load(r.product + 2 * r.n + j), S::Load(r.bias_rh + j));
  const V input = S::Add(S::Load(r.projection + 2 * r.n + j), S::Load(r.bias + 2 * r.n + j));
  const V candidate = simd::Tanh<S>(S::Fmadd(reset, linear, input));
  S::Store(r.hidden + j, GruBlend<S>(z, candidate, S::Load(r.h_prev + j)));
}

template <class S>
void GruResetLanes(const GruRowArgs& r, int64_t j) {
  using V = typename S::V;
  const V z = simd::Sigmoid<S>(GruGateSum<S>(r, 0, j));
  const V reset = simd::Sigmoid<S>(GruGateSum<S>(r, 1, j));
  S::Store(r.reset + j, S::Mul(reset, S::Load(r.h_prev + j)));
  S::Store(r.z + j, z);
}

template <class S>
void GruHiddenLanes(const GruRowArgs& r, int64_t j) {
  using V = typename S::V;
  const V input = S::Add(S::Load(r.projection + 2 * r.n + j), S::Load(r.bias + 2 * r.n + j));
  const V candidate = simd::Tanh<S>(S::Add(S::Add(input, S::Load(r.product + 2 * r.n + j)), S::Load(r.bias_rh + j)));
  S::Store(r.hidden + j, GruBlend<S>(S::Load(r.z + j), candidate, S::Load(r.h_prev + j)));
}

// Which of GruRowArgs' outputs a row writes.
enum GruWrites { kGruWritesHidden, kGruWritesResetAndZ };

// A GRU row: whole vectors in place, the tail through the same vector code on zero-padded
// copies of its streams, then only the row's own outputs copied back.
template <class S, void (*Lanes)(const GruRowArgs&, int64_t), GruWrites kWrites>
void GruRowSimd(const GruRowArgs& r) {
  const int64_t whole = r.n / S::kLanes * S::kLanes;
  for (int64_t j = 0; j < whole; j += S::kLanes) Lanes(r, j);
  const int64_t j = whole, tail = r.n - whole;
  if (tail == 0) return;
  constexpr int64_t L = S::kLanes;
  float product[3 * L] = {}, projection[3 * L] = {}, bias[3 * L] = {}, bias_rh[L] = {}, h_prev[L] = {};
  float z[L] = {}, reset[L] = {}, hidden[L] = {};
  const size_t bytes = static_cast<size_t>(tail) * sizeof(float);
  for (int g = 0; g < 3; ++g) {
    std::memcpy(product + g * L, r.product + g * r.n + j, bytes);
    std::memcpy(projection + g * L, r.projection + g * r.n + j, bytes);
    std::memcpy(bias + g * L, r.bias + g * r.n + j, bytes);
  }
  std::memcpy(bias_rh, r.bias_rh + j, bytes);
  std::memcpy(h_prev, r.h_prev + j, bytes);
  if (kWrites == kGruWritesHidden && r.z != nullptr) std::memcpy(z, r.z + j, bytes);
  Lanes(GruRowArgs{L, product, projection, bias, bias_rh, h_prev, z, reset, hidden}, 0);
  if (kWrites == kGruWritesHidden) {
    std::memcpy(r.hidden + j, hidden, bytes);
  } else {
    std::memcpy(r.z + j, z, bytes);
    std::memcpy(r.reset + j, reset, bytes);
  }
}

template <class S>
void GruLinearRowSimd(const GruRowArgs& r) {
  GruRowSimd<S, GruLinearLanes<S>, kGruWritesHidden>(r);
}
template <class S>
void GruResetRowSimd(const GruRowArgs& r) {
  GruRowSimd<S, GruResetLanes<S>, kGruWritesResetAndZ>(r);
}
template <class S>
void GruHiddenRowSimd(const GruRowArgs& r) {
  GruRowSimd<S, GruHiddenLanes<S>, kGruWritesHidden>(r);
}

// The step product's register tile: kRows rows of a against kPanels adjacent panels
// (panel p at panel + p * kStepPanel * k), kRows x kPanels x (kStepPanel / kLanes)
// accumulators. Each panel row q is loaded once and multiplied by every row's a[q]; k runs
// four at a time (the accumulators stay in registers, the loop's bookkeeping is amortised),
// and every output stays one multiply-add chain over q ascending: the tile's shape never
// changes a value. `cols` (<= kPanels * kStepPanel) of the tile's columns are stored.
template <class S, int kRows, int kPanels>
void StepTile(int64_t k, const float* a, int64_t lda, const float* panel, float* c, int64_t ldc, int64_t cols) {
  using V = typename S::V;
  constexpr int kVecs = static_cast<int>(kStepPanel) / S::kLanes, kWidth = kPanels * kVecs;
  const int64_t stride = kStepPanel * k;
  V acc[kRows][kWidth];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kWidth; ++v) acc[r][v] = S::Set(0.0f);
  }
  auto step = [&](int64_t q) {
    V bv[kWidth];
    for (int p = 0; p < kPanels; ++p) {
      for (int v = 0; v < kVecs; ++v) bv[p * kVecs + v] = S::Load(panel + p * stride + q * kStepPanel + v * S::kLanes);
    }
    for (int r = 0; r < kRows; ++r) {
      const V x = S::Set(a[r * lda + q]);
      for (int v = 0; v < kWidth; ++v) acc[r][v] = S::Fmadd(x, bv[v], acc[r][v]);
    }
  };
  int64_t q = 0;
  for (; q + 4 <= k; q += 4) {
    step(q);
    step(q + 1);
    step(q + 2);
    step(q + 3);
  }
  for (; q < k; ++q) step(q);
  for (int r = 0; r < kRows; ++r) {
    if (cols == kPanels * kStepPanel) {
      for (int v = 0; v < kWidth; ++v) S::Store(c + r * ldc + v * S::kLanes, acc[r][v]);
    } else {
      float buffer[kPanels * kStepPanel];
      for (int v = 0; v < kWidth; ++v) S::Store(buffer + v * S::kLanes, acc[r][v]);
      std::memcpy(c + r * ldc, buffer, static_cast<size_t>(cols) * sizeof(float));
    }
  }
}

// Accumulator vectors a tile may hold: AVX-512 and NEON have 32 vector registers, AVX2 16
// (12 accumulators leave room for a panel row's 4 vectors; the broadcast folds into the
// multiply-add's operand).
template <class S>
constexpr int StepAccumulators() {
  return S::kLanes == 8 ? 12 : 16;
}
// Rows of one pass (the row groups of GateRows::product): AVX-512 8, AVX2 3, NEON 2.
template <class S>
constexpr int StepMaxRows() {
  return StepAccumulators<S>() / (static_cast<int>(kStepPanel) / S::kLanes);
}

// kRows rows against the panels of n columns: two panels per tile when the accumulators
// allow (AVX-512 up to 4 rows: 4 x 4 vectors; NEON 1 row), one otherwise and for an odd
// last panel.
template <class S, int kRows>
void StepRowsPass(int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c, int64_t ldc) {
  constexpr int kVecs = static_cast<int>(kStepPanel) / S::kLanes;
  constexpr int kPanels = 2 * kRows * kVecs <= StepAccumulators<S>() ? 2 : 1;
  int64_t j0 = 0;
  if constexpr (kPanels == 2) {
    for (; j0 + kStepPanel < n; j0 += 2 * kStepPanel) {  // at least one column in the second panel
      const int64_t cols = n - j0 < 2 * kStepPanel ? n - j0 : 2 * kStepPanel;
      StepTile<S, kRows, 2>(k, a, lda, packed + j0 * k, c + j0, ldc, cols);
    }
  }
  for (; j0 < n; j0 += kStepPanel) {
    const int64_t cols = n - j0 < kStepPanel ? n - j0 : kStepPanel;
    StepTile<S, kRows, 1>(k, a, lda, packed + j0 * k, c + j0, ldc, cols);
  }
}

// StepRowsPass for a run-time row count in [1, StepMaxRows].
template <class S, int kRows = 1>
void StepRowsDispatch(int rows, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                      int64_t ldc) {
  if constexpr (kRows < StepMaxRows<S>()) {
    if (rows != kRows) return StepRowsDispatch<S, kRows + 1>(rows, n, k, a, lda, packed, c, ldc);
  }
  StepRowsPass<S, kRows>(n, k, a, lda, packed, c, ldc);
}

// GateRows::product: the m rows in the fewest passes of at most StepMaxRows rows, their
// sizes balanced (AVX2, m = 4: 2 + 2). Two panels at a time (they stay in L1 while every
// pass goes over them), each pass over both.
template <class S>
void StepProductSimd(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                     int64_t ldc) {
  constexpr int64_t kMaxRows = StepMaxRows<S>();
  const int64_t groups = (m + kMaxRows - 1) / kMaxRows;
  for (int64_t j0 = 0; j0 < n; j0 += 2 * kStepPanel) {
    const int64_t cols = n - j0 < 2 * kStepPanel ? n - j0 : 2 * kStepPanel;
    for (int64_t g = 0, i = 0; g < groups; ++g) {
      const int64_t rows = m / groups + (g < m % groups ? 1 : 0);
      StepRowsDispatch<S>(static_cast<int>(rows), cols, k, a + i * lda, lda, packed + j0 * k, c + i * ldc + j0, ldc);
      i += rows;
    }
  }
}

}  // namespace
}  // namespace rnn
}  // namespace onnx_light
