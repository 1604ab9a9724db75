#include "native/kernels/pooling/pool_geometry.h"

namespace onnx_light {

Status PoolAttributes::Init(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(kernel, info.GetInts("kernel_shape"));
  const size_t r = kernel.size();
  OL_ASSIGN_OR_RETURN(strides, info.GetInts("strides", std::vector<int64_t>(r, 1)));
  OL_ASSIGN_OR_RETURN(pads, info.GetInts("pads", std::vector<int64_t>(2 * r, 0)));
  OL_ASSIGN_OR_RETURN(dilations, info.GetInts("dilations", std::vector<int64_t>(r, 1)));
  OL_ASSIGN_OR_RETURN(auto_pad, info.GetString("auto_pad", "NOTSET"));
  OL_ASSIGN_OR_RETURN(int64_t ceil, info.GetInt("ceil_mode", 0));
  ceil_mode = ceil != 0;
  if (r == 0 || r > static_cast<size_t>(kMaxPoolRank) || strides.size() != r || pads.size() != 2 * r ||
      dilations.size() != r) {
    return InvalidArgument(info.Where(), ": kernel_shape (", r, " dims), strides (", strides.size(), "), pads (",
                           pads.size(), ") and dilations (", dilations.size(), ") do not agree");
  }
  for (size_t d = 0; d < r; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 || pads[d + r] < 0) {
      return InvalidArgument(info.Where(),
                             ": kernel_shape, strides and dilations must be positive and pads "
                             "non-negative (dimension ",
                             d, ")");
    }
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return InvalidArgument(info.Where(), ": unknown auto_pad '", auto_pad, "'");
  }
  return Status::Ok();
}

StatusOr<PoolGeometry> MakePoolGeometry(const PoolAttributes& attrs, const Shape& x, const std::string& where) {
  PoolGeometry g;
  g.rank = static_cast<int>(attrs.kernel.size());
  if (x.rank() != g.rank + 2) {
    return InvalidArgument(where, ": input shape ", x.ToString(), " must have rank ", g.rank + 2, " ([N, C] + the ",
                           g.rank, " kernel_shape dims)");
  }
  g.planes = x[0] * x[1];
  std::vector<int64_t> out_dims = {x[0], x[1]};
  for (int d = 0; d < g.rank; ++d) {
    const int64_t in = x[d + 2], k = attrs.kernel[d], s = attrs.strides[d], dil = attrs.dilations[d];
    const int64_t extent = (k - 1) * dil + 1;
    int64_t pb = attrs.pads[d], pe = attrs.pads[d + g.rank], out;
    if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      pb = attrs.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (attrs.auto_pad == "VALID") pb = pe = 0;
      const int64_t span = in + pb + pe - extent;
      out = span < 0 ? 0 : (attrs.ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // ceil_mode: a window starting inside the end padding is dropped.
      if (attrs.ceil_mode && out > 0 && (out - 1) * s >= in + pb) --out;
    }
    if (out <= 0) {
      return InvalidArgument(where, ": kernel_shape ", k, " (dilation ", dil, ") does not fit input dimension ", in,
                             " with pads ", pb, "+", pe, " (input shape ", x.ToString(), ")");
    }
    g.in[d] = in;
    g.out[d] = out;
    g.kernel[d] = k;
    g.stride[d] = s;
    g.dilation[d] = dil;
    g.pad_begin[d] = pb;
    g.pad_end[d] = pe;
    g.in_plane *= in;
    g.out_plane *= out;
    out_dims.push_back(out);
  }
  g.output_shape = Shape(out_dims);
  return g;
}

}  // namespace onnx_light
