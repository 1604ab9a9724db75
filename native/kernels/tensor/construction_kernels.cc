// ConstantOfShape, Range, EyeLike: deterministic construction, filled in parallel over
// contiguous output blocks above parallel.minimum_elements.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"
#include "native/kernels/tensor/tensor_args.h"

namespace onnx_light {
namespace {

// Copies one element's bytes (`pattern`, size 1/2/4/8) into [begin, end) of dst.
template <typename Word>
void FillWords(void* dst, const void* pattern, int64_t begin, int64_t end) {
  Word w;
  std::memcpy(&w, pattern, sizeof w);
  Word* out = static_cast<Word*>(dst);
  std::fill(out + begin, out + end, w);
}
void FillPattern(void* dst, const void* pattern, size_t size, int64_t begin, int64_t end) {
  switch (size) {
    case 1:
      FillWords<uint8_t>(dst, pattern, begin, end);
      break;
    case 2:
      FillWords<uint16_t>(dst, pattern, begin, end);
      break;
    case 4:
      FillWords<uint32_t>(dst, pattern, begin, end);
      break;
    default:
      FillWords<uint64_t>(dst, pattern, begin, end);
      break;
  }
}

// ---------------------------------------------------------------------- ConstantOfShape

class ConstantOfShapeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(policy_.Init(info));
    if (info.HasAttribute("value")) {
      OL_ASSIGN_OR_RETURN(Tensor value, info.GetTensor("value"));
      if (value.num_elements() != 1 || value.dtype() == DataType::kString || ElementSize(value.dtype()) > 8) {
        return InvalidArgument(info.Where(), ": value must be a one-element numeric tensor, got ",
                               value.TypeAndShape());
      }
      type_ = value.dtype();
      std::memcpy(pattern_, value.raw_data(), ElementSize(type_));
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* shape, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadIndexList(*shape, ctx.Where(), "shape"));
    auto checked = Shape::Create(dims);
    if (!checked.ok()) return checked.status().WithContext(ctx.Where() + ": ");
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type_, *checked));
    const size_t size = ElementSize(type_);
    return policy_.Run(ctx.parallel(), "constant_of_shape.fill", y->num_elements(), 1, [&](int64_t begin, int64_t end) {
      FillPattern(y->raw_data(), pattern_, size, begin, end);
      return Status::Ok();
    });
  }

 private:
  ThresholdedParallel policy_;
  DataType type_ = DataType::kFloat;
  unsigned char pattern_[8] = {};  // float 0 by default
};

// ------------------------------------------------------------------------------- Range

// How float16/bfloat16 values are computed (Range-27 stash_type): in float, or rounding
// every operation to the type itself.
template <typename T>
struct RangeMath {
  static double Read(const Tensor& t) { return static_cast<double>(*t.data<T>()); }
  static T Value(double start, double delta, int64_t i, bool) {
    return static_cast<T>(static_cast<T>(start) + static_cast<T>(i) * static_cast<T>(delta));
  }
};
template <typename H>
struct HalfRangeMath {
  static double Read(const Tensor& t) { return t.data<H>()->ToDouble(); }
  static H Value(double start, double delta, int64_t i, bool stash_in_float) {
    const float s = static_cast<float>(start), d = static_cast<float>(delta);
    if (stash_in_float) return H::FromFloat(s + static_cast<float>(i) * d);
    const float step = H::FromFloat(H::FromFloat(static_cast<float>(i)).ToFloat() * d).ToFloat();
    return H::FromFloat(s + step);
  }
};
template <>
struct RangeMath<Float16> : HalfRangeMath<Float16> {};
template <>
struct RangeMath<BFloat16> : HalfRangeMath<BFloat16> {};

// Range's element types: float16 and bfloat16 joined at opset 27.
using RangeTypes11 = TypeList<float, double, int16_t, int32_t, int64_t>;
using RangeTypes27 = decltype(RangeTypes11{} + TypeList<Float16, BFloat16>{});

class RangeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(policy_.Init(info));
    OL_ASSIGN_OR_RETURN(int64_t stash, info.GetInt("stash_type", 1));
    stash_in_float_ = stash == static_cast<int64_t>(DataType::kFloat);
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    const Tensor* args[3];
    for (int i = 0; i < 3; ++i) {
      OL_ASSIGN_OR_RETURN(args[i], ctx.RequiredInput(i));
      if (args[i]->num_elements() != 1 || args[i]->dtype() != args[0]->dtype()) {
        return InvalidArgument(ctx.Where(), ": start, limit and delta must be scalars of one type, input ", i, " is ",
                               args[i]->TypeAndShape());
      }
    }
    return DispatchType(RangeTypes27{}, args[0]->dtype(), ctx.Where(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return Fill<T>(ctx, args);
    });
  }

 private:
  template <typename T>
  Status Fill(KernelContext& ctx, const Tensor* const* args) {
    int64_t count = 0;
    if constexpr (std::is_integral_v<T>) {
      const int64_t s = *args[0]->data<T>(), limit = *args[1]->data<T>(), d = *args[2]->data<T>();
      if (d == 0) return InvalidArgument(ctx.Where(), ": delta must not be zero");
      // Exact ceil((limit - start) / delta) in 64 bits (the operands are at most 64-bit).
      const __int128 span = static_cast<__int128>(limit) - s;
      const __int128 n = span / d + ((span % d != 0) && ((span > 0) == (d > 0)) ? 1 : 0);
      if (n > INT64_MAX)
        return InvalidArgument(ctx.Where(), ": range from ", s, " to ", limit, " by ", d, " is too long");
      count = n > 0 ? static_cast<int64_t>(n) : 0;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, kDataTypeOf<T>, Shape({count})));
      return policy_.Run(ctx.parallel(), "range.fill", count, 1, [&](int64_t begin, int64_t end) {
        T* out = y->data<T>();
        // Unsigned arithmetic wraps where int64 would overflow; the results themselves fit T.
        for (int64_t i = begin; i < end; ++i) {
          out[i] = static_cast<T>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));
        }
        return Status::Ok();
      });
    } else {
      const double start = RangeMath<T>::Read(*args[0]);
      const double limit = RangeMath<T>::Read(*args[1]);
      const double delta = RangeMath<T>::Read(*args[2]);
      if (delta == 0 || std::isnan(delta)) return InvalidArgument(ctx.Where(), ": delta must be non-zero, got ", delta);
      const double n = std::ceil((limit - start) / delta);
      if (std::isnan(n) || n > static_cast<double>(int64_t{1} << 50)) {
        return InvalidArgument(ctx.Where(), ": range from ", start, " to ", limit, " by ", delta, " is too long");
      }
      count = n > 0 ? static_cast<int64_t>(n) : 0;
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, kDataTypeOf<T>, Shape({count})));
      const bool stash = stash_in_float_;
      return policy_.Run(ctx.parallel(), "range.fill", count, 1, [&](int64_t begin, int64_t end) {
        T* out = y->data<T>();
        for (int64_t i = begin; i < end; ++i) out[i] = RangeMath<T>::Value(start, delta, i, stash);
        return Status::Ok();
      });
    }
  }

  ThresholdedParallel policy_;
  bool stash_in_float_ = true;
};

// ----------------------------------------------------------------------------- EyeLike

// EyeLike's output types (the input's type, or the dtype attribute's).
using EyeLikeTypes = decltype(NumbersBf{} + TypeList<bool>{});

// The bytes of 1 in `type` (one of EyeLikeTypes) into out[0, 8).
Status OnePattern(DataType type, const std::string& where, unsigned char* out) {
  return DispatchType(EyeLikeTypes{}, type, where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T one;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      one = T::FromFloat(1.0f);
    } else {
      one = static_cast<T>(1);
    }
    static_assert(sizeof one <= 8, "EyeLike writes one element of at most 8 bytes");
    std::memcpy(out, &one, sizeof one);
    return Status::Ok();
  });
}

class EyeLikeKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(policy_.Init(info));
    OL_ASSIGN_OR_RETURN(k_, info.GetInt("k", 0));
    OL_ASSIGN_OR_RETURN(int64_t dtype, info.GetInt("dtype", 0));
    if (dtype != 0) {
      if (dtype > 64 || !HasType(EyeLikeTypes{}, static_cast<DataType>(dtype))) {
        return InvalidArgument(info.Where(), ": dtype ", dtype, " is not an EyeLike output type");
      }
      dtype_ = static_cast<DataType>(dtype);
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->shape().rank() != 2) return InvalidArgument(ctx.Where(), ": input must be 2-D, got ", x->TypeAndShape());
    const DataType type = dtype_ == DataType::kUndefined ? x->dtype() : dtype_;
    unsigned char one[8] = {};
    if (!OnePattern(type, ctx.Where(), one).ok()) {
      return InvalidArgument(ctx.Where(), ": unsupported output type ", DataTypeName(type));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, x->shape()));
    const int64_t rows = x->shape().dim(0), cols = x->shape().dim(1);
    const size_t size = ElementSize(type);
    const unsigned char zero[8] = {};
    const int64_t k = k_;
    return policy_.Run(ctx.parallel(), "eye_like.rows", rows, cols, [&](int64_t begin, int64_t end) {
      FillPattern(y->raw_data(), zero, size, begin * cols, end * cols);
      for (int64_t r = begin; r < end; ++r) {
        // Column r + k, if inside the row (k may be any int64: compare before adding).
        if ((k >= 0 && r < cols - k) || (k < 0 && k >= -r && r + k < cols)) {
          std::memcpy(static_cast<char*>(y->raw_data()) + (r * cols + r + k) * size, one, size);
        }
      }
      return Status::Ok();
    });
  }

 private:
  ThresholdedParallel policy_;
  int64_t k_ = 0;
  DataType dtype_ = DataType::kUndefined;
};

OL_REGISTER_KERNELS(tensor_construction) {
  // The output type comes from the `value` attribute: the paths are T2, no input dispatches.
  Kernel("ConstantOfShape")
      .SinceVersions({9, 20, 21, 23, 24, 25})
      .DispatchInput(-1)
      .TypesAt([](int v) {
        TensorTypeSet set;
        set.string = false;
        set.complex = false;
        set.float8 = v >= 20;  // ConstantOfShape-20 took float8 and bfloat16 in one step
        return TensorTypesAt(v < 20 ? 9 : v, set);
      })
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ConstantOfShapeKernel>())
      .AddTo(registry);

  Kernel("Range")
      .Opsets({Since(11, RangeTypes11{}), Since(27, RangeTypes27{})})
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<RangeKernel>())
      .AddTo(registry);

  Kernel("EyeLike")
      .SinceVersions({9, 22})
      .TypesAt([](int v) {
        TensorTypeSet set;
        set.string = false;
        set.complex = false;
        set.float8 = false;
        set.sub_byte = false;
        return TensorTypesAt(v, set);
      })
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<EyeLikeKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
