// Row conversions between tensor element types and the attention compute type (float for
// float/float16/bfloat16 tensors, double for double ones). One switch per row, so the
// per-element loops stay simple enough for the compiler to vectorise.
#pragma once

#include <cstdint>
#include <type_traits>

#include "native/core/data_type.h"
#include "native/core/narrow_float.h"

namespace onnx_light {
namespace attention {

template <typename C, typename Src>
inline C ToCompute(Src v) {
  if constexpr (std::is_same_v<Src, Float16> || std::is_same_v<Src, BFloat16>) {
    return static_cast<C>(v.ToFloat());
  } else {
    return static_cast<C>(v);
  }
}

template <typename C, typename Src>
void ConvertRow(const Src* src, int64_t n, C* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = ToCompute<C>(src[i]);
}

// True for the element types LoadRow reads (floating and integer numbers, bool as 0/1).
bool IsLoadableNumeric(DataType type);

// out[0, n) = row starting at element `index` of `base` (of type `type`), converted to C.
// `type` must satisfy IsLoadableNumeric (callers validate it first).
template <typename C>
void LoadRow(DataType type, const void* base, int64_t index, int64_t n, C* out) {
  switch (type) {
#define OL_LOAD(D, T) \
  case DataType::D:   \
    return ConvertRow(static_cast<const T*>(base) + index, n, out);
    OL_LOAD(kFloat, float)
    OL_LOAD(kDouble, double)
    OL_LOAD(kFloat16, Float16)
    OL_LOAD(kBFloat16, BFloat16)
    OL_LOAD(kInt8, int8_t)
    OL_LOAD(kUint8, uint8_t)
    OL_LOAD(kInt16, int16_t)
    OL_LOAD(kUint16, uint16_t)
    OL_LOAD(kInt32, int32_t)
    OL_LOAD(kUint32, uint32_t)
    OL_LOAD(kInt64, int64_t)
    OL_LOAD(kUint64, uint64_t)
    OL_LOAD(kBool, bool)
#undef OL_LOAD
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = C(0);
  }
}

// One rounding step from the compute type (no double rounding through float).
template <typename Narrow, typename C>
Narrow RoundTo(C v) {
  if constexpr (std::is_same_v<C, double>) {
    return Narrow::FromDouble(v);
  } else {
    return Narrow::FromFloat(v);
  }
}

template <typename T>
T FromFloat(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return T::FromFloat(v);
  }
}

// Row of C values stored at element `index` of `base`, rounded to `type` (a float type).
template <typename C>
void StoreRow(DataType type, void* base, int64_t index, const C* in, int64_t n) {
  switch (type) {
    case DataType::kFloat: {
      float* d = static_cast<float*>(base) + index;
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(in[i]);
      return;
    }
    case DataType::kDouble: {
      double* d = static_cast<double*>(base) + index;
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<double>(in[i]);
      return;
    }
    case DataType::kFloat16: {
      Float16* d = static_cast<Float16*>(base) + index;
      for (int64_t i = 0; i < n; ++i) d[i] = RoundTo<Float16>(in[i]);
      return;
    }
    case DataType::kBFloat16: {
      BFloat16* d = static_cast<BFloat16*>(base) + index;
      for (int64_t i = 0; i < n; ++i) d[i] = RoundTo<BFloat16>(in[i]);
      return;
    }
    default:
      return;
  }
}

// The four floating types the attention operators accept for their tensors.
inline bool IsAttentionFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kDouble;
}

}  // namespace attention
}  // namespace onnx_light
