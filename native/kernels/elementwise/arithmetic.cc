// Add, Sub, Mul, Div, Mod and PRelu (family math_binary).
//
// Integer results are defined everywhere (documented in README.md): arithmetic wraps
// (two's complement), x / 0 = 0 and x mod 0 = 0, INT_MIN / -1 = INT_MIN, INT_MIN mod -1 = 0.
// Floating point follows IEEE 754 (x / 0 = +-inf or NaN).
#include <cmath>
#include <type_traits>

#include "native/kernels/elementwise/binary_kernel.h"
#include "native/kernels/elementwise/registration.h"

namespace onnx_light {
namespace elementwise {
namespace {

struct AddOp : NoAttributes {
  using Types = NumbersBf;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return WrapAdd(a, b);
    else
      return a + b;
  }
};

struct SubOp : NoAttributes {
  using Types = NumbersBf;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return WrapSub(a, b);
    else
      return a - b;
  }
};

struct MulOp : NoAttributes {
  using Types = NumbersBf;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return WrapMul(a, b);
    else
      return a * b;
  }
};

struct DivOp : NoAttributes {
  using Types = NumbersBf;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return WrapNeg(a);  // INT_MIN / -1 traps in hardware
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

// fmod = 0: floor modulo (sign of the divisor, numpy's mod); fmod = 1: truncating (C's fmod).
struct ModOp {
  using Types = NumbersBf;
  template <typename T>
  using Out = T;
  static constexpr bool kBroadcastToFirst = false;
  bool truncate = false;

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t fmod, info.GetInt("fmod", 0));
    if (fmod != 0 && fmod != 1) return InvalidArgument(info.Where(), ": attribute fmod must be 0 or 1, got ", fmod);
    truncate = fmod == 1;
    return Status::Ok();
  }

  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      C r = 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // INT_MIN % -1 traps in hardware
      }
      r = static_cast<C>(a % b);
      if constexpr (std::is_signed_v<C>) {
        if (!truncate && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      }
      return r;
    } else {
      C r = std::fmod(a, b);
      if (truncate) return r;
      if (r != 0) {
        if ((r < 0) != (b < 0)) r += b;
      } else {
        r = std::copysign(C(0), b);
      }
      return r;
    }
  }
};

// y = x < 0 ? slope * x : x, the slope broadcast to x's shape.
struct PReluOp : NoAttributes {
  using Types = TypeList<float, double, Float16, BFloat16, uint32_t, uint64_t, int32_t, int64_t>;
  static constexpr bool kBroadcastToFirst = true;
  template <class C>
  C operator()(C x, C slope) const {
    if constexpr (std::is_integral_v<C>)
      return x < 0 ? WrapMul(x, slope) : x;
    else
      return x < 0 ? x * slope : x;
  }
};

using Arith6 = TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double>;
using Arith13 = TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double, BFloat16>;

template <typename Op>
void RegisterArithmetic(KernelRegistry& registry, const char* op) {
  RegisterBinary<Op>(registry,
                     Kernel(op).Opsets({Since(1, Floats{}), Since(6, Arith6{}), Since(7, Arith6{}),
                                        Since(13, Arith13{}), Since(14, NumbersBf{})}),
                     kCheapMinimumElements);
}

OL_REGISTER_KERNELS(elementwise_arithmetic) {
  RegisterArithmetic<AddOp>(registry, "Add");
  RegisterArithmetic<SubOp>(registry, "Sub");
  RegisterArithmetic<MulOp>(registry, "Mul");
  RegisterArithmetic<DivOp>(registry, "Div");
  RegisterBinary<ModOp>(registry,
                        Kernel("Mod").Opsets({Since(10, Numbers{}), Since(13, NumbersBf{}), Since(28, NumbersBf{})}),
                        kCheapMinimumElements);
  using PRelu9 = TypeList<Float16, float, double, uint32_t, uint64_t, int32_t, int64_t>;
  RegisterBinary<PReluOp>(registry,
                          Kernel("PRelu").Opsets({Since(1, Floats{}), Since(6, Floats{}), Since(7, Floats{}),
                                                  Since(9, PRelu9{}), Since(16, PReluOp::Types{})}),
                          kCheapMinimumElements);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
