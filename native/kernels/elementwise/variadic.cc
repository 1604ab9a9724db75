// Sum, Mean, Min and Max over one or more inputs with broadcasting (family math_binary).
// Min and Max propagate NaN (as numpy's minimum/maximum do).
#include <type_traits>

#include "native/kernels/elementwise/binary_kernel.h"
#include "native/kernels/elementwise/registration.h"

namespace onnx_light {
namespace elementwise {
namespace {

struct SumOp : NoAttributes {
  using Types = FloatsBf;
  static constexpr bool kHasFinish = false;
  template <class C>
  C operator()(C a, C b) const {
    return a + b;
  }
};

struct MeanOp : SumOp {
  static constexpr bool kHasFinish = true;
  template <class C>
  static C Finish(C sum, int count) {
    return sum / static_cast<C>(count);
  }
};

struct MinOp : NoAttributes {
  using Types = NumbersBf;
  static constexpr bool kHasFinish = false;
  template <class C>
  C operator()(C a, C b) const {
    return (a < b || a != a) ? a : b;
  }
};

struct MaxOp : NoAttributes {
  using Types = NumbersBf;
  static constexpr bool kHasFinish = false;
  template <class C>
  C operator()(C a, C b) const {
    return (a > b || a != a) ? a : b;
  }
};

OL_REGISTER_KERNELS(elementwise_variadic) {
  const std::vector<OpsetTypes> sum_versions = {Since(1, Floats{}), Since(6, Floats{}), Since(8, Floats{}),
                                                Since(13, FloatsBf{})};
  Elementwise(Kernel("Sum").Opsets(sum_versions), kCheapMinimumElements)
      .Factory(MakeKernel<VariadicKernel<SumOp>>())
      .AddTo(registry);
  Elementwise(Kernel("Mean").Opsets(sum_versions), kCheapMinimumElements)
      .Factory(MakeKernel<VariadicKernel<MeanOp>>())
      .AddTo(registry);
  const std::vector<OpsetTypes> min_max_versions = {Since(1, Floats{}), Since(6, Floats{}), Since(8, Floats{}),
                                                    Since(12, Numbers{}), Since(13, NumbersBf{})};
  Elementwise(Kernel("Min").Opsets(min_max_versions), kCheapMinimumElements)
      .Factory(MakeKernel<VariadicKernel<MinOp>>())
      .AddTo(registry);
  Elementwise(Kernel("Max").Opsets(min_max_versions), kCheapMinimumElements)
      .Factory(MakeKernel<VariadicKernel<MaxOp>>())
      .AddTo(registry);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
