// QLinearSigmoid and QLinearLeakyRelu (com.microsoft, 1): one 256-entry table per node,
// table[x] = Quantize(f(Dequantize(x))), built once at creation when the scales and zero
// points are constant, else at each run; the run is a table lookup per element.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

struct SigmoidFn {
  float operator()(float x) const { return 1.0f / (1.0f + std::exp(-x)); }
};

struct LeakyReluFn {
  float alpha = 0.01f;
  float operator()(float x) const { return x >= 0.0f ? x : alpha * x; }
};

// Inputs: X, X_scale, X_zero_point (optional), Y_scale, Y_zero_point (optional).
template <typename Fn>
class QLinearLookupKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    if constexpr (std::is_same_v<Fn, LeakyReluFn>) {
      OL_ASSIGN_OR_RETURN(fn_.alpha, info.GetFloat("alpha", 0.01f));
    }
    const DataType type = info.input_type(0);
    if (type != DataType::kUint8 && type != DataType::kInt8) return Status::Ok();  // Compute reports it
    OL_ASSIGN_OR_RETURN(const MaybeQParams x, ConstantQParams(info, 1, 2, type, "X_scale", "X_zero_point"));
    OL_ASSIGN_OR_RETURN(const MaybeQParams y, ConstantQParams(info, 3, 4, type, "Y_scale", "Y_zero_point"));
    if (!x.known || !y.known) return Status::Ok();
    table_type_ = type;
    table_ = Table(type, x.params, y.params);
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_RETURN_IF_ERROR(CheckEightBit(*x, where, "X"));
    const DataType type = x->dtype();
    std::vector<uint8_t> per_run;
    const std::vector<uint8_t>* table = &table_;
    if (table_type_ != type) {
      OL_ASSIGN_OR_RETURN(const QParams px,
                          ReadQParams(ctx.input(1), ctx.input(2), type, where, "X_scale", "X_zero_point"));
      OL_ASSIGN_OR_RETURN(const QParams py,
                          ReadQParams(ctx.input(3), ctx.input(4), type, where, "Y_scale", "Y_zero_point"));
      per_run = Table(type, px, py);
      table = &per_run;
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, x->shape()));
    const int64_t n = x->num_elements();
    return DispatchType(EightBit{}, type, where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      const Q* xv = x->data<Q>();
      Q* yv = y->data<Q>();
      const Q* t = reinterpret_cast<const Q*>(table->data());
      return parallel_.Run(ctx.parallel(), "qlinear_lookup.elements", n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) yv[e] = t[TableIndex(xv[e])];
      });
    });
  }

 private:
  // The table as bytes (an int8 table is stored bit for bit).
  std::vector<uint8_t> Table(DataType type, const QParams& x, const QParams& y) const {
    std::vector<uint8_t> bytes(256);
    if (type == DataType::kInt8) {
      const std::vector<int8_t> t = BuildTable<int8_t>(x, y, fn_);
      for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(t[i]);
    } else {
      bytes = BuildTable<uint8_t>(x, y, fn_);
    }
    return bytes;
  }

  Fn fn_;
  ThresholdedParallel parallel_;
  DataType table_type_ = DataType::kUndefined;  // kUndefined: no table from creation
  std::vector<uint8_t> table_;
};

}  // namespace

OL_REGISTER_KERNELS(qlinear_lookup_ops) {
  Kernel("QLinearSigmoid")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(ElementTuning())
      .Factory(MakeKernel<QLinearLookupKernel<SigmoidFn>>())
      .AddTo(registry);
  Kernel("QLinearLeakyRelu")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .Tuning(ElementTuning())
      .Factory(MakeKernel<QLinearLookupKernel<LeakyReluFn>>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
