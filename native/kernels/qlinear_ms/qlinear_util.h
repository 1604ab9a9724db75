// What the com.microsoft QLinear* kernels share: reading a (scale, zero point) pair, the
// one quantization rule, the 256-entry lookup tables and the tuning schemas.
//
// The rule (ONNX Runtime's contrib ops): a quantized value q stands for
// scale * (q - zero_point); results are computed in float from those values and written
// back as Quantize(v) = saturate(round_half_to_even(v / scale) + zero_point). Every kernel
// here uses Dequantize/Quantize below and nothing else, so the tests' float references
// (loops written out in the tests) are that formula too.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/core/tensor.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace qlinear_ms {

using EightBit = TypeList<uint8_t, int8_t>;

// A per-tensor quantization: scale and zero point.
struct QParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Reads input `scale_index` (a float scalar or one-element tensor, required) and input
// `zp_index` (same element type as `type`, one element; absent = 0). InvalidArgument naming
// op, node and the offending input otherwise (also for a scale that is not finite and > 0).
StatusOr<QParams> ReadQParams(const Tensor* scale, const Tensor* zero_point, DataType type, const std::string& where,
                              const char* scale_name, const char* zp_name);

// The same at creation: the pair when both inputs are constant (an absent zero point, index
// at or past the node's inputs, counts as constant), else nothing (has_value false).
struct MaybeQParams {
  bool known = false;
  QParams params;
};
StatusOr<MaybeQParams> ConstantQParams(const KernelInfo& info, int scale_index, int zp_index, DataType type,
                                       const char* scale_name, const char* zp_name);

// "must be uint8 or int8" check of a data input.
Status CheckEightBit(const Tensor& t, const std::string& where, const char* what);

inline float Dequantize(int32_t q, const QParams& p) { return p.scale * static_cast<float>(q - p.zero_point); }

template <typename Q>
Q Quantize(float v, const QParams& p) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  float r = std::nearbyint(v / p.scale) + static_cast<float>(p.zero_point);  // default rounding: half to even
  if (!(r >= lo)) r = lo;  // NaN saturates low, as the range check of QuantizeLinear does
  if (r > hi) r = hi;
  return static_cast<Q>(r);
}

// table[q - min(Q)] = Quantize(f(Dequantize(q, x)), y) for every value q of Q.
template <typename Q, typename F>
std::vector<Q> BuildTable(const QParams& x, const QParams& y, F&& f) {
  std::vector<Q> table(256);
  for (int v = 0; v < 256; ++v) {
    const int32_t q = static_cast<int32_t>(std::numeric_limits<Q>::min()) + v;
    table[v] = Quantize<Q>(f(Dequantize(q, x)), y);
  }
  return table;
}

template <typename Q>
inline int TableIndex(Q q) {
  return static_cast<int>(q) - static_cast<int>(std::numeric_limits<Q>::min());
}

// Tuning of the element-per-element kernels (binary ops, lookup tables, concat copies).
inline constexpr int64_t kElementwiseMinimum = 65536;
// Table lookups and requantizing copies are about as cheap as a float add.
inline std::vector<ParamSpec> ElementTuning(int64_t minimum_elements = kElementwiseMinimum) {
  return {
      MinimumElementsParam(minimum_elements, "output elements below which the node runs serially"),
      ParamSpec::Int64(param::kBlockElements, 16384, 64, int64_t{1} << 30, "output elements per parallel block"),
  };
}

}  // namespace qlinear_ms
}  // namespace onnx_light
