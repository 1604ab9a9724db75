// Test-only kernels of the domain "test.tuning":
//   TestScale(x)         y = 2x + 1, serial below parallel.minimum_elements
//   TestAdd(a, b)        y = a + b
//   TestWrongInParallel  like TestScale, but blocks after the first add 1: its parallel
//                        output differs from its serial output (a calibrator must reject it)
//   TestNeedsAttribute   like TestScale, with a required string attribute "direction"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

enum class Variant { kScale, kAdd, kWrongInParallel, kNeedsAttribute };

template <typename T, Variant V>
class TestElementwise : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (V == Variant::kNeedsAttribute) OL_RETURN_IF_ERROR(info.GetString("direction").status());
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64(param::kMinimumElements));
    OL_ASSIGN_OR_RETURN(grain_, info.tuning().Int64(param::kBlockElements));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Tensor* b = nullptr;
    if (V == Variant::kAdd) {
      OL_ASSIGN_OR_RETURN(b, ctx.RequiredInput(1));
      if (!(b->shape() == x->shape()) || b->dtype() != x->dtype()) {
        return InvalidArgument(ctx.Where(), ": inputs ", x->TypeAndShape(), " and ", b->TypeAndShape(), " differ");
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    const T* in = x->data<T>();
    const T* other = b ? b->data<T>() : nullptr;
    T* out = y->data<T>();
    auto block = [&](int64_t begin, int64_t end) {
      const T bias = V == Variant::kWrongInParallel && begin > 0 ? T(1) : T(0);
      for (int64_t i = begin; i < end; ++i) {
        out[i] = (V == Variant::kAdd ? in[i] + other[i] : T(2) * in[i] + T(1)) + bias;
      }
      return Status::Ok();
    };
    const int64_t n = x->num_elements();
    if (n < minimum_elements_) return block(0, n);
    return ParallelFor(ctx.parallel(), n, ParallelPlan{"test_tuning.elementwise", grain_}, block);
  }

 private:
  int64_t minimum_elements_ = 0;
  int64_t grain_ = 1;
};

template <Variant V>
KernelDef Def(const char* op) {
  KernelDef def;
  def.domain = "test.tuning";
  def.op = op;
  def.family = "tuning_test_kernels";
  def.element_types = {DataType::kFloat, DataType::kInt32};
  def.tuning = {MinimumElementsParam(32768), ParamSpec::Int64(param::kBlockElements, 1024, 1, int64_t{1} << 40,
                                                              "elements per parallel block, at least")};
  def.calibratable = true;
  def.factory = [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
    if (info.input_type(0) == DataType::kInt32) return MakeKernel<TestElementwise<int32_t, V>>()(info);
    return MakeKernel<TestElementwise<float, V>>()(info);
  };
  return def;
}

}  // namespace

OL_REGISTER_KERNELS(tuning_test_kernels) {
  registry.Add(Def<Variant::kScale>("TestScale"));
  registry.Add(Def<Variant::kAdd>("TestAdd"));
  registry.Add(Def<Variant::kWrongInParallel>("TestWrongInParallel"));
  registry.Add(Def<Variant::kNeedsAttribute>("TestNeedsAttribute"));
}

}  // namespace onnx_light
