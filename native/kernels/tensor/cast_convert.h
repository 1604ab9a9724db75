// Element conversion between every ONNX element type, as Cast and CastLike define it.
// Narrow floats go through the exact codecs of native/core/narrow_float.h (single RNE
// rounding); float <-> float16 takes an F16C path on x86-64 CPUs that have it.
#pragma once

#include <cstdint>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/narrow_float.h"
#include "native/core/status.h"
#include "native/kernels/common/isa_variants.h"

namespace onnx_light {

struct CastOptions {
  bool saturate = true;  // float8 targets only: clamp out-of-range values instead of inf/NaN
  ExponentRounding e8m0_rounding = ExponentRounding::kUp;  // float8e8m0 target only
};

// True when CastElements converts `from` into `to` (every pair of non-complex types).
bool CastSupported(DataType from, DataType to);

// Converts elements [begin, end) of `src` (type `from`) into the same positions of `dst`
// (type `to`). A string that is not a number gives InvalidArgument naming its index.
// Conventions where ONNX leaves the result undefined: a float outside the target integer's
// range saturates to 64 bits (NaN -> 0) and then wraps like integer narrowing (so in-range
// results match numpy); NaN into float4/float6 (which have no NaN) gives -0 as ml_dtypes does.
Status CastElements(DataType from, const void* src, DataType to, void* dst, int64_t begin, int64_t end,
                    const CastOptions& options);

namespace cast_internal {
// Vectorised float <-> float16 (bit patterns) when the CPU has AVX2 and F16C (and the ISA
// cap allows it); false otherwise (the caller then uses the scalar codec). Results equal
// the scalar codec's.
bool FloatToHalfFast(const float* src, uint16_t* dst, int64_t n);
bool HalfToFloatFast(const uint16_t* src, float* dst, int64_t n);

// The float <-> float16 codec of one ISA (cast_f16.cc): every variant compiled for this
// architecture, best first, the scalar codec ("portable") last.
struct HalfCodec {
  void (*float_to_half)(const float* src, uint16_t* dst, int64_t n);
  void (*half_to_float)(const uint16_t* src, float* dst, int64_t n);
};
const std::vector<IsaVariant<HalfCodec>>& HalfCodecVariants();
}  // namespace cast_internal

}  // namespace onnx_light
