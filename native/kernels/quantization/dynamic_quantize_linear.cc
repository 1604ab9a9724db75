// DynamicQuantizeLinear (opset 11): uint8 quantization of a float tensor with the scale
// and zero point derived from its range [min(0, min x), max(0, max x)].
//
// The range is found over fixed chunks of parallel.block_elements elements (min and max
// are exact, so the result never depends on the participant count), then the tensor is
// quantized in contiguous blocks. NaN elements do not take part in the range.
//
// The arithmetic (range, scale and zero point, the SSE2 lanes and their scalar twins) is
// dynamic_range.h's, shared with com.microsoft DynamicQuantizeMatMul.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/quantization/dynamic_range.h"
#include "native/kernels/quantization/quant_kernel_base.h"

namespace onnx_light {
namespace quantization {
namespace {

using Range = DynamicRange;

class DynamicQuantizeLinearKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    if (x->dtype() != DataType::kFloat) {
      return NotImplemented(where_, ": input must be float, got ", x->TypeAndShape());
    }
    const float* xs = x->data<float>();
    const int64_t n = x->num_elements();
    OL_ASSIGN_OR_RETURN(Range range, FindRange(ctx, xs, n));

    // As the ONNX definition spells it, in float.
    const DynamicQuantParams params = DynamicQuantParamsOf(range);
    const float scale = params.scale, zero = params.zero;

    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kUint8, x->shape()));
    OL_ASSIGN_OR_RETURN(Tensor * y_scale, ctx.AllocateOutput(1, DataType::kFloat, Shape()));
    OL_ASSIGN_OR_RETURN(Tensor * y_zero, ctx.AllocateOutput(2, DataType::kUint8, Shape()));
    *y_scale->data<float>() = scale;
    *y_zero->data<uint8_t>() = static_cast<uint8_t>(zero);
    uint8_t* ys = y->data<uint8_t>();
    return ForEachChunk(ctx, policy_, "DynamicQuantizeLinear", n,
                        [&](int64_t begin, int64_t end) { DynamicQuantizeSpan(xs, ys, begin, end, scale, zero); });
  }

 private:
  StatusOr<Range> FindRange(const KernelContext& ctx, const float* x, int64_t n) const {
    // The helper's serial decision; in parallel, per-block partials merged in block order.
    if (policy_.parallel.Serial(n, /*cost=*/1)) return DynamicRangeOf(x, 0, n);
    const int64_t chunk = policy_.parallel.block;
    std::vector<Range> partial(static_cast<size_t>((n + chunk - 1) / chunk));
    OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), static_cast<int64_t>(partial.size()),
                                   ParallelPlan{"DynamicQuantizeLinear.range", 1}, [&](int64_t begin, int64_t end) {
                                     for (int64_t c = begin; c < end; ++c) {
                                       partial[c] = DynamicRangeOf(x, c * chunk, std::min(n, (c + 1) * chunk));
                                     }
                                     return Status::Ok();
                                   }));
    Range r;
    for (const Range& p : partial) r = r.Merge(p);
    return r;
  }

  std::string where_;
  elementwise::ElementwisePolicy policy_;
};

OL_REGISTER_KERNELS(dynamic_quantize_linear) {
  Kernel("DynamicQuantizeLinear")
      .Versions(11, kOpenEnded)
      .Types(TypeList<float>{})
      .Tuning(elementwise::ElementwiseTuning(elementwise::kCheapMinimumElements))
      .Calibratable()
      .Factory(MakeKernel<DynamicQuantizeLinearKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace quantization
}  // namespace onnx_light
