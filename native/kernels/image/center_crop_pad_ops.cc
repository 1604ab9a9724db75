// CenterCropPad: each listed axis is centre-cropped (input longer than the target) or
// centre-padded with zeros (input shorter); when the difference is odd the extra element
// is cropped from / padded at the end. Every output row (all axes but the last) copies one
// contiguous run of the matching input row or stays zero, so rows are split across
// participants. Elements are moved as bytes: one instantiation serves every fixed-size type.
#include <algorithm>
#include <cstring>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/axes.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

template <typename I>
std::vector<int64_t> ReadShape(const Tensor& t) {
  const I* d = t.data<I>();
  return std::vector<int64_t>(d, d + t.shape().num_elements());
}

class CenterCropPadKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_axes_ = info.HasAttribute("axes");
    if (has_axes_) {
      OL_ASSIGN_OR_RETURN(axes_, info.GetInts("axes"));
    }
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* shape_tensor, ctx.RequiredInput(1));
    const Shape& in = input->shape();
    const int rank = in.rank();
    std::vector<int64_t> target;
    if (shape_tensor->dtype() == DataType::kInt64)
      target = ReadShape<int64_t>(*shape_tensor);
    else if (shape_tensor->dtype() == DataType::kInt32)
      target = ReadShape<int32_t>(*shape_tensor);
    else
      return InvalidArgument(ctx.Where(), ": shape must be int32 or int64, got ", DataTypeName(shape_tensor->dtype()));
    std::vector<int64_t> axes = axes_;
    if (!has_axes_)
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    if (axes.size() != target.size()) {
      return InvalidArgument(ctx.Where(), ": shape has ", target.size(), " entries for ", axes.size(), " axes");
    }
    std::vector<int64_t> out_dims = in.dims();
    std::vector<int64_t> offset(rank, 0);  // input index = output index + offset
    for (size_t k = 0; k < axes.size(); ++k) {
      OL_ASSIGN_OR_RETURN(int a, NormalizeAxisFor(axes[k], in, ctx.Where()));
      if (target[k] < 0) return InvalidArgument(ctx.Where(), ": negative target size ", target[k], " for axis ", a);
      out_dims[a] = target[k];
      offset[a] = in[a] >= target[k] ? (in[a] - target[k]) / 2 : -((target[k] - in[a]) / 2);
    }
    OL_ASSIGN_OR_RETURN(Tensor * output, ctx.AllocateOutput(0, input->dtype(), Shape(out_dims)));
    const Shape& out = output->shape();
    if (out.num_elements() == 0) return Status::Ok();
    if (rank == 0) {
      std::memcpy(output->raw_data(), input->raw_data(), ElementSize(input->dtype()));
      return Status::Ok();
    }
    const size_t bytes = ElementSize(input->dtype());
    const int64_t out_row = out[rank - 1], in_row = in[rank - 1];
    // The overlapping run of the innermost axis (same for every row).
    const int64_t first = std::max<int64_t>(0, -offset[rank - 1]);
    const int64_t last = std::min<int64_t>(out_row, in_row - offset[rank - 1]);
    std::vector<int64_t> in_row_stride(rank);  // input rows per step of axis d
    for (int d = 0; d < rank; ++d) in_row_stride[d] = d + 1 < rank ? in.SizeBetween(d + 1, rank - 1) : 1;
    const auto* src = static_cast<const char*>(input->raw_data());
    auto* dst = static_cast<char*>(output->raw_data());
    auto copy_rows = [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        char* out_at = dst + row * out_row * bytes;
        std::memset(out_at, 0, out_row * bytes);
        int64_t in_index = 0, rest = row;  // input row index, or -1 when outside
        for (int d = rank - 2; d >= 0; --d) {
          const int64_t i = rest % out[d] + offset[d];
          rest /= out[d];
          if (i < 0 || i >= in[d]) in_index = -1;
          if (in_index >= 0) in_index += i * in_row_stride[d];
        }
        if (in_index < 0 || last <= first) continue;
        std::memcpy(out_at + first * bytes, src + (in_index * in_row + first + offset[rank - 1]) * bytes,
                    (last - first) * bytes);
      }
      return Status::Ok();
    };
    const int64_t rows = out.num_elements() / out_row;
    return parallel_.Run(ctx.parallel(), "center_crop_pad.rows", rows, out_row, copy_rows);
  }

 private:
  bool has_axes_ = false;
  std::vector<int64_t> axes_;
  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(center_crop_pad_family) {
  Kernel("CenterCropPad")
      .Versions(18, kOpenEnded)
      .Types({DataType::kBool, DataType::kInt8, DataType::kUint8, DataType::kInt16, DataType::kUint16, DataType::kInt32,
              DataType::kUint32, DataType::kInt64, DataType::kUint64, DataType::kFloat16, DataType::kFloat,
              DataType::kDouble, DataType::kBFloat16, DataType::kComplex64, DataType::kComplex128})
      .Tuning({MinimumElementsParam(65536, "output elements below which the copy runs serially"),
               ParamSpec::Int64(param::kBlockElements, 32768, 1, int64_t{1} << 40,
                                "smallest parallel block, in output elements")})
      .Factory(MakeKernel<CenterCropPadKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
