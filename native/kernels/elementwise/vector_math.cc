#include "native/kernels/elementwise/vector_math.h"

#include <cmath>

namespace onnx_light {
namespace elementwise {
namespace vector_math {
namespace {

// ------------------------------------------------------------------------ exact scalar

void ExpScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}
void SigmoidScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    const double e = std::exp(-std::fabs(x));
    out[i] = static_cast<float>(x >= 0 ? 1 / (1 + e) : e / (1 + e));
  }
}
void TanhScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
}
void GeluErfScalar(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = static_cast<float>(0.5 * x * std::erfc(-x * M_SQRT1_2));
  }
}
void GeluTanhScalar(const float* in, float* out, int64_t n) {
  const double k = std::sqrt(2 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    // = 0.5 x (1 + tanh u) without its cancellation for negative x.
    out[i] = static_cast<float>(x / (1 + std::exp(-2 * k * (x + 0.044715 * x * x * x))));
  }
}

const SpanKernels kScalar = {"scalar", ExpScalar, SigmoidScalar, TanhScalar, GeluErfScalar, GeluTanhScalar};

}  // namespace

const SpanKernels& Scalar() { return kScalar; }

#if defined(__x86_64__)
// Defined in vector_math_avx2.cc and vector_math_avx512.cc (isa_library targets, compiled
// for those ISAs throughout): reach them only through the CPU checks below.
const SpanKernels& Avx2Kernels();
const SpanKernels& Avx512Kernels();
#elif defined(__aarch64__)
const SpanKernels& NeonKernels();  // vector_math_neon.cc: Advanced SIMD is architectural
#endif

const SpanKernels* Avx2() {
#if defined(__x86_64__)
  static const bool supported = IsaEnabled(Isa::kAvx2);
  return supported ? &Avx2Kernels() : nullptr;
#else
  return nullptr;
#endif
}

const SpanKernels* Avx512() {
#if defined(__x86_64__)
  static const bool supported = IsaEnabled(Isa::kAvx512);
  return supported ? &Avx512Kernels() : nullptr;
#else
  return nullptr;
#endif
}

const SpanKernels* Neon() {
#if defined(__aarch64__)
  return &NeonKernels();
#else
  return nullptr;
#endif
}

std::vector<const SpanKernels*> Vectorised() {
  std::vector<const SpanKernels*> available;
  for (const SpanKernels* kernels : {Avx512(), Avx2(), Neon()}) {
    if (kernels != nullptr) available.push_back(kernels);
  }
  return available;
}

const std::vector<IsaVariant<const SpanKernels& (*)()>>& Variants() {
  static const auto* variants = new std::vector<IsaVariant<const SpanKernels& (*)()>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, Avx512Kernels}, {"avx2", Isa::kAvx2, Avx2Kernels},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, NeonKernels},
#endif
        {"portable", Isa::kPortable, Scalar},
  };
  return *variants;
}

const SpanKernels& Best() {
  static const SpanKernels* best = Avx512() ? Avx512() : Avx2() ? Avx2() : Neon() ? Neon() : &Scalar();
  return *best;
}

}  // namespace vector_math
}  // namespace elementwise
}  // namespace onnx_light
