// Float transcendental spans for the unary family: an exact scalar implementation (libm per
// element, intermediate double where it buys accuracy) and, on x86-64 CPUs with AVX2+FMA,
// vectorised polynomial approximations within ~2e-7 relative error of the exact values
// (checked in vector_math_test). One implementation is chosen per process, so every
// element of a tensor is computed by the same code whatever the block boundaries.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace elementwise {
namespace vector_math {

using SpanFn = void (*)(const float* in, float* out, int64_t n);

struct SpanKernels {
  const char* isa;
  SpanFn exp;
  SpanFn sigmoid;
  SpanFn tanh;
  SpanFn gelu_erf;   // 0.5 x (1 + erf(x / sqrt 2))
  SpanFn gelu_tanh;  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
};

const SpanKernels& Scalar();
// Null when the build or the CPU has no AVX2+FMA.
const SpanKernels* Avx2();
// The best available for this CPU, chosen once.
const SpanKernels& Best();

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
