// BitCast (opset 26): reinterprets the bits of each element as another type of the same
// width. Where both types store their bits alike in memory the output aliases the input
// (no copy). Two cases re-encode bytes, in parallel element blocks: sub-byte types (one
// value per byte, signed ones sign-extended) and bool targets (a byte is true when any
// bit is set, as C++ bool needs 0 or 1).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/elementwise/elementwise_policy.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace bitcast {
namespace {

bool IsSubByte(DataType t) { return GetDataTypeInfo(t).bits < 8; }
bool IsSignedSubByte(DataType t) { return t == DataType::kInt4 || t == DataType::kInt2; }

class BitCastKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t to, info.GetInt("to"));
    if (!IsValidDataType(static_cast<int32_t>(to)) || to == static_cast<int64_t>(DataType::kString) ||
        to == static_cast<int64_t>(DataType::kUndefined)) {
      return InvalidArgument(where_, ": 'to' ", to, " is not a non-string ONNX element type");
    }
    to_ = static_cast<DataType>(to);
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const DataType from = x->dtype();
    if (from == DataType::kString || GetDataTypeInfo(from).bits != GetDataTypeInfo(to_).bits) {
      return InvalidArgument(where_, ": cannot bit-cast ", x->TypeAndShape(), " to ", DataTypeName(to_),
                             " (the widths differ)");
    }
    if (!IsSubByte(from) && to_ != DataType::kBool) {
      // Same bytes under another type; the holder keeps the input's buffer alive.
      auto holder = std::make_shared<Tensor>(*x);
      return ctx.SetOutput(0, Value(Tensor::Borrow(to_, x->shape(), holder->raw_data(), holder)));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, to_, x->shape()));
    const uint8_t* in = static_cast<const uint8_t*>(x->raw_data());
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    const int bits = GetDataTypeInfo(from).bits;
    const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1u);
    const bool sign_extend = IsSignedSubByte(to_);
    const bool to_bool = to_ == DataType::kBool;
    return policy_.Run(ctx, "BitCast", x->num_elements(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint8_t v = in[i] & mask;
        if (to_bool) {
          out[i] = v != 0;
        } else if (sign_extend && (v >> (bits - 1))) {
          out[i] = static_cast<uint8_t>(v | ~mask);
        } else {
          out[i] = v;
        }
      }
    });
  }

 private:
  std::string where_;
  DataType to_ = DataType::kUndefined;
  elementwise::ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(bitcast) {
  Kernel("BitCast")
      .Versions(26, kOpenEnded)
      .Types(TensorTypesAt(26, TensorTypeSet{/*string=*/false, true, true, true, true}))
      .Tuning(elementwise::ElementwiseTuning(elementwise::kCheapMinimumElements))
      .Factory(MakeKernel<BitCastKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace bitcast
}  // namespace onnx_light
