// Helpers shared by the text kernels (family text): typed input checks.
#pragma once

#include <string>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace text {

// Input `index` as a string tensor, InvalidArgument naming the op and the type otherwise.
inline StatusOr<const Tensor*> StringInput(const KernelContext& ctx, int index, const std::string& where) {
  OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(index));
  if (t->dtype() != DataType::kString) {
    return InvalidArgument(where, ": input ", index, " must be string, got ", t->TypeAndShape());
  }
  return t;
}

}  // namespace text
}  // namespace onnx_light
