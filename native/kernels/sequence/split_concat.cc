// SplitToSequence and ConcatFromSequence: the sequence ops that move tensor data.
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/controlflow/axis_copy.h"
#include "native/kernels/sequence/sequence_util.h"

namespace onnx_light {
namespace sequence {
namespace {

// Chunk lengths along an axis of length `dim`: from a 1-D `split` tensor, a scalar chunk
// size (the last chunk may be shorter), or ones when there is no split input.
StatusOr<std::vector<int64_t>> ChunkLengths(const KernelContext& ctx, const Tensor* split, int64_t dim) {
  if (split == nullptr) return std::vector<int64_t>(dim, 1);
  if (split->dtype() != DataType::kInt64 && split->dtype() != DataType::kInt32) {
    return InvalidArgument(ctx.Where(), ": split must be int32 or int64, got ", split->TypeAndShape());
  }
  const auto at = [&](int64_t i) {
    return split->dtype() == DataType::kInt64 ? split->data<int64_t>()[i] : int64_t{split->data<int32_t>()[i]};
  };
  std::vector<int64_t> lengths;
  if (split->shape().rank() == 0) {
    const int64_t chunk = at(0);
    if (chunk <= 0) return InvalidArgument(ctx.Where(), ": split must be positive, got ", chunk);
    for (int64_t start = 0; start < dim; start += chunk) lengths.push_back(std::min(chunk, dim - start));
    return lengths;
  }
  if (split->shape().rank() != 1) {
    return InvalidArgument(ctx.Where(), ": split must be a scalar or 1-D, got ", split->TypeAndShape());
  }
  int64_t total = 0;
  for (int64_t i = 0; i < split->num_elements(); ++i) {
    if (at(i) < 0) return InvalidArgument(ctx.Where(), ": split lengths must be >= 0, got ", at(i));
    lengths.push_back(at(i));
    total += at(i);
  }
  if (total != dim) {
    return InvalidArgument(ctx.Where(), ": split lengths sum to ", total, " but the axis has ", dim, " elements");
  }
  return lengths;
}

class SplitToSequence : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", 0));
    OL_ASSIGN_OR_RETURN(keepdims_, info.GetInt("keepdims", 1));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    auto axis = NormalizeAxis(axis_, input->shape().rank());
    if (!axis.ok()) return axis.status().WithContext(ctx.Where() + ": ");
    const Tensor* split = ctx.input(1);
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ChunkLengths(ctx, split, input->shape()[*axis]));
    // keepdims only applies when there is no split input (every chunk has length 1).
    const bool keep_axis = split != nullptr || keepdims_ != 0;
    std::vector<Value> items;
    int64_t start = 0;
    for (int64_t length : lengths) {
      OL_ASSIGN_OR_RETURN(Tensor chunk, axis_copy::Slice(*input, *axis, start, length, keep_axis, ctx.allocator()));
      items.push_back(Value(std::move(chunk)));
      start += length;
    }
    ctx.RecordCopy(static_cast<int64_t>(items.size()));
    return ctx.SetOutput(0, Value::Sequence(std::move(items), input->dtype()));
  }

 private:
  int64_t axis_ = 0, keepdims_ = 1;
};

class ConcatFromSequence : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis"));
    OL_ASSIGN_OR_RETURN(new_axis_, info.GetInt("new_axis", 0));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    if (seq->items().empty()) return InvalidArgument(ctx.Where(), ": cannot concatenate an empty sequence");
    std::vector<Tensor> parts;
    for (const Value& item : seq->items()) parts.push_back(item.tensor());
    const int rank = parts.front().shape().rank();
    auto axis = NormalizeAxis(axis_, new_axis_ ? rank + 1 : rank);
    if (!axis.ok()) return axis.status().WithContext(ctx.Where() + ": ");
    auto result = new_axis_
                      ? axis_copy::Stack(parts, *axis, parts.front().dtype(), parts.front().shape(), ctx.allocator())
                      : axis_copy::Concat(parts, *axis, ctx.allocator());
    if (!result.ok()) return result.status().WithContext(ctx.Where() + ": ");
    ctx.RecordCopy();
    return ctx.SetOutput(0, Value(std::move(result).value()));
  }

 private:
  int64_t axis_ = 0, new_axis_ = 0;
};

}  // namespace

OL_REGISTER_KERNELS(sequence_split_concat) {
  // SplitToSequence 24 only widened the types.
  Kernel("SplitToSequence")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<SplitToSequence>())
      .AddTo(registry);
  Kernel("ConcatFromSequence")
      .Versions(11, kOpenEnded)
      .DispatchInput(-1)
      .Factory(MakeKernel<ConcatFromSequence>())
      .AddTo(registry);
}

}  // namespace sequence
}  // namespace onnx_light
