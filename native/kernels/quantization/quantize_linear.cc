// QuantizeLinear (opsets 10-28): y = saturate(round_half_even(x / scale) + zero_point) for
// integer targets, encode(x / scale + zero_point) for float8/float6/float4 targets.
//
// The division runs in the precision numpy's promotion of (x, scale) gives, as the ONNX
// reference computes it, or in the `precision` attribute's type: float for float inputs,
// float16/bfloat16 rounding when both operands are that type, double when x is int32.
#include <cmath>
#include <string>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantization/byte_lanes.h"
#include "native/kernels/quantization/quant_kernel_base.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace quantization {
namespace {

enum class Precision { kFloat, kDouble, kHalf, kBHalf };

using InputTypes = TypeList<float, Float16, BFloat16, int32_t>;
using ScaleTypes = TypeList<float, Float16, BFloat16, int32_t, Float8E8M0>;
using OutputTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2,
                             Float8E5M2FNUZ, UInt4, Int4, Float4E2M1, UInt2, Int2, Float6E2M3, Float6E3M2>;

// Rounds a float to the working precision (float16/bfloat16 keep float storage).
template <Precision P>
inline float Narrow(float v) {
  if constexpr (P == Precision::kHalf) return HalfBitsToFloat(FloatToHalfBits(v));
  if constexpr (P == Precision::kBHalf) return BFloat16BitsToFloat(FloatToBFloat16Bits(v));
  return v;
}

template <Precision P, typename X>
inline double Divide(const X& x, double scale) {
  if constexpr (P == Precision::kDouble) {
    return ToDouble(x) / scale;
  } else {
    return Narrow<P>(Narrow<P>(static_cast<float>(ToDouble(x))) / static_cast<float>(scale));
  }
}

// Stage 2: quotients q (already in working precision) plus zero points z, into T.
template <typename T>
void Encode(const double* q, const double* z, int64_t n, T* out, bool saturate) {
  if constexpr (HasFormat<T>::value) {
    for (int64_t k = 0; k < n; ++k) {
      out[k] = T::FromBits(static_cast<decltype(T::bits)>(DoubleToNarrowFloat(q[k] + z[k], T::format(), saturate)));
    }
  } else {
    constexpr IntRange r = RangeOf<T>();
    for (int64_t k = 0; k < n; ++k) {
      // NaN quantizes to the zero point (ONNX leaves it undefined).
      const double rounded = std::isnan(q[k]) ? 0.0 : std::nearbyint(q[k]);
      out[k] = FromClampedInt<T>(std::min(r.hi, std::max(r.lo, rounded + z[k])));
    }
  }
}

class QuantizeLinearKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 1));
    OL_ASSIGN_OR_RETURN(block_size_, info.GetInt("block_size", 0));
    OL_ASSIGN_OR_RETURN(int64_t saturate, info.GetInt("saturate", 1));
    saturate_ = saturate != 0;
    OL_ASSIGN_OR_RETURN(output_dtype_, info.GetInt("output_dtype", 0));
    OL_ASSIGN_OR_RETURN(precision_, info.GetInt("precision", 0));
    if (block_size_ < 0) return InvalidArgument(where_, ": block_size must be positive, got ", block_size_);
    for (int64_t t : {output_dtype_, precision_}) {
      if (t != 0 && !IsValidDataType(static_cast<int32_t>(t))) {
        return InvalidArgument(where_, ": ", t, " is not an ONNX element type");
      }
    }
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequiredInput(1));
    const Tensor* zero_point = ctx.input(2);
    OL_ASSIGN_OR_RETURN(DataType out_type, OutputType(zero_point));
    OL_ASSIGN_OR_RETURN(Precision precision, WorkingPrecision(x->dtype(), scale->dtype()));
    OL_ASSIGN_OR_RETURN(QuantLayout layout,
                        PlanQuantLayout(x->shape(), *scale, zero_point, axis_, block_size_, where_));
    OL_ASSIGN_OR_RETURN(std::vector<double> scales,
                        ParamsAsDouble(ScaleTypes{}, scale, layout.num_params, where_, "scale"));
    for (double& s : scales) s = RoundScale(precision, s);
    OL_ASSIGN_OR_RETURN(std::vector<double> zeros,
                        ParamsAsDouble(OutputTypes{}, zero_point, layout.num_params, where_, "zero point"));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, x->shape()));
    return DispatchType(InputTypes{}, x->dtype(), where_ + " (input)", [&](auto xtag) -> Status {
      using X = typename decltype(xtag)::type;
      return DispatchType(OutputTypes{}, out_type, where_ + " (output)", [&](auto ytag) -> Status {
        using Y = typename decltype(ytag)::type;
        switch (precision) {
          case Precision::kFloat:
            return Run<Precision::kFloat>(ctx, layout, x->num_elements(), x->data<X>(), scales, zeros, y->data<Y>());
          case Precision::kDouble:
            return Run<Precision::kDouble>(ctx, layout, x->num_elements(), x->data<X>(), scales, zeros, y->data<Y>());
          case Precision::kHalf:
            return Run<Precision::kHalf>(ctx, layout, x->num_elements(), x->data<X>(), scales, zeros, y->data<Y>());
          case Precision::kBHalf:
            return Run<Precision::kBHalf>(ctx, layout, x->num_elements(), x->data<X>(), scales, zeros, y->data<Y>());
        }
        return Internal(where_, ": unknown precision");
      });
    });
  }

 private:
  template <Precision P, typename X, typename Y>
  Status Run(const KernelContext& ctx, const QuantLayout& layout, int64_t total, const X* x,
             const std::vector<double>& scales, const std::vector<double>& zeros, Y* y) const {
    if constexpr (P == Precision::kFloat && std::is_same_v<X, float> && kIsByte<Y>) {
      // float -> 8 bits: QuantizeRow over each run sharing one parameter (byte_lanes.h).
      return policy_.Run(ctx, "QuantizeLinear", total, [&](int64_t begin, int64_t end) {
        ForEachParamRun(layout, begin, end, [&](int64_t at, int64_t p, int64_t ps, int64_t n) {
          if (ps == 0) {
            QuantizeRow<Y>(x + at, n, static_cast<float>(scales[p]), static_cast<int32_t>(zeros[p]), y + at);
            return;
          }
          for (int64_t k = 0; k < n; ++k) {
            y[at + k] =
                QuantizeOne<Y>(x[at + k], static_cast<float>(scales[p + k]), static_cast<int32_t>(zeros[p + k]));
          }
        });
      });
    }
    return ForEachChunk(ctx, policy_, "QuantizeLinear", total, [&](int64_t begin, int64_t end) {
      double q[kChunk], z[kChunk];
      ForEachParamRun(layout, begin, end, [&](int64_t at, int64_t p, int64_t ps, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          q[at - begin + k] = Divide<P>(x[at + k], scales[p + k * ps]);
          z[at - begin + k] = zeros[p + k * ps];
        }
      });
      Encode(q, z, end - begin, y + begin, saturate_);
    });
  }

  // y_zero_point's type, else output_dtype, else uint8; both given must agree.
  StatusOr<DataType> OutputType(const Tensor* zero_point) const {
    const DataType attr = static_cast<DataType>(output_dtype_);
    if (zero_point == nullptr) return output_dtype_ != 0 ? attr : DataType::kUint8;
    if (output_dtype_ != 0 && attr != zero_point->dtype()) {
      return InvalidArgument(where_, ": output_dtype ", DataTypeName(attr), " differs from zero point ",
                             zero_point->TypeAndShape());
    }
    return zero_point->dtype();
  }

  StatusOr<Precision> WorkingPrecision(DataType x, DataType scale) const {
    using D = DataType;
    if (precision_ != 0) {
      switch (static_cast<D>(precision_)) {
        case D::kFloat:
          return Precision::kFloat;
        case D::kFloat16:
          return Precision::kHalf;
        case D::kBFloat16:
          return Precision::kBHalf;
        case D::kDouble:
          return Precision::kDouble;
        default:
          return NotImplemented(where_, ": precision ", DataTypeName(static_cast<D>(precision_)),
                                " is not supported (float, float16, bfloat16, double are)");
      }
    }
    if (x == D::kInt32 || scale == D::kInt32) return Precision::kDouble;  // numpy promotes int32 / float to double
    if (x == scale && x == D::kFloat16) return Precision::kHalf;
    if (x == scale && x == D::kBFloat16) return Precision::kBHalf;
    return Precision::kFloat;
  }

  static double RoundScale(Precision p, double s) {
    switch (p) {
      case Precision::kFloat:
        return static_cast<float>(s);
      case Precision::kHalf:
        return Narrow<Precision::kHalf>(static_cast<float>(s));
      case Precision::kBHalf:
        return Narrow<Precision::kBHalf>(static_cast<float>(s));
      case Precision::kDouble:
        return s;
    }
    return s;
  }

  std::string where_;
  int64_t axis_ = 1, block_size_ = 0, output_dtype_ = 0, precision_ = 0;
  bool saturate_ = true;
  elementwise::ElementwisePolicy policy_;
};

std::vector<DataType> InputTypesAt(int opset) {
  using D = DataType;
  if (opset < 19) return {D::kFloat, D::kInt32};
  return {D::kFloat, D::kFloat16, D::kBFloat16, D::kInt32};
}

OL_REGISTER_KERNELS(quantize_linear) {
  Kernel("QuantizeLinear")
      .SinceVersions({10, 13, 19, 21, 23, 24, 25, 28})
      .TypesAt(InputTypesAt)
      .Tuning(elementwise::ElementwiseTuning(elementwise::kTranscendentalMinimumElements))
      .Calibratable()
      .Factory(MakeKernel<QuantizeLinearKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace quantization
}  // namespace onnx_light
