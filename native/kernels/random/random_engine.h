// The random source of the random family: std::mt19937 with fully specified
// distributions (53-bit uniform doubles, Box-Muller normals), so that a seeded node gives
// the same values on every platform and standard library. Serial by design: one sequence
// per node run, drawn in element order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace random {

// The `seed` attribute (a float for the Random* ops, an int for Dropout): absent -> a
// fresh seed from std::random_device per run; present -> its value (a float's bit
// pattern) seeds every run alike (reruns give the same values).
class SeedPolicy {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.FindAttribute("seed");
    if (a == nullptr) return Status::Ok();
    seeded_ = true;
    if (a->type == Attribute::Type::kInt) {
      seed_ = static_cast<uint32_t>(a->i);
      return Status::Ok();
    }
    OL_ASSIGN_OR_RETURN(float seed, info.GetFloat("seed"));
    std::memcpy(&seed_, &seed, sizeof seed_);
    return Status::Ok();
  }
  std::mt19937 Engine() const { return std::mt19937(seeded_ ? seed_ : std::random_device{}()); }

 private:
  bool seeded_ = false;
  uint32_t seed_ = 0;
};

// Uniform double in [0, 1) from two 32-bit draws (53 random bits).
inline double Uniform01(std::mt19937& engine) {
  const uint32_t a = engine() >> 5, b = engine() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller; both values of each pair are used, in order.
class NormalSource {
 public:
  double Next(std::mt19937& engine) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - Uniform01(engine);  // (0, 1]: log stays finite
    const double u2 = Uniform01(engine);
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(6.283185307179586 * u2);
    has_spare_ = true;
    return r * std::cos(6.283185307179586 * u2);
  }

 private:
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Stores a double as output element type T (narrow floats round to nearest even).
template <typename T>
inline T StoreAs(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::FromDouble(v);
  } else {
    return static_cast<T>(v);
  }
}

using FloatOutputs = TypeList<float, double, Float16, BFloat16>;

}  // namespace random
}  // namespace onnx_light
