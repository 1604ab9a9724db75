// Float transcendental spans for the unary family: an exact scalar implementation (libm per
// element, intermediate double where it buys accuracy) and, on x86-64 CPUs with AVX2+FMA
// or AVX-512F and on every AArch64 CPU (Advanced SIMD), vectorised polynomial approximations within ~2e-7 relative
// error of the exact values (checked in vector_math_test; one algorithm for every width, vector_math_impl.h). One
// implementation is chosen per process, so every element of a tensor is computed by the same code whatever the block
// boundaries.
#pragma once

#include <cstdint>
#include <vector>

#include "native/kernels/common/isa_variants.h"

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
// Null when the build or the CPU has no AVX2+FMA (resp. AVX-512), or the ISA cap excludes it.
const SpanKernels* Avx2();
const SpanKernels* Avx512();
// Null except on AArch64.
const SpanKernels* Neon();
// The vectorised implementations this CPU can run, widest first (empty on others).
std::vector<const SpanKernels*> Vectorised();
// The best available for this CPU (under the ISA cap), chosen once.
const SpanKernels& Best();
// Every implementation compiled for this architecture, best first, the exact scalar one
// (the reference) last, as getters: call one only when IsaEnabled(variant.isa).
const std::vector<IsaVariant<const SpanKernels& (*)()>>& Variants();

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
