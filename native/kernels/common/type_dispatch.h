// Element-type dispatch: named lists of C++ element types, and one function that turns a
// run-time DataType into a call with the C++ type.
//
// Contract:
// - A TypeList names the element types one code path is instantiated for; only those are
//   instantiated. The named lists below are the sets ONNX schemas use (named after their
//   members); combine them with + (decltype(Numbers{} + TypeList<bool>{})).
// - DispatchType(types, type, where, fn) calls fn(TypeTag<T>{}) for the T of `types` whose
//   DataType is `type` and returns its Status; for any other type it returns
//   NotImplemented "<where>: element type <name> is not supported", so pass the node's
//   Where() ("Add node 'n3'") and the message names op, node and type.
// - DataTypesOf(types) is the same list as DataTypes, for a registration's Types(...).
//
// Example:
//   return DispatchType(Numbers{}, x.dtype(), ctx.Where(), [&](auto tag) -> Status {
//     using T = typename decltype(tag)::type;
//     return Run<T>(x, y);
//   });
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/data_type.h"
#include "native/core/status.h"

namespace onnx_light {

template <typename... Ts>
struct TypeList {};

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename... A, typename... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

template <typename... Ts>
std::vector<DataType> DataTypesOf(TypeList<Ts...>) {
  return {kDataTypeOf<Ts>...};
}

template <typename... Ts, typename Fn>
Status DispatchType(TypeList<Ts...>, DataType type, const std::string& where, Fn&& fn) {
  Status result;
  const bool found = ((type == kDataTypeOf<Ts> ? (result = fn(TypeTag<Ts>{}), true) : false) || ...);
  if (!found) return NotImplemented(where, ": element type ", DataTypeName(type), " is not supported");
  return result;
}

// Type sets the ONNX schemas use.
using Floats = TypeList<float, double, Float16>;
using FloatsBf = TypeList<float, double, Float16, BFloat16>;
using Float8s = TypeList<Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ>;
using SignedInts = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedInts = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using Ints = decltype(SignedInts{} + UnsignedInts{});
using Numbers = decltype(Ints{} + Floats{});
using NumbersBf = decltype(Numbers{} + TypeList<BFloat16>{});

}  // namespace onnx_light
