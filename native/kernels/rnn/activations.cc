#include "native/kernels/rnn/activations.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "native/kernels/rnn/gate_rows.h"

namespace onnx_light {
namespace rnn {

template <typename C>
C Activation::operator()(C x) const {
  const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
  switch (kind) {
    case Kind::kSigmoid:
      return C(1) / (C(1) + std::exp(-x));
    case Kind::kTanh:
      return std::tanh(x);
    case Kind::kRelu:
      return x > C(0) ? x : C(0);
    case Kind::kAffine:
      return a * x + b;
    case Kind::kLeakyRelu:
      return x >= C(0) ? x : a * x;
    case Kind::kThresholdedRelu:
      return x > a ? x : C(0);
    case Kind::kScaledTanh:
      return a * std::tanh(b * x);
    case Kind::kHardSigmoid:
      return std::max(C(0), std::min(C(1), a * x + b));
    case Kind::kElu:
      return x >= C(0) ? x : a * (std::exp(x) - C(1));
    case Kind::kSoftsign:
      return x / (C(1) + std::fabs(x));
    case Kind::kSoftplus:
      return std::log1p(std::exp(x));
  }
  return x;
}
template float Activation::operator()(float) const;
template double Activation::operator()(double) const;

namespace {

template <typename C>
void ApplyRowLoop(const Activation& f, C* x, int64_t n) {
  const C a = static_cast<C>(f.alpha), b = static_cast<C>(f.beta);
  auto each = [&](auto fn) {
    for (int64_t i = 0; i < n; ++i) x[i] = fn(x[i]);
  };
  using K = Activation::Kind;
  switch (f.kind) {
    case K::kSigmoid:
      return each([](C v) { return C(1) / (C(1) + std::exp(-v)); });
    case K::kTanh:
      return each([](C v) { return std::tanh(v); });
    case K::kRelu:
      return each([](C v) { return v > C(0) ? v : C(0); });
    case K::kAffine:
      return each([&](C v) { return a * v + b; });
    case K::kLeakyRelu:
      return each([&](C v) { return v >= C(0) ? v : a * v; });
    case K::kThresholdedRelu:
      return each([&](C v) { return v > a ? v : C(0); });
    case K::kScaledTanh:
      return each([&](C v) { return a * std::tanh(b * v); });
    case K::kHardSigmoid:
      return each([&](C v) { return std::max(C(0), std::min(C(1), a * v + b)); });
    case K::kElu:
      return each([&](C v) { return v >= C(0) ? v : a * (std::exp(v) - C(1)); });
    case K::kSoftsign:
      return each([](C v) { return v / (C(1) + std::fabs(v)); });
    case K::kSoftplus:
      return each([](C v) { return std::log1p(std::exp(v)); });
  }
}

}  // namespace

void Activation::ApplyRow(float* x, int64_t n) const {
  if (kind == Kind::kSigmoid) return BestGateRows().sigmoid(x, n);
  if (kind == Kind::kTanh) return BestGateRows().tanh(x, n);
  ApplyRowLoop(*this, x, n);
}
void Activation::ApplyRow(double* x, int64_t n) const { ApplyRowLoop(*this, x, n); }

namespace {

struct Known {
  const char* name;
  Activation::Kind kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;
};

constexpr Known kKnown[] = {
    {"sigmoid", Activation::Kind::kSigmoid, false, false, 0, 0},
    {"tanh", Activation::Kind::kTanh, false, false, 0, 0},
    {"relu", Activation::Kind::kRelu, false, false, 0, 0},
    {"affine", Activation::Kind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", Activation::Kind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", Activation::Kind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", Activation::Kind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", Activation::Kind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", Activation::Kind::kElu, true, false, 1.0f, 0},
    {"softsign", Activation::Kind::kSoftsign, false, false, 0, 0},
    {"softplus", Activation::Kind::kSoftplus, false, false, 0, 0},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

StatusOr<std::vector<Activation>> ParseActivations(const std::vector<std::string>& names,
                                                   const std::vector<float>& alphas, const std::vector<float>& betas,
                                                   const std::vector<std::string>& defaults, int directions) {
  std::vector<std::string> list = names;
  if (list.empty()) {
    for (int d = 0; d < directions; ++d) list.insert(list.end(), defaults.begin(), defaults.end());
  }
  if (list.size() != defaults.size() * directions) {
    return InvalidArgument("activations: expected ", defaults.size() * directions, " functions, got ", list.size());
  }
  std::vector<Activation> out;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : list) {
    const std::string key = Lower(name);
    const Known* known = nullptr;
    for (const Known& k : kKnown) {
      if (key == k.name) known = &k;
    }
    if (known == nullptr) return InvalidArgument("activations: unknown function '", name, "'");
    Activation a{known->kind, known->alpha, known->beta};
    if (known->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (known->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

}  // namespace rnn
}  // namespace onnx_light
