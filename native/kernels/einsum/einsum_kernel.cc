// Einsum (opsets 12, 28): any equation (implicit or explicit output, ellipsis
// broadcasting, diagonals, sums, outer products). Each output element is the in-order sum
// over the contracted labels of the product of the inputs, accumulated in double for
// floating types and with wrapping in 64 bits for integers; output elements are split
// across participants (thresholded_parallel.h), so results never depend on the participant count.
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/kernels/einsum/einsum_plan.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace einsum {
namespace {

// Bounds of the per-element stack state (offsets per input, counters per label).
constexpr size_t kMaxInputs = 8;
constexpr size_t kMaxLabels = 64;

using EinsumTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t, Float16, float,
                             double, BFloat16>;

// Accumulator: double for floating types, uint64_t (wrapping, two's complement) for integers.
template <typename T>
using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T>
inline Acc<T> Load(const T& v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else if constexpr (std::is_floating_point_v<T>)
    return v;
  else
    return v.ToDouble();
}

template <typename T>
inline T Store(Acc<T> v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<int64_t>(v));
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return T::FromDouble(v);
}

class EinsumKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(equation_, info.GetString("equation"));
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(i));
      if (t->dtype() != ctx.input(0)->dtype()) {
        return InvalidArgument(where_, ": inputs must share one element type, got ", ctx.input(0)->TypeAndShape(),
                               " and ", t->TypeAndShape());
      }
      shapes.push_back(t->shape());
      inputs.push_back(t);
    }
    if (inputs.empty()) return InvalidArgument(where_, ": einsum needs at least one input");
    if (inputs.size() > kMaxInputs) {
      return NotImplemented(where_, ": einsum with ", inputs.size(), " inputs (at most ", kMaxInputs, ")");
    }
    OL_ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(equation_, shapes, where_));
    if (plan.sizes.size() > kMaxLabels) {
      return NotImplemented(where_, ": einsum with ", plan.sizes.size(), " labels (at most ", kMaxLabels, ")");
    }
    return DispatchType(EinsumTypes{}, inputs[0]->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, inputs[0]->dtype(), plan.output_shape));
      std::vector<const T*> data;
      for (const Tensor* t : inputs) data.push_back(t->data<T>());
      T* o = out->data<T>();
      const int64_t cost = plan.contraction_size * static_cast<int64_t>(inputs.size());
      return policy_.Run(ctx.parallel(), "Einsum", plan.output_size, cost, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) o[e] = Store<T>(OutputElement<T>(plan, data, e));
      });
    });
  }

 private:
  // Sum over the contracted labels (row-major odometer) for output element e.
  template <typename T>
  static Acc<T> OutputElement(const EinsumPlan& plan, const std::vector<const T*>& data, int64_t e) {
    const size_t n = data.size();
    const int labels = static_cast<int>(plan.sizes.size());
    int64_t base[kMaxInputs] = {0};  // offsets of output element e in every input
    int64_t rest = e;
    for (int a = plan.num_output_labels - 1; a >= 0; --a) {
      const int64_t index = rest % plan.sizes[a];
      rest /= plan.sizes[a];
      for (size_t i = 0; i < n; ++i) base[i] += index * plan.strides[i][a];
    }
    int64_t counter[kMaxLabels] = {0};
    int64_t offset[kMaxInputs];
    for (size_t i = 0; i < n; ++i) offset[i] = base[i];
    Acc<T> sum = 0;
    for (int64_t step = 0; step < plan.contraction_size; ++step) {
      Acc<T> product = Load(data[0][offset[0]]);
      for (size_t i = 1; i < n; ++i) product *= Load(data[i][offset[i]]);
      sum += product;
      for (int a = labels - 1; a >= plan.num_output_labels; --a) {  // advance the odometer
        for (size_t i = 0; i < n; ++i) offset[i] += plan.strides[i][a];
        if (++counter[a] < plan.sizes[a]) break;
        for (size_t i = 0; i < n; ++i) offset[i] -= plan.strides[i][a] * plan.sizes[a];
        counter[a] = 0;
      }
    }
    return sum;
  }

  std::string where_;
  std::string equation_;
  ThresholdedParallel policy_;
};

std::vector<DataType> EinsumTypesAt(int opset) {
  using D = DataType;
  std::vector<DataType> types = {D::kUint8, D::kUint16, D::kUint32,  D::kUint64, D::kInt8,  D::kInt16,
                                 D::kInt32, D::kInt64,  D::kFloat16, D::kFloat,  D::kDouble};
  if (opset >= 28) types.push_back(D::kBFloat16);
  return types;
}

OL_REGISTER_KERNELS(einsum) {
  Kernel("Einsum")
      .SinceVersions({12, 28})
      .TypesAt(EinsumTypesAt)
      .Tuning(WorkUnitTuning(32768, "output element"))
      .Calibratable()
      .Factory(MakeKernel<EinsumKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace einsum
}  // namespace onnx_light
