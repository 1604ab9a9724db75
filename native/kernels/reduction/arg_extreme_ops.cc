// ArgMax, ArgMin: the index of the first (or, with select_last_index, the last) extreme
// value along one axis. NaN counts as the extreme, as numpy's argmax/argmin do.
#include <algorithm>
#include <cmath>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/kernels/reduction/reduce_kernel.h"

namespace onnx_light {
namespace {

using ArgTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t, Float16, float,
                          double, BFloat16>;

template <bool kMax>
class ArgExtremeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    OL_ASSIGN_OR_RETURN(int64_t keepdims, info.GetInt("keepdims", 1));
    OL_ASSIGN_OR_RETURN(int64_t last, info.GetInt("select_last_index", 0));
    keepdims_ = keepdims != 0;
    select_last_ = last != 0;
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequiredInput(0));
    const Shape& shape = data->shape();
    OL_ASSIGN_OR_RETURN(int axis, NormalizeAxisFor(axis_, shape, ctx.Where()));
    const int64_t outer = shape.SizeTo(axis), length = shape[axis], inner = shape.SizeFrom(axis + 1);
    std::vector<int64_t> dims = shape.dims();
    if (keepdims_) {
      dims[axis] = 1;
    } else {
      dims.erase(dims.begin() + axis);
    }
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, Shape(dims)));
    if (outer * inner == 0) return Status::Ok();
    if (length == 0) {
      return InvalidArgument(ctx.Where(), ": cannot take the arg", kMax ? "max" : "min", " of an empty axis ", axis,
                             " of input shape ", shape.ToString());
    }
    return DispatchType(ArgTypes{}, data->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = data->data<T>();
      int64_t* y = out->data<int64_t>();
      auto rows = [&](int64_t begin, int64_t end) {
        Scan<T>(x, y, length, inner, begin, end);
        return Status::Ok();
      };
      return parallel_.Run(ctx.parallel(), "argextreme.outputs", outer * inner, length, rows);
    });
  }

 private:
  // True when `x` at a later index replaces `best`.
  template <typename A>
  bool Replaces(A x, A best) const {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(best)) return select_last_ && std::isnan(x);
      if (std::isnan(x)) return true;
    }
    if (select_last_) return kMax ? !(x < best) : !(best < x);
    return kMax ? best < x : x < best;
  }

  // Outputs [begin, end) of the (outer, inner) output space; strided rows in tiles so that
  // each step over the axis reads contiguous memory.
  template <typename T>
  void Scan(const T* x, int64_t* y, int64_t length, int64_t inner, int64_t begin, int64_t end) const {
    using A = typename Numeric<T>::Acc;
    constexpr int64_t kTile = 256;
    A best[kTile];
    for (int64_t o = begin; o < end;) {
      const int64_t row = o / inner, row_end = std::min(end, (row + 1) * inner);
      for (int64_t t = o; t < row_end; t += kTile) {
        const int64_t lanes = std::min(kTile, row_end - t);
        const T* base = x + row * length * inner + (t - row * inner);
        for (int64_t j = 0; j < lanes; ++j) {
          best[j] = Numeric<T>::Load(base[j]);
          y[t + j] = 0;
        }
        for (int64_t k = 1; k < length; ++k) {
          const T* p = base + k * inner;
          for (int64_t j = 0; j < lanes; ++j) {
            const A v = Numeric<T>::Load(p[j]);
            if (Replaces(v, best[j])) {
              best[j] = v;
              y[t + j] = k;
            }
          }
        }
      }
      o = row_end;
    }
  }

  int64_t axis_ = 0;
  bool keepdims_ = true, select_last_ = false;
  ThresholdedParallel parallel_;
};

std::vector<ParamSpec> ArgTuningParams() {
  return {MinimumElementsParam(kArgExtremeMinimum, "input elements below which ArgMax/ArgMin run serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements read")};
}

std::vector<DataType> ArgDataTypes(bool with_bfloat16) {
  std::vector<DataType> types = {DataType::kUint8,   DataType::kUint16, DataType::kUint32, DataType::kUint64,
                                 DataType::kInt8,    DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                 DataType::kFloat16, DataType::kFloat,  DataType::kDouble};
  if (with_bfloat16) types.push_back(DataType::kBFloat16);
  return types;
}

template <bool kMax>
void AddArgOp(KernelRegistry& registry, const char* op) {
  Kernel(op)
      .SinceVersions({1, 11, 12, 13})
      .TypesAt([](int v) { return ArgDataTypes(v >= 13); })
      .Tuning(ArgTuningParams())
      .Factory(MakeKernel<ArgExtremeKernel<kMax>>())
      .AddTo(registry);
}

}  // namespace

OL_REGISTER_KERNELS(reduction_arg_extreme) {
  AddArgOp<true>(registry, "ArgMax");
  AddArgOp<false>(registry, "ArgMin");
}

}  // namespace onnx_light
