// What every elementwise registration shares, on top of Kernel(op)
// (native/kernels/common/kernel_registration.h): the elementwise tuning schema with the
// op's portable parallel.minimum_elements, calibratable, and output 0 may be written into
// input 0 (the same index in, the same index out). A new op is one line and one functor:
//
//   RegisterUnary<ReluOp>(registry, Kernel("Relu").Opsets({Since(6, Floats{}), Since(14, FloatsBf{})}), cheap);
//   RegisterBinary<AddOp>(registry, Kernel("Add").Opsets({Since(7, Numbers{}), Since(14, NumbersBf{})}), cheap);
#pragma once

#include <cstdint>
#include <utility>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/elementwise/element_types.h"
#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace elementwise {

inline KernelRegistration Elementwise(KernelRegistration r, int64_t minimum_elements) {
  r.Tuning(ElementwiseTuning(minimum_elements)).Calibratable().OutputMayOverwriteInput(0);
  return r;
}

}  // namespace elementwise
}  // namespace onnx_light
