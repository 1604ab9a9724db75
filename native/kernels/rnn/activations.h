// The activation functions of RNN, GRU and LSTM (their `activations` attribute), with the
// alpha/beta defaults of the corresponding ONNX operators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/status.h"

namespace onnx_light {
namespace rnn {

struct Activation {
  enum class Kind {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kSigmoid;
  float alpha = 0, beta = 0;

  template <typename C>
  C operator()(C x) const;

  // x[i] = f(x[i]) for i < n: one dispatch per row. Float sigmoid and tanh take the
  // vectorised gate rows (gate_rows.h); the other functions and double run a plain loop.
  void ApplyRow(float* x, int64_t n) const;
  void ApplyRow(double* x, int64_t n) const;
};

// `names` (empty: `defaults`, repeated for each direction) with alpha/beta consumed in
// order by the functions that take them. InvalidArgument for unknown names or a count
// other than functions_per_direction x directions.
StatusOr<std::vector<Activation>> ParseActivations(const std::vector<std::string>& names,
                                                   const std::vector<float>& alphas, const std::vector<float>& betas,
                                                   const std::vector<std::string>& defaults, int directions);

}  // namespace rnn
}  // namespace onnx_light
