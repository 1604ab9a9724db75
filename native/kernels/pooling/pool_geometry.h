// Pool attributes (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode) and the
// geometry they give an [N, C, D1..Dk] input, as the ONNX pooling operators define it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/registry/kernel.h"

namespace onnx_light {

inline constexpr int kMaxPoolRank = 8;  // spatial dimensions

struct PoolAttributes {
  std::vector<int64_t> kernel, strides, pads, dilations;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
  // Reads the attributes (kernel_shape required); checks lengths and signs.
  Status Init(const KernelInfo& info);
};

struct PoolGeometry {
  int rank = 0;  // spatial rank
  std::array<int64_t, kMaxPoolRank> in{}, out{}, kernel{}, stride{}, dilation{}, pad_begin{}, pad_end{};
  int64_t planes = 0;     // N * C
  int64_t in_plane = 1;   // elements per input plane
  int64_t out_plane = 1;  // elements per output plane
  Shape output_shape;
};

// InvalidArgument naming `where` and the shapes when the input rank does not match the
// kernel or an output dimension would be empty or negative.
StatusOr<PoolGeometry> MakePoolGeometry(const PoolAttributes& attrs, const Shape& x, const std::string& where);

// For one output position along dimension d: the window's first input index and the
// valid tap range [lo, hi) (taps whose input index lies inside the input).
struct WindowSpan {
  int64_t start, lo, hi;
};
// Internal linkage and no std:: helpers: the AVX2 interior rows (pool_rows_avx2.cc) inline
// it under AVX2 flags, and an external-linkage copy compiled there could be the one every
// caller gets (native/kernels/common/README.md).
namespace {
inline WindowSpan SpanOf(const PoolGeometry& g, int d, int64_t o) {
  const int64_t start = o * g.stride[d] - g.pad_begin[d];
  const int64_t dil = g.dilation[d];
  if (dil == 1) {  // the common case, without the divisions
    int64_t hi = g.in[d] - start;
    hi = hi < 0 ? 0 : hi > g.kernel[d] ? g.kernel[d] : hi;
    const int64_t lo = start < 0 ? -start : 0;
    return {start, lo < hi ? lo : hi, hi};
  }
  int64_t lo = start < 0 ? (-start + dil - 1) / dil : 0;
  int64_t hi = g.in[d] - start <= 0 ? 0 : (g.in[d] - start + dil - 1) / dil;
  if (hi > g.kernel[d]) hi = g.kernel[d];
  if (lo > hi) lo = hi;
  return {start, lo, hi};
}
}  // namespace

}  // namespace onnx_light
