// ReverseSequence: reverses the first sequence_lens[b] time steps of each batch entry;
// parallel over (batch, time) slices, each written once.
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

class ReverseSequenceKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(batch_axis_, info.GetInt("batch_axis", 1));
    OL_ASSIGN_OR_RETURN(time_axis_, info.GetInt("time_axis", 0));
    if (!((batch_axis_ == 1 && time_axis_ == 0) || (batch_axis_ == 0 && time_axis_ == 1))) {
      return InvalidArgument(info.Where(), ": (batch_axis, time_axis) must be (1, 0) or (0, 1), got (", batch_axis_,
                             ", ", time_axis_, ")");
    }
    return parallel_.Init(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* lens, ctx.RequiredInput(1));
    const Shape& s = x->shape();
    if (s.rank() < 2) return InvalidArgument(ctx.Where(), ": input must have rank >= 2, got ", x->TypeAndShape());
    const int64_t batch = s.dim(static_cast<int>(batch_axis_)), time = s.dim(static_cast<int>(time_axis_));
    if (lens->dtype() != DataType::kInt64 || lens->shape() != Shape({batch})) {
      return InvalidArgument(ctx.Where(), ": sequence_lens must be int64[", batch, "], got ", lens->TypeAndShape());
    }
    const int64_t* len = lens->data<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (len[b] < 0 || len[b] > time) {
        return InvalidArgument(ctx.Where(), ": sequence_lens[", b, "] = ", len[b], " is outside [0, ", time, "]");
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), s));
    const int64_t inner = s.SizeFrom(2);
    const DataType type = x->dtype();
    const size_t size = ElementSize(type);
    // Element offset of slice (b, t) in the [time, batch] or [batch, time] layout.
    const bool time_major = time_axis_ == 0;
    auto slice = [&](int64_t b, int64_t t) { return (time_major ? t * batch + b : b * time + t) * inner; };
    return parallel_.Run(
        ctx.parallel(), "reverse_sequence.slices", batch * time, inner,
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t b = u / time, t = u % time;
            const int64_t source = t < len[b] ? len[b] - 1 - t : t;
            CopyElements(type, size, x->raw_data(), slice(b, source), y->raw_data(), slice(b, t), inner);
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  int64_t batch_axis_ = 1, time_axis_ = 0;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_reverse_sequence) {
  Kernel("ReverseSequence")
      .SinceVersions({10, 28})
      .TypesAt([](int v) { return TensorTypesAt(v < 13 ? 11 : 13); })
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<ReverseSequenceKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
