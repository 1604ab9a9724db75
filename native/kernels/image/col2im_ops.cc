// Col2Im: the inverse of im2col. Input [N, C * prod(block), L] holds, for every kernel
// offset k and sliding-block position b, the value that lands on image position
// b * stride - pad_begin + k * dilation; overlapping values add up. Written as a gather:
// each output pixel adds its contributions in ascending kernel-offset order (the order a
// serial scatter over kernel offsets would use), so pixels are independent, split across
// participants, and the result does not depend on the split.
#include <algorithm>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

constexpr int kMaxImageRank = 8;

struct Col2ImGeometry {
  int rank = 0;
  int64_t image[kMaxImageRank], block[kMaxImageRank], blocks[kMaxImageRank];
  int64_t stride[kMaxImageRank], dilation[kMaxImageRank], pad_begin[kMaxImageRank];
  int64_t kernel_size = 1, block_count = 1, image_size = 1;
};

StatusOr<std::vector<int64_t>> ReadInt64Vector(const Tensor& t, const char* what, const std::string& where) {
  if (t.dtype() != DataType::kInt64 || t.shape().rank() != 1) {
    return InvalidArgument(where, ": ", what, " must be a 1-D int64 tensor, got ", DataTypeName(t.dtype()), " ",
                           t.shape().ToString());
  }
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.shape()[0]);
}

class Col2ImKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(dilations_, info.GetInts("dilations", {}));
    OL_ASSIGN_OR_RETURN(pads_, info.GetInts("pads", {}));
    OL_ASSIGN_OR_RETURN(strides_, info.GetInts("strides", {}));
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* image_t, ctx.RequiredInput(1));
    OL_ASSIGN_OR_RETURN(const Tensor* block_t, ctx.RequiredInput(2));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> image, ReadInt64Vector(*image_t, "image_shape", ctx.Where()));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> block, ReadInt64Vector(*block_t, "block_shape", ctx.Where()));
    OL_ASSIGN_OR_RETURN(Col2ImGeometry g, Geometry(image, block, ctx.Where()));
    const Shape& xs = input->shape();
    if (xs.rank() != 3 || xs[1] % g.kernel_size != 0 || xs[2] != g.block_count) {
      return InvalidArgument(ctx.Where(), ": input ", xs.ToString(), " must be [N, C * ", g.kernel_size, ", ",
                             g.block_count, "] for these image and block shapes");
    }
    const int64_t channels = xs[1] / g.kernel_size;
    std::vector<int64_t> out_dims = {xs[0], channels};
    out_dims.insert(out_dims.end(), image.begin(), image.end());
    OL_ASSIGN_OR_RETURN(Tensor * output, ctx.AllocateOutput(0, input->dtype(), Shape(out_dims)));
    const int64_t total = output->shape().num_elements();
    if (total == 0) return Status::Ok();
    return DispatchType(
        TypeList<Float16, float, double, BFloat16, int32_t, int64_t>{}, input->dtype(), ctx.Where(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          using N = Numeric<T>;
          const T* x = input->data<T>();
          T* y = output->data<T>();
          auto pixels = [&](int64_t begin, int64_t end) {
            for (int64_t flat = begin; flat < end; ++flat) {
              const int64_t plane = flat / g.image_size;  // n * channels + c
              int64_t pos[kMaxImageRank];
              for (int64_t d = g.rank - 1, rest = flat % g.image_size; d >= 0; --d)
                pos[d] = rest % g.image[d], rest /= g.image[d];
              typename N::Acc sum = 0;
              for (int64_t k = 0; k < g.kernel_size; ++k) {  // kernel offsets in ascending order
                int64_t column = 0;
                bool hit = true;
                for (int64_t d = g.rank - 1, rest = k, scale = 1; d >= 0 && hit; --d) {
                  const int64_t offset = rest % g.block[d];
                  rest /= g.block[d];
                  const int64_t shifted = pos[d] + g.pad_begin[d] - offset * g.dilation[d];
                  const int64_t b = shifted / g.stride[d];
                  hit = shifted >= 0 && shifted % g.stride[d] == 0 && b < g.blocks[d];
                  column += b * scale;
                  scale *= g.blocks[d];
                }
                if (hit) sum = WrappingAdd(sum, N::Load(x[(plane * g.kernel_size + k) * g.block_count + column]));
              }
              y[flat] = N::Store(sum);
            }
            return Status::Ok();
          };
          return parallel_.Run(ctx.parallel(), "col2im.pixels", total, 1, pixels);
        });
  }

 private:
  StatusOr<Col2ImGeometry> Geometry(const std::vector<int64_t>& image, const std::vector<int64_t>& block,
                                    const std::string& where) const {
    Col2ImGeometry g;
    g.rank = static_cast<int>(image.size());
    auto attr_or = [&](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
      return v.empty() ? fallback : v[i];
    };
    if (g.rank < 1 || g.rank > kMaxImageRank || block.size() != image.size() ||
        (!dilations_.empty() && dilations_.size() != image.size()) ||
        (!strides_.empty() && strides_.size() != image.size()) ||
        (!pads_.empty() && pads_.size() != 2 * image.size())) {
      return InvalidArgument(where, ": image_shape, block_shape, dilations, strides and pads disagree on the rank (",
                             image.size(), " image axes)");
    }
    for (int d = 0; d < g.rank; ++d) {
      g.image[d] = image[d], g.block[d] = block[d];
      g.dilation[d] = attr_or(dilations_, d, 1), g.stride[d] = attr_or(strides_, d, 1);
      g.pad_begin[d] = attr_or(pads_, d, 0);
      const int64_t pad_end = attr_or(pads_, d + g.rank, 0);
      if (g.image[d] < 0 || g.block[d] < 1 || g.dilation[d] < 1 || g.stride[d] < 1 || g.pad_begin[d] < 0 ||
          pad_end < 0) {
        return InvalidArgument(where, ": axis ", d, " has image ", g.image[d], ", block ", g.block[d], ", dilation ",
                               g.dilation[d], ", stride ", g.stride[d], " (all must be positive)");
      }
      const int64_t span = g.image[d] + g.pad_begin[d] + pad_end - g.dilation[d] * (g.block[d] - 1) - 1;
      if (span < 0) return InvalidArgument(where, ": axis ", d, ": the block does not fit the padded image");
      g.blocks[d] = span / g.stride[d] + 1;
      g.kernel_size *= g.block[d], g.block_count *= g.blocks[d], g.image_size *= g.image[d];
    }
    return g;
  }

  std::vector<int64_t> dilations_, pads_, strides_;
  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(col2im_family) {
  Kernel("Col2Im")
      .Versions(18, kOpenEnded)
      .Types({DataType::kFloat16, DataType::kFloat, DataType::kDouble, DataType::kBFloat16, DataType::kInt32,
              DataType::kInt64})
      .Tuning({MinimumElementsParam(16384, "output elements below which the op runs serially"),
               ParamSpec::Int64(param::kBlockElements, 4096, 1, int64_t{1} << 40,
                                "smallest parallel block, in output elements")})
      .Factory(MakeKernel<Col2ImKernel>())
      .AddTo(registry);
}

}  // namespace onnx_light
