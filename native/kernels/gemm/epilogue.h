// The epilogue of a fused kernel (com.microsoft FusedConv, FusedGemm): an optional
// per-column bias and an optional residual Z of the output's layout added, then one
// activation, applied to each output block right after the block is computed (while it is
// in cache), never as a second pass over the output. The convolution paths
// (conv/conv_float.cc) and the GEMM engine's output blocks (gemm.cc's RunTile and GEMV
// chunks) call Apply on the block they just wrote.
//
//   y = act((y + bias) + z)      (bias only when `bias` is set, z only when `residual` is)
//
// The bias is FusedGemm's C of one row ([N], [1, N]): added after the whole K reduction, it
// rounds as MatMul followed by Add does (one rounding, the Add kernel's), where C copied
// into the output before the product (Gemm's beta path) would be summed with the first K
// block instead.
//
// Activations and their parameters (ORT's FusedConv list, plus HardSwish):
//   Relu                  max(x, 0), NaN kept
//   Clip(min, max)        min(max(x, min), max)
//   LeakyRelu(alpha)      x < 0 ? alpha x : x
//   Sigmoid               simd/math.h's Sigmoid on this CPU's widest lanes (the same code
//                         and values as the Sigmoid kernel's vector path)
//   Tanh                  simd/math.h's Tanh, likewise
//   HardSigmoid(a, b)     clamp(a x + b, 0, 1)
//   HardSwish             x clamp(x / 6 + 1/2, 0, 1): MobileNetV3's activation, an extension
//                         beyond ORT's FusedConv list (ORT leaves Conv + HardSwish unfused)
//   Swish(alpha)          x sigmoid(alpha x) (ONNX Swish; alpha 1 is SiLU, EfficientNet's
//                         x * Sigmoid(x)): an extension too, sigmoid as above
//   Gelu, FastGelu        FusedGemm only: ONNX Gelu (erf form) and its tanh approximation
//                         (Gelu approximate="tanh", ORT's FastGelu), simd/math.h's GeluErf
//                         and GeluTanh on the same lanes as the Gelu kernel's vector path:
//                         the transformer's feed-forward MatMul + Add + Gelu in one kernel
// Each is written in the arithmetic order of the separate ONNX kernel (math_unary), so a
// fused result equals the unfused Conv/Gemm followed by that kernel bit for bit on the
// same ISA; the residual add is one rounding, as the Add kernel's. Bias, residual and
// activation run in one pass over each row on this CPU's widest lanes (EpilogueSpans::run
// of epilogue_<isa>.cc; scalar only on the portable variant): the stems and K = 16..24
// pointwise convolutions of MobileNetV3/EfficientNet spent as long in a scalar epilogue
// as in their multiply-adds (session 9, perf shares).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/status.h"
#include "native/kernels/common/isa_variants.h"

namespace onnx_light {
namespace gemm {

enum class Activation {
  kNone,
  kRelu,
  kClip,
  kLeakyRelu,
  kSigmoid,
  kTanh,
  kHardSigmoid,
  kHardSwish,
  kSwish,
  kGelu,
  kGeluTanh
};

struct Epilogue {
  Activation activation = Activation::kNone;
  // Clip: (min, max); LeakyRelu and Swish: (alpha, unused); HardSigmoid: (alpha, beta).
  float alpha = 0.0f, beta = 0.0f;
  // Z in the output's layout: the element of output index i is residual[i].
  const float* residual = nullptr;
  // A bias per output column: the element of output index i gets bias[i % bias_columns]
  // (bias_columns: the output's row length, N).
  const float* bias = nullptr;
  int64_t bias_columns = 0;

  bool empty() const { return activation == Activation::kNone && residual == nullptr && bias == nullptr; }

  // Block y[r * ld + c] (r < rows, c < cols) of the output, whose element y[0] has index
  // `offset` in the whole output (where its residual element is).
  void Apply(float* y, int64_t offset, int64_t rows, int64_t cols, int64_t ld) const;
};

// The GEMM engine's block finish (and Apply's body): row r of the block first gets
// row_bias[r] (row_bias nullable: a bias per output row, the convolutions' per-channel
// bias), then `epilogue` (nullable: none); one pass over each row on this CPU's widest
// lanes (EpilogueSpans::run), the same values as the separate passes.
void FinishRows(const Epilogue* epilogue, const float* row_bias, float* y, int64_t offset, int64_t rows, int64_t cols,
                int64_t ld);

// The activation named `name` ("" or absent: none) with its parameters as ORT's FusedConv
// takes them (`activation_params`: Clip [min, max], LeakyRelu [alpha], HardSigmoid
// [alpha, beta], Swish [alpha]; omitted: the ONNX ops' defaults). InvalidArgument naming `where`, the
// activation and the supported names for an unknown name or a wrong parameter count.
StatusOr<Epilogue> ParseConvActivation(const std::string& where, const std::string& name,
                                       const std::vector<float>& params);
// The same for FusedGemm's attributes: LeakyRelu takes activation_alpha, HardSigmoid
// activation_alpha and activation_beta, Swish activation_alpha (defaults as ONNX's when
// not given: pass NaN).
StatusOr<Epilogue> ParseGemmActivation(const std::string& where, const std::string& name, float alpha, float beta);

// In-place Sigmoid/Tanh/Gelu spans of one ISA (epilogue_<isa>.cc), and the whole epilogue
// on one contiguous run of n outputs in one pass:
//   y[i] = act(((y[i] + *row_bias) + bias[i]) + z[i])
// (each term only when its pointer is set; every add one rounding, in this order), the
// activation in registers on the same lanes as the spans (`run`: Epilogue::Apply and
// FinishRows call the best variant's). Every activation but Sigmoid, Tanh, Gelu, FastGelu
// and Swish's sigmoid is exact IEEE arithmetic, so every variant gives the portable
// variant's bits; those four give their span's values.
struct EpilogueSpans {
  void (*sigmoid)(float* y, int64_t n);
  void (*tanh)(float* y, int64_t n);
  void (*gelu_erf)(float* y, int64_t n);
  void (*gelu_tanh)(float* y, int64_t n);
  void (*run)(const Epilogue& e, float* y, int64_t n, const float* row_bias, const float* bias, const float* z);
};
// avx512, avx2 (x86-64), neon (aarch64), then the portable one (exact, libm in double).
const std::vector<IsaVariant<EpilogueSpans>>& EpilogueSpanVariants();

}  // namespace gemm
}  // namespace onnx_light
