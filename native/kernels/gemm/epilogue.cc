#include "native/kernels/gemm/epilogue.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace onnx_light {
namespace gemm {

#if defined(__x86_64__)
// epilogue_avx2.cc, epilogue_avx512.cc (isa_library targets): call only after IsaEnabled.
EpilogueSpans EpilogueSpansAvx2();
EpilogueSpans EpilogueSpansAvx512();
#elif defined(__aarch64__)
EpilogueSpans EpilogueSpansNeon();
#endif

namespace {

// The portable spans: the unary family's exact scalar forms (sigmoid in double through
// e^-|x|, libm's tanhf).
void SigmoidPortable(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = y[i];
    const double e = std::exp(-std::fabs(x));
    y[i] = static_cast<float>(x >= 0 ? 1 / (1 + e) : e / (1 + e));
  }
}
void TanhPortable(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
}
// Gelu as the elementwise family's exact scalar forms (vector_math.cc), in double.
void GeluErfPortable(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = y[i];
    y[i] = static_cast<float>(0.5 * x * std::erfc(-x * M_SQRT1_2));
  }
}
void GeluTanhPortable(float* y, int64_t n) {
  const double k = std::sqrt(2 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double x = y[i];
    y[i] = static_cast<float>(x / (1 + std::exp(-2 * k * (x + 0.044715 * x * x * x))));
  }
}

// Clamps to [0, 1]; NaN stays NaN (as math_unary's UnitClamp).
inline float UnitClamp(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }

const EpilogueSpans& BestSpans() {
  static const EpilogueSpans best = BestVariant(EpilogueSpanVariants()).impl;
  return best;
}

// The portable EpilogueSpans::run: one pass per step, the activations in scalar float (the
// separate kernels' forms), Sigmoid/Tanh/Gelu through the portable spans.
void RunPortable(const Epilogue& e, float* y, int64_t n, const float* row_bias, const float* bias, const float* z) {
  if (row_bias != nullptr) {
    const float b = *row_bias;
    for (int64_t i = 0; i < n; ++i) y[i] += b;
  }
  if (bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] += bias[i];
  }
  if (z != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] += z[i];
  }
  switch (e.activation) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      for (int64_t i = 0; i < n; ++i) {
        const float x = y[i];
        y[i] = x > 0.0f ? x : (x != x ? x : 0.0f);
      }
      return;
    case Activation::kClip: {
      const float lo = e.alpha, hi = e.beta;
      for (int64_t i = 0; i < n; ++i) {
        const float low = y[i] < lo ? lo : y[i];  // the Clip kernel's order; NaN stays NaN
        y[i] = low > hi ? hi : low;
      }
      return;
    }
    case Activation::kLeakyRelu: {
      const float alpha = e.alpha;
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? alpha * y[i] : y[i];
      return;
    }
    case Activation::kSigmoid:
      return SigmoidPortable(y, n);
    case Activation::kTanh:
      return TanhPortable(y, n);
    case Activation::kHardSigmoid: {
      const float alpha = e.alpha, beta = e.beta;
      for (int64_t i = 0; i < n; ++i) y[i] = UnitClamp(alpha * y[i] + beta);
      return;
    }
    case Activation::kHardSwish:
      for (int64_t i = 0; i < n; ++i) {
        const float x = y[i];
        y[i] = x * UnitClamp(x / 6.0f + 0.5f);
      }
      return;
    case Activation::kGelu:
      return GeluErfPortable(y, n);
    case Activation::kGeluTanh:
      return GeluTanhPortable(y, n);
    case Activation::kSwish: {
      // As the Swish kernel (and Sigmoid then Mul for alpha 1): s = sigmoid(alpha x), x * s.
      constexpr int64_t kChunk = 256;
      float s[kChunk];
      const float alpha = e.alpha;
      for (int64_t start = 0; start < n; start += kChunk) {
        const int64_t m = std::min(kChunk, n - start);
        for (int64_t i = 0; i < m; ++i) s[i] = alpha * y[start + i];
        SigmoidPortable(s, m);
        for (int64_t i = 0; i < m; ++i) y[start + i] = y[start + i] * s[i];
      }
      return;
    }
  }
}

constexpr const char* kConvNames = "Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Swish";
constexpr const char* kGemmNames = "Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Swish, Gelu, FastGelu";

bool ActivationByName(const std::string& name, Activation* activation) {
  static const std::pair<const char*, Activation> kNames[] = {
      {"Relu", Activation::kRelu},           {"Clip", Activation::kClip},   {"LeakyRelu", Activation::kLeakyRelu},
      {"Sigmoid", Activation::kSigmoid},     {"Tanh", Activation::kTanh},   {"HardSigmoid", Activation::kHardSigmoid},
      {"HardSwish", Activation::kHardSwish}, {"Swish", Activation::kSwish}, {"Gelu", Activation::kGelu},
      {"FastGelu", Activation::kGeluTanh}};
  if (name.empty()) {
    *activation = Activation::kNone;
    return true;
  }
  for (const auto& [n, a] : kNames) {
    if (name == n) {
      *activation = a;
      return true;
    }
  }
  return false;
}

// Parameters each activation takes, and the ONNX ops' defaults.
int ParamCount(Activation a) {
  switch (a) {
    case Activation::kClip:
    case Activation::kHardSigmoid:
      return 2;
    case Activation::kLeakyRelu:
    case Activation::kSwish:
      return 1;
    default:
      return 0;
  }
}
void SetDefaults(Epilogue* e) {
  switch (e->activation) {
    case Activation::kClip:
      e->alpha = std::numeric_limits<float>::lowest();
      e->beta = std::numeric_limits<float>::max();
      return;
    case Activation::kLeakyRelu:
      e->alpha = 0.01f;
      return;
    case Activation::kHardSigmoid:
      e->alpha = 0.2f;
      e->beta = 0.5f;
      return;
    case Activation::kSwish:
      e->alpha = 1.0f;
      return;
    default:
      return;
  }
}

}  // namespace

const std::vector<IsaVariant<EpilogueSpans>>& EpilogueSpanVariants() {
  static const auto* variants = new std::vector<IsaVariant<EpilogueSpans>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, IsaEnabled(Isa::kAvx512) ? EpilogueSpansAvx512() : EpilogueSpans{}},
        {"avx2", Isa::kAvx2, IsaEnabled(Isa::kAvx2) ? EpilogueSpansAvx2() : EpilogueSpans{}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, EpilogueSpansNeon()},
#endif
        {"portable", Isa::kPortable,
         EpilogueSpans{SigmoidPortable, TanhPortable, GeluErfPortable, GeluTanhPortable, RunPortable}},
  };
  return *variants;
}

void Epilogue::Apply(float* y, int64_t offset, int64_t rows, int64_t cols, int64_t ld) const {
  if (empty()) return;
  FinishRows(this, nullptr, y, offset, rows, cols, ld);
}

void FinishRows(const Epilogue* epilogue, const float* row_bias, float* y, int64_t offset, int64_t rows, int64_t cols,
                int64_t ld) {
  static const Epilogue kNothing;
  const Epilogue& e = epilogue != nullptr ? *epilogue : kNothing;
  if (rows <= 0 || cols <= 0 || (e.empty() && row_bias == nullptr)) return;
  const auto run = BestSpans().run;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t start = offset + r * ld;
    float* row = y + r * ld;
    const float* rb = row_bias != nullptr ? row_bias + r : nullptr;
    const float* z = e.residual != nullptr ? e.residual + start : nullptr;
    if (e.bias == nullptr) {
      run(e, row, cols, rb, nullptr, z);
      continue;
    }
    // Split where the run crosses an output row (the bias starts again): a GEMV chunk of
    // an N == 1 product is a column, each element in a row of its own.
    for (int64_t done = 0; done < cols;) {
      const int64_t column = (start + done) % e.bias_columns;
      const int64_t length = std::min(cols - done, e.bias_columns - column);
      run(e, row + done, length, rb, e.bias + column, z != nullptr ? z + done : nullptr);
      done += length;
    }
  }
}

StatusOr<Epilogue> ParseConvActivation(const std::string& where, const std::string& name,
                                       const std::vector<float>& params) {
  Epilogue e;
  if (!ActivationByName(name, &e.activation) || e.activation == Activation::kGelu ||
      e.activation == Activation::kGeluTanh) {
    return InvalidArgument(where, ": activation '", name, "' is not supported (supported: ", kConvNames, ")");
  }
  SetDefaults(&e);
  const int count = ParamCount(e.activation);
  if (!params.empty() && static_cast<int>(params.size()) != count) {
    return InvalidArgument(where, ": activation ", name, " takes ", count, " activation_params, got ", params.size());
  }
  if (count >= 1 && !params.empty()) e.alpha = params[0];
  if (count >= 2 && !params.empty()) e.beta = params[1];
  return e;
}

StatusOr<Epilogue> ParseGemmActivation(const std::string& where, const std::string& name, float alpha, float beta) {
  Epilogue e;
  if (!ActivationByName(name, &e.activation) || e.activation == Activation::kClip) {
    return InvalidArgument(where, ": activation '", name, "' is not supported (supported: ", kGemmNames, ")");
  }
  SetDefaults(&e);
  const int count = ParamCount(e.activation);
  if (count >= 1 && !std::isnan(alpha)) e.alpha = alpha;
  if (count >= 2 && !std::isnan(beta)) e.beta = beta;
  return e;
}

}  // namespace gemm
}  // namespace onnx_light
