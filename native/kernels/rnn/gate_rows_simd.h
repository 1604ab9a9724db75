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

// kRows rows of a against one panel: kRows x kStepPanel accumulators, the panel's row q
// loaded once and multiplied by every row's a[q]. `cols` of the panel's columns are stored.
template <class S, int kRows>
void StepPanelRows(int64_t k, const float* a, int64_t lda, const float* panel, float* c, int64_t ldc, int64_t cols) {
  constexpr int kVecs = static_cast<int>(kStepPanel) / S::kLanes;
  typename S::V acc[kRows][kVecs];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVecs; ++v) acc[r][v] = S::Set(0.0f);
  }
  for (int64_t q = 0; q < k; ++q) {
    const float* b = panel + q * kStepPanel;
    typename S::V bv[kVecs];
    for (int v = 0; v < kVecs; ++v) bv[v] = S::Load(b + v * S::kLanes);
    for (int r = 0; r < kRows; ++r) {
      const typename S::V x = S::Set(a[r * lda + q]);
      for (int v = 0; v < kVecs; ++v) acc[r][v] = S::Fmadd(x, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    if (cols == kStepPanel) {
      for (int v = 0; v < kVecs; ++v) S::Store(c + r * ldc + v * S::kLanes, acc[r][v]);
    } else {
      float buffer[kStepPanel];
      for (int v = 0; v < kVecs; ++v) S::Store(buffer + v * S::kLanes, acc[r][v]);
      std::memcpy(c + r * ldc, buffer, static_cast<size_t>(cols) * sizeof(float));
    }
  }
}

// GateRows::product: panel by panel (a panel stays in L1 while every group of rows passes
// over it), in groups of up to 8 accumulator vectors' worth of rows.
template <class S>
void StepProductSimd(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed, float* c,
                     int64_t ldc) {
  constexpr int kVecs = static_cast<int>(kStepPanel) / S::kLanes;
  constexpr int kMaxRows = kVecs >= 8 ? 1 : 8 / kVecs;
  for (int64_t j0 = 0; j0 < n; j0 += kStepPanel) {
    const float* panel = packed + j0 * k;
    const int64_t cols = n - j0 < kStepPanel ? n - j0 : kStepPanel;
    for (int64_t i = 0; i < m; i += kMaxRows) {
      [[maybe_unused]] const int64_t rows = m - i < kMaxRows ? m - i : kMaxRows;  // unused on NEON (1 row)
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j0;
      if constexpr (kMaxRows >= 4) {
        if (rows == 4) {
          StepPanelRows<S, 4>(k, ai, lda, panel, ci, ldc, cols);
          continue;
        }
        if (rows == 3) {
          StepPanelRows<S, 3>(k, ai, lda, panel, ci, ldc, cols);
          continue;
        }
      }
      if constexpr (kMaxRows >= 2) {
        if (rows == 2) {
          StepPanelRows<S, 2>(k, ai, lda, panel, ci, ldc, cols);
          continue;
        }
      }
      StepPanelRows<S, 1>(k, ai, lda, panel, ci, ldc, cols);
    }
  }
}

}  // namespace
}  // namespace rnn
}  // namespace onnx_light
