// Trilu: keeps the upper or lower triangle (offset by k) of each matrix in the last two
// dims, zeroing the rest; parallel over matrix rows.
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/tensor/data_movement.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

class TriluKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t upper, info.GetInt("upper", 1));
    upper_ = upper != 0;
    return parallel_.Init(info);
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->shape().rank() < 2)
      return InvalidArgument(ctx.Where(), ": input must have rank >= 2, got ", x->TypeAndShape());
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      if (kt->dtype() != DataType::kInt64 || kt->num_elements() != 1) {
        return InvalidArgument(ctx.Where(), ": k must be one int64, got ", kt->TypeAndShape());
      }
      k = *kt->data<int64_t>();
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    const int rank = x->shape().rank();
    const int64_t rows = x->shape().dim(rank - 2), cols = x->shape().dim(rank - 1);
    const DataType type = x->dtype();
    const size_t size = ElementSize(type);
    OL_ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(type, Shape(), ctx.allocator(), /*zero=*/true));
    const bool upper = upper_;
    const int64_t total_rows = cols == 0 ? 0 : x->num_elements() / cols;
    return parallel_.Run(
        ctx.parallel(), "trilu.rows", total_rows, cols,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            // Kept columns: j >= i + k (upper) or j <= i + k (lower), clamped to [0, cols].
            const int64_t i = r % rows;
            const int64_t diagonal = k > 0 && i > INT64_MAX - k ? INT64_MAX : i + k;  // i + k without overflow
            const int64_t edge = upper ? std::clamp<int64_t>(diagonal, 0, cols)
                                       : std::clamp<int64_t>(diagonal == INT64_MAX ? cols : diagonal + 1, 0, cols);
            const int64_t keep_begin = upper ? edge : 0, keep_end = upper ? cols : edge;
            FillElements(type, size, zero.raw_data(), y->raw_data(), r * cols, keep_begin);
            CopyElements(type, size, x->raw_data(), r * cols + keep_begin, y->raw_data(), r * cols + keep_begin,
                         keep_end - keep_begin);
            FillElements(type, size, zero.raw_data(), y->raw_data(), r * cols + keep_end, cols - keep_end);
          }
          return Status::Ok();
        },
        SerialPayload(type));
  }

 private:
  bool upper_ = true;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(tensor_trilu) {
  Kernel("Trilu")
      .Versions(14, kOpenEnded)
      .Types(TensorTypesAt(13))
      .Tuning(ElementBlockTuning(262144, 65536))
      .Factory(MakeKernel<TriluKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
