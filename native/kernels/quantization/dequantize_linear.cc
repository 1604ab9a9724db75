// DequantizeLinear (opsets 10-28): y = (x - zero_point) * scale, per tensor, per axis or
// blocked. As the ONNX reference computes it: in float (x - zero_point exact for every
// type up to 16 bits), in double for int32 input; the result is rounded once to the output
// type (output_dtype, else the scale's type).
#include <string>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantization/byte_lanes.h"
#include "native/kernels/quantization/quant_kernel_base.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace quantization {
namespace {

using InputTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2,
                            Float8E5M2FNUZ, UInt4, Int4, Float4E2M1, UInt2, Int2, Float6E2M3, Float6E3M2>;
using ScaleTypes = TypeList<float, Float16, BFloat16, Float8E8M0>;
using OutputTypes = TypeList<float, Float16, BFloat16>;

template <typename X>
inline double Dequantize(const X& x, double zero, double scale) {
  if constexpr (std::is_same_v<X, int32_t>) {
    return (static_cast<double>(x) - zero) * scale;
  } else {
    return (static_cast<float>(ToDouble(x)) - static_cast<float>(zero)) * static_cast<float>(scale);
  }
}

template <typename Y>
inline Y StoreResult(double v) {
  if constexpr (std::is_same_v<Y, float>) {
    return static_cast<float>(v);
  } else {
    return Y::FromDouble(v);
  }
}

class DequantizeLinearKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 1));
    OL_ASSIGN_OR_RETURN(block_size_, info.GetInt("block_size", 0));
    OL_ASSIGN_OR_RETURN(output_dtype_, info.GetInt("output_dtype", 0));
    if (block_size_ < 0) return InvalidArgument(where_, ": block_size must be positive, got ", block_size_);
    if (output_dtype_ != 0 && !IsValidDataType(static_cast<int32_t>(output_dtype_))) {
      return InvalidArgument(where_, ": output_dtype ", output_dtype_, " is not an ONNX element type");
    }
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequiredInput(1));
    const Tensor* zero_point = ctx.input(2);
    if (zero_point != nullptr && zero_point->dtype() != x->dtype()) {
      return InvalidArgument(where_, ": zero point ", zero_point->TypeAndShape(), " must have the type of x ",
                             x->TypeAndShape());
    }
    const DataType out_type = output_dtype_ != 0 ? static_cast<DataType>(output_dtype_) : scale->dtype();
    OL_ASSIGN_OR_RETURN(QuantLayout layout,
                        PlanQuantLayout(x->shape(), *scale, zero_point, axis_, block_size_, where_));
    OL_ASSIGN_OR_RETURN(std::vector<double> scales,
                        ParamsAsDouble(ScaleTypes{}, scale, layout.num_params, where_, "scale"));
    OL_ASSIGN_OR_RETURN(std::vector<double> zeros,
                        ParamsAsDouble(InputTypes{}, zero_point, layout.num_params, where_, "zero point"));
    return DispatchType(OutputTypes{}, out_type, where_ + " (output)", [&](auto ytag) -> Status {
      using Y = typename decltype(ytag)::type;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, x->shape()));
      return DispatchType(InputTypes{}, x->dtype(), where_ + " (input)", [&](auto xtag) -> Status {
        using X = typename decltype(xtag)::type;
        const X* xs = x->data<X>();
        Y* ys = y->data<Y>();
        if constexpr (std::is_same_v<Y, float> && kIsByte<X>) {
          // 8 bits -> float: DequantizeRow over each run sharing one parameter (byte_lanes.h).
          return policy_.Run(ctx, "DequantizeLinear", x->num_elements(), [&](int64_t begin, int64_t end) {
            ForEachParamRun(layout, begin, end, [&](int64_t at, int64_t p, int64_t ps, int64_t n) {
              if (ps == 0) {
                DequantizeRow(xs + at, n, static_cast<float>(zeros[p]), static_cast<float>(scales[p]), ys + at);
                return;
              }
              for (int64_t k = 0; k < n; ++k) {
                ys[at + k] =
                    DequantizeOne(xs[at + k], static_cast<float>(zeros[p + k]), static_cast<float>(scales[p + k]));
              }
            });
          });
        }
        return ForEachChunk(ctx, policy_, "DequantizeLinear", x->num_elements(), [&](int64_t begin, int64_t end) {
          double v[kChunk];
          ForEachParamRun(layout, begin, end, [&](int64_t at, int64_t p, int64_t ps, int64_t n) {
            for (int64_t k = 0; k < n; ++k)
              v[at - begin + k] = Dequantize(xs[at + k], zeros[p + k * ps], scales[p + k * ps]);
          });
          for (int64_t k = 0; k < end - begin; ++k) ys[begin + k] = StoreResult<Y>(v[k]);
        });
      });
    });
  }

 private:
  std::string where_;
  int64_t axis_ = 1, block_size_ = 0, output_dtype_ = 0;
  elementwise::ElementwisePolicy policy_;
};

std::vector<DataType> InputTypesAt(int opset) {
  using D = DataType;
  std::vector<DataType> types = {D::kInt8, D::kUint8, D::kInt32};
  if (opset >= 19)
    types.insert(types.end(), {D::kFloat8E4M3FN, D::kFloat8E4M3FNUZ, D::kFloat8E5M2, D::kFloat8E5M2FNUZ});
  if (opset >= 21) types.insert(types.end(), {D::kInt16, D::kUint16, D::kUint4, D::kInt4});
  if (opset >= 23) types.push_back(D::kFloat4E2M1);
  if (opset >= 25) types.insert(types.end(), {D::kUint2, D::kInt2});
  if (opset >= 28) types.insert(types.end(), {D::kFloat6E2M3, D::kFloat6E3M2});
  return types;
}

OL_REGISTER_KERNELS(dequantize_linear) {
  Kernel("DequantizeLinear")
      .SinceVersions({10, 13, 19, 21, 23, 24, 25, 28})
      .TypesAt(InputTypesAt)
      .Tuning(elementwise::ElementwiseTuning(elementwise::kTranscendentalMinimumElements))
      .Calibratable()
      .Factory(MakeKernel<DequantizeLinearKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace quantization
}  // namespace onnx_light
