#include "native/kernels/sequence/sequence_util.h"

namespace onnx_light {
namespace sequence {

StatusOr<const Value*> SequenceInput(const KernelContext& ctx, int i) {
  const Value* v = ctx.input_value(i);
  if (v == nullptr || !v->is_sequence()) {
    return InvalidArgument(ctx.Where(), ": input ", i, " must be a sequence, got ", v ? v->Describe() : "nothing");
  }
  return v;
}

StatusOr<int64_t> Position(const KernelContext& ctx, const Tensor& position, int64_t size, bool allow_end) {
  if (position.num_elements() != 1 || (position.dtype() != DataType::kInt64 && position.dtype() != DataType::kInt32)) {
    return InvalidArgument(ctx.Where(), ": position must be an int32 or int64 scalar, got ", position.TypeAndShape());
  }
  const int64_t p = position.dtype() == DataType::kInt64 ? *position.data<int64_t>() : *position.data<int32_t>();
  const int64_t last = allow_end ? size : size - 1;
  if (p < -size || p > last) {
    return InvalidArgument(ctx.Where(), ": position ", p, " is out of range [", -size, ", ", last,
                           "] for a sequence of ", size, " tensors");
  }
  return p < 0 ? p + size : p;
}

KernelDef SerialDef(const char* op, int since, KernelFactory factory) {
  KernelDef def;
  def.op = op;
  def.since_version = since;
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = -1;
  def.factory = std::move(factory);
  return def;
}

}  // namespace sequence
}  // namespace onnx_light
