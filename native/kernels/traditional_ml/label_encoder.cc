// LabelEncoder (ai.onnx.ml 2 and 4): maps each element through a key -> value table given
// as attribute lists or tensors, with a default for missing keys. Hash look-ups over
// small tensors, serial (family ml_simple). Opset 1 (classes_strings) is not implemented.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace ml {
namespace {

template <typename T>
StatusOr<Tensor> TensorOf(const std::vector<T>& values) {
  OL_ASSIGN_OR_RETURN(
      Tensor t, Tensor::Allocate(kDataTypeOf<T>, Shape{static_cast<int64_t>(values.size())}, Allocator::Default()));
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

// A type-tagged text form of element i, so that keys of any type share one hash map and
// equal numbers compare equal across integer widths (NaN matches NaN, -0 matches 0).
StatusOr<std::string> KeyOf(const Tensor& t, int64_t i, const std::string& where) {
  std::string key;
  const Status status = DispatchType(
      TypeList<std::string, int64_t, int32_t, int16_t, float, double>{}, t.dtype(), where, [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        const T& v = t.data<T>()[i];
        if constexpr (std::is_same_v<T, std::string>) {
          key = "s" + v;
        } else if constexpr (std::is_integral_v<T>) {
          key = "i" + std::to_string(v);
        } else {
          const double d = v == 0 ? 0.0 : static_cast<double>(v);
          key = std::isnan(d) ? "fnan" : "f" + std::string(reinterpret_cast<const char*>(&d), sizeof d);
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return key;
}

// The table side given either as one of the typed lists or as a tensor attribute.
StatusOr<Tensor> ReadTable(const KernelInfo& info, const std::string& side) {
  if (info.HasAttribute(side + "_tensor")) return info.GetTensor(side + "_tensor");
  if (info.HasAttribute(side + "_strings")) {
    OL_ASSIGN_OR_RETURN(std::vector<std::string> v, info.GetStrings(side + "_strings"));
    return TensorOf(v);
  }
  if (info.HasAttribute(side + "_int64s")) {
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> v, info.GetInts(side + "_int64s"));
    return TensorOf(v);
  }
  if (info.HasAttribute(side + "_floats")) {
    OL_ASSIGN_OR_RETURN(std::vector<float> v, info.GetFloats(side + "_floats"));
    return TensorOf(v);
  }
  return InvalidArgument(info.Where(), ": one of ", side, "_strings, ", side, "_int64s, ", side, "_floats or ", side,
                         "_tensor is required");
}

// The default of the values' type: default_tensor, or default_string / _int64 / _float.
StatusOr<Tensor> ReadDefault(const KernelInfo& info, DataType type) {
  if (info.HasAttribute("default_tensor")) return info.GetTensor("default_tensor");
  if (type == DataType::kString) {
    OL_ASSIGN_OR_RETURN(std::string v, info.GetString("default_string", "_Unused"));
    return TensorOf(std::vector<std::string>{v});
  }
  if (type == DataType::kInt64) {
    OL_ASSIGN_OR_RETURN(int64_t v, info.GetInt("default_int64", -1));
    return TensorOf(std::vector<int64_t>{v});
  }
  OL_ASSIGN_OR_RETURN(float v, info.GetFloat("default_float", -0.0f));
  return TensorOf(std::vector<float>{v});
}

class LabelEncoderKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(Tensor keys, ReadTable(info, "keys"));
    OL_ASSIGN_OR_RETURN(values_, ReadTable(info, "values"));
    OL_ASSIGN_OR_RETURN(default_, ReadDefault(info, values_.dtype()));
    if (keys.num_elements() != values_.num_elements()) {
      return InvalidArgument(where_, ": ", keys.num_elements(), " keys but ", values_.num_elements(), " values");
    }
    if (default_.dtype() != values_.dtype() || default_.num_elements() != 1) {
      return InvalidArgument(where_, ": the default must be one ", DataTypeName(values_.dtype()), ", got ",
                             default_.TypeAndShape());
    }
    for (int64_t i = 0; i < keys.num_elements(); ++i) {
      OL_ASSIGN_OR_RETURN(std::string key, KeyOf(keys, i, where_));
      index_.emplace(std::move(key), i);  // the first of repeated keys wins
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    std::vector<int64_t> slots(static_cast<size_t>(x->num_elements()));
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      OL_ASSIGN_OR_RETURN(std::string key, KeyOf(*x, i, where_));
      auto it = index_.find(key);
      slots[i] = it == index_.end() ? -1 : it->second;
    }
    return DispatchType(TypeList<std::string, int64_t, int32_t, int16_t, float, double>{}, values_.dtype(), where_,
                        [&](auto tag) -> Status {
                          using T = typename decltype(tag)::type;
                          OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, values_.dtype(), x->shape()));
                          for (size_t i = 0; i < slots.size(); ++i) {
                            y->data<T>()[i] = slots[i] < 0 ? default_.data<T>()[0] : values_.data<T>()[slots[i]];
                          }
                          return Status::Ok();
                        });
  }

 private:
  std::string where_;
  Tensor values_;
  Tensor default_;
  std::unordered_map<std::string, int64_t> index_;
};

OL_REGISTER_KERNELS(ml_label_encoder) {
  Kernel("LabelEncoder")
      .Domain("ai.onnx.ml")
      .Opsets({Since(2, TypeList<std::string, int64_t, float>{}),
               Since(4, TypeList<std::string, int64_t, float, int32_t, int16_t, double>{})})
      .Factory(MakeKernel<LabelEncoderKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
