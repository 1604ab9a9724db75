// Row conversions between tensor element types and the attention compute type (float for
// float/float16/bfloat16 tensors, double for double ones). One type dispatch per row, so
// the per-element loops stay simple enough for the compiler to vectorise.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "native/core/data_type.h"
#include "native/core/narrow_float.h"
#include "native/kernels/common/type_dispatch.h"

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

// The element types LoadRow reads (floating and integer numbers, bool as 0/1), and the
// four floating types the attention operators accept for their tensors (StoreRow's).
using LoadableTypes = decltype(NumbersBf{} + TypeList<bool>{});
using AttentionFloatTypes = TypeList<float, double, Float16, BFloat16>;

// Names the row helpers in the (unreachable: callers validate types) dispatch failure.
inline const std::string kElementRowsWhere = "attention element rows";

// True for LoadableTypes.
bool IsLoadableNumeric(DataType type);

// out[0, n) = row starting at element `index` of `base` (of type `type`), converted to C.
// `type` must satisfy IsLoadableNumeric (callers validate it first).
template <typename C>
void LoadRow(DataType type, const void* base, int64_t index, int64_t n, C* out) {
  const Status loaded = DispatchType(LoadableTypes{}, type, kElementRowsWhere, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ConvertRow(static_cast<const T*>(base) + index, n, out);
    return Status::Ok();
  });
  if (!loaded.ok()) std::fill(out, out + n, C(0));
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
  // Another type stores nothing (callers validate types first).
  (void)DispatchType(AttentionFloatTypes{}, type, kElementRowsWhere, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* d = static_cast<T*>(base) + index;
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        d[i] = RoundTo<T>(in[i]);
      } else {
        d[i] = static_cast<T>(in[i]);
      }
    }
    return Status::Ok();
  });
}
// True for AttentionFloatTypes.
inline bool IsAttentionFloat(DataType t) { return HasType(AttentionFloatTypes{}, t); }

}  // namespace attention
}  // namespace onnx_light
