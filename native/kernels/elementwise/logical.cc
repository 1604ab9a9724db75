// Comparisons, boolean logic and bitwise ops (family logical): Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, And, Or, Xor, BitwiseAnd, BitwiseOr, BitwiseXor, BitShift.
// Float comparisons are IEEE (NaN compares unequal); narrow floats compare as float.
#include <string>
#include <type_traits>

#include "native/kernels/elementwise/binary_kernel.h"
#include "native/kernels/elementwise/registration.h"

namespace onnx_light {
namespace elementwise {
namespace {

struct Comparison : NoAttributes {
  template <typename T>
  using Out = bool;
};

struct EqualOp : Comparison {
  using Types = decltype(TypeList<bool, std::string>{} + NumbersBf{});
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return a == b;
  }
};
struct LessOp : Comparison {
  using Types = NumbersBf;
  template <class C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct GreaterOp : Comparison {
  using Types = NumbersBf;
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct LessOrEqualOp : Comparison {
  using Types = NumbersBf;
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp : Comparison {
  using Types = NumbersBf;
  template <class C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};

struct AndOp : NoAttributes {
  using Types = TypeList<bool>;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : NoAttributes {
  using Types = TypeList<bool>;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : NoAttributes {
  using Types = TypeList<bool>;
  bool operator()(bool a, bool b) const { return a != b; }
};

struct BitwiseAndOp : NoAttributes {
  using Types = Ints;
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};
struct BitwiseOrOp : NoAttributes {
  using Types = Ints;
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};
struct BitwiseXorOp : NoAttributes {
  using Types = Ints;
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};

// Shift amounts outside [0, bits) give the sign fill alone: -1 for a right shift of a
// negative value, else 0 (the opset-28 definition; C++ leaves them undefined).
struct BitShiftOp {
  using Types = Ints;
  template <typename T>
  using Out = T;
  static constexpr bool kBroadcastToFirst = false;
  bool left = true;

  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::string direction, info.GetString("direction"));
    if (direction != "LEFT" && direction != "RIGHT") {
      return InvalidArgument(info.Where(), ": attribute direction must be LEFT or RIGHT, got '", direction, "'");
    }
    left = direction == "LEFT";
    return Status::Ok();
  }

  template <class C>
  C operator()(C x, C amount) const {
    using U = std::make_unsigned_t<C>;
    constexpr int kBits = 8 * sizeof(C);
    const bool in_range = amount >= 0 && static_cast<uint64_t>(amount) < kBits;
    if (left) return in_range ? static_cast<C>(static_cast<U>(static_cast<U>(x) << amount)) : C(0);
    if (in_range) return static_cast<C>(x >> amount);  // arithmetic for signed C (gcc)
    return x < 0 ? C(-1) : C(0);
  }
};

OL_REGISTER_KERNELS(elementwise_logical) {
  using Equal1 = TypeList<bool, int32_t, int64_t>;
  RegisterBinary<EqualOp>(
      registry,
      Kernel("Equal").Opsets({Since(1, Equal1{}), Since(7, Equal1{}), Since(11, TypeList<bool>{} + Numbers{}),
                              Since(13, TypeList<bool>{} + NumbersBf{}), Since(19, EqualOp::Types{})}),
      kCheapMinimumElements);
  const std::vector<OpsetTypes> less_versions = {Since(1, Floats{}), Since(7, Floats{}), Since(9, Numbers{}),
                                                 Since(13, NumbersBf{})};
  RegisterBinary<LessOp>(registry, Kernel("Less").Opsets(less_versions), kCheapMinimumElements);
  RegisterBinary<GreaterOp>(registry, Kernel("Greater").Opsets(less_versions), kCheapMinimumElements);
  const std::vector<OpsetTypes> or_equal_versions = {Since(12, Numbers{}), Since(16, NumbersBf{})};
  RegisterBinary<LessOrEqualOp>(registry, Kernel("LessOrEqual").Opsets(or_equal_versions), kCheapMinimumElements);
  RegisterBinary<GreaterOrEqualOp>(registry, Kernel("GreaterOrEqual").Opsets(or_equal_versions), kCheapMinimumElements);
  const std::vector<OpsetTypes> bool_versions = {Since(1, TypeList<bool>{}), Since(7, TypeList<bool>{})};
  RegisterBinary<AndOp>(registry, Kernel("And").Opsets(bool_versions), kCheapMinimumElements);
  RegisterBinary<OrOp>(registry, Kernel("Or").Opsets(bool_versions), kCheapMinimumElements);
  RegisterBinary<XorOp>(registry, Kernel("Xor").Opsets(bool_versions), kCheapMinimumElements);
  RegisterBinary<BitwiseAndOp>(registry, Kernel("BitwiseAnd").Opsets({Since(18, Ints{})}), kCheapMinimumElements);
  RegisterBinary<BitwiseOrOp>(registry, Kernel("BitwiseOr").Opsets({Since(18, Ints{})}), kCheapMinimumElements);
  RegisterBinary<BitwiseXorOp>(registry, Kernel("BitwiseXor").Opsets({Since(18, Ints{})}), kCheapMinimumElements);
  RegisterBinary<BitShiftOp>(registry, Kernel("BitShift").Opsets({Since(11, UnsignedInts{}), Since(28, Ints{})}),
                             kCheapMinimumElements);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
