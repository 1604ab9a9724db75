#include "native/kernels/conv/conv_geometry.h"

#include <algorithm>

namespace onnx_light {
namespace conv {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

// Fills defaults and checks lengths and signs of the per-axis attributes.
Status ResolveCommon(const ConvAttributes& attrs, const Shape& x, const Shape& w, const std::string& where,
                     ConvGeometry* g) {
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return InvalidArgument(where, ": X must be (N, C, spatial...) and W of the same rank, got X ", x, " and W ", w);
  }
  g->rank = x.rank() - 2;
  g->batch = x[0];
  g->group = attrs.group;
  const size_t r = static_cast<size_t>(g->rank);
  g->in_spatial.assign(x.dims().begin() + 2, x.dims().end());
  g->kernel.assign(w.dims().begin() + 2, w.dims().end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != g->kernel) {
    return InvalidArgument(where, ": kernel_shape ", Join(attrs.kernel_shape), " disagrees with W ", w);
  }
  g->strides = attrs.strides.empty() ? std::vector<int64_t>(r, 1) : attrs.strides;
  g->dilations = attrs.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs.dilations;
  std::vector<int64_t> pads = attrs.pads.empty() ? std::vector<int64_t>(2 * r, 0) : attrs.pads;
  if (g->strides.size() != r || g->dilations.size() != r || pads.size() != 2 * r) {
    return InvalidArgument(where, ": strides ", Join(g->strides), ", dilations ", Join(g->dilations), ", pads ",
                           Join(pads), " do not match spatial rank ", r);
  }
  for (size_t i = 0; i < r; ++i) {
    if (g->strides[i] < 1 || g->dilations[i] < 1 || pads[i] < 0 || pads[r + i] < 0 || g->kernel[i] < 1) {
      return InvalidArgument(where, ": strides ", Join(g->strides), ", dilations ", Join(g->dilations), ", pads ",
                             Join(pads), " and kernel ", Join(g->kernel), " must be positive (pads >= 0)");
    }
  }
  g->pads_begin.assign(pads.begin(), pads.begin() + r);
  g->pads_end.assign(pads.begin() + r, pads.end());
  if (g->group < 1) return InvalidArgument(where, ": group must be >= 1, got ", g->group);
  return Status::Ok();
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

Status FinishSizes(const std::string& where, ConvGeometry* g) {
  for (int64_t d : g->out_spatial) {
    if (d < 0) return InvalidArgument(where, ": output spatial shape ", Join(g->out_spatial), " is negative");
  }
  OL_ASSIGN_OR_RETURN(Shape out, Shape::Create(g->output_shape().dims()));
  (void)out;
  g->in_size = Product(g->in_spatial);
  g->out_size = Product(g->out_spatial);
  g->kernel_size = Product(g->kernel);
  return Status::Ok();
}

}  // namespace

StatusOr<ConvAttributes> ConvAttributes::Read(const KernelInfo& info) {
  ConvAttributes a;
  OL_ASSIGN_OR_RETURN(const std::string pad, info.GetString("auto_pad", "NOTSET"));
  if (pad == "NOTSET")
    a.auto_pad = AutoPad::kNotSet;
  else if (pad == "SAME_UPPER")
    a.auto_pad = AutoPad::kSameUpper;
  else if (pad == "SAME_LOWER")
    a.auto_pad = AutoPad::kSameLower;
  else if (pad == "VALID")
    a.auto_pad = AutoPad::kValid;
  else
    return InvalidArgument(info.Where(), ": unknown auto_pad '", pad, "'");
  OL_ASSIGN_OR_RETURN(a.dilations, info.GetInts("dilations", {}));
  OL_ASSIGN_OR_RETURN(a.kernel_shape, info.GetInts("kernel_shape", {}));
  OL_ASSIGN_OR_RETURN(a.pads, info.GetInts("pads", {}));
  OL_ASSIGN_OR_RETURN(a.strides, info.GetInts("strides", {}));
  OL_ASSIGN_OR_RETURN(a.group, info.GetInt("group", 1));
  OL_ASSIGN_OR_RETURN(a.output_padding, info.GetInts("output_padding", {}));
  OL_ASSIGN_OR_RETURN(a.output_shape, info.GetInts("output_shape", {}));
  OL_RETURN_IF_ERROR(a.Validate(info.Where()));
  return a;
}

Status ConvAttributes::Validate(const std::string& where) const {
  const auto all = [](const std::vector<int64_t>& v, auto&& ok) { return std::all_of(v.begin(), v.end(), ok); };
  const auto positive = [](int64_t v) { return v >= 1; };
  if (!all(strides, positive)) return InvalidArgument(where, ": strides ", Join(strides), " must be >= 1");
  if (!all(dilations, positive)) return InvalidArgument(where, ": dilations ", Join(dilations), " must be >= 1");
  if (!all(kernel_shape, positive))
    return InvalidArgument(where, ": kernel_shape ", Join(kernel_shape), " must be >= 1");
  if (!all(pads, [](int64_t v) { return v >= 0; }))
    return InvalidArgument(where, ": pads ", Join(pads), " must be >= 0");
  if (group < 1) return InvalidArgument(where, ": group must be >= 1, got ", group);
  if (!pads.empty() && pads.size() % 2 != 0) {
    return InvalidArgument(where, ": pads ", Join(pads), " must have two entries (begin, end) per spatial axis");
  }
  // ConvTranspose: output_padding adds rows the stride (or, with a larger dilation, the
  // kernel's spread) skipped over, so each entry must be smaller than max(stride, dilation),
  // as ONNX Runtime requires; a larger one reads rows no input reaches.
  const auto at = [](const std::vector<int64_t>& v, size_t i) -> int64_t {
    return v.empty() ? 1 : (i < v.size() ? v[i] : -1);
  };
  for (size_t i = 0; i < output_padding.size(); ++i) {
    const int64_t stride = at(strides, i), dilation = at(dilations, i);
    if (stride < 0 || dilation < 0) {
      return InvalidArgument(where, ": output_padding ", Join(output_padding), ", strides ", Join(strides),
                             " and dilations ", Join(dilations), " have different lengths");
    }
    const int64_t bound = std::max(stride, dilation);
    if (output_padding[i] < 0 || output_padding[i] >= bound) {
      return InvalidArgument(where, ": output_padding ", Join(output_padding),
                             " must be >= 0 and smaller than max(stride, dilation) (axis ", i, ": ", output_padding[i],
                             " vs stride ", stride, ", dilation ", dilation, ")");
    }
  }
  return Status::Ok();
}

Shape ConvGeometry::output_shape() const {
  std::vector<int64_t> dims = {batch, out_channels};
  dims.insert(dims.end(), out_spatial.begin(), out_spatial.end());
  return Shape(dims);
}

StatusOr<ConvGeometry> ResolveConv(const ConvAttributes& attrs, const Shape& x, const Shape& w,
                                   const std::string& where) {
  ConvGeometry g;
  OL_RETURN_IF_ERROR(ResolveCommon(attrs, x, w, where, &g));
  g.in_channels = x[1];
  g.out_channels = w[0];
  if (g.in_channels % g.group != 0 || g.out_channels % g.group != 0 || w[1] * g.group != g.in_channels) {
    return InvalidArgument(where, ": channels do not match group ", g.group, ": X ", x, ", W ", w);
  }
  g.out_spatial.resize(g.rank);
  for (int i = 0; i < g.rank; ++i) {
    const int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t in = g.in_spatial[i], s = g.strides[i];
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet:
        g.out_spatial[i] = FloorDiv(in + g.pads_begin[i] + g.pads_end[i] - extent, s) + 1;
        break;
      case AutoPad::kValid:
        g.pads_begin[i] = g.pads_end[i] = 0;
        g.out_spatial[i] = FloorDiv(in - extent, s) + 1;
        break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        g.out_spatial[i] = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (g.out_spatial[i] - 1) * s + extent - in);
        const int64_t small = total / 2;
        g.pads_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? small : total - small;
        g.pads_end[i] = total - g.pads_begin[i];
        break;
      }
    }
    if (g.out_spatial[i] < 1 && !(in == 0 && g.out_spatial[i] == 0)) {  // an empty input stays empty
      // The (dilated) kernel does not fit in the padded input even once: ONNX's reference
      // and ONNX Runtime reject this instead of returning an empty tensor.
      const int64_t padded = in + g.pads_begin[i] + g.pads_end[i];
      return InvalidArgument(where, ": kernel ", Join(g.kernel), " (dilations ", Join(g.dilations),
                             ") is larger than the padded input on spatial axis ", i, ": extent ", extent,
                             " > padded length ", padded, " (X ", x, ", W ", w, ", pads ", Join(g.pads_begin), "+",
                             Join(g.pads_end), ")");
    }
  }
  OL_RETURN_IF_ERROR(FinishSizes(where, &g));
  return g;
}

StatusOr<ConvGeometry> ResolveConvTranspose(const ConvAttributes& attrs, const Shape& x, const Shape& w,
                                            const std::string& where) {
  ConvGeometry g;
  OL_RETURN_IF_ERROR(ResolveCommon(attrs, x, w, where, &g));
  const size_t r = static_cast<size_t>(g.rank);
  g.in_channels = x[1];
  g.out_channels = w[1] * g.group;
  if (w[0] != g.in_channels || g.in_channels % g.group != 0) {
    return InvalidArgument(where, ": channels do not match group ", g.group, ": X ", x, ", W ", w);
  }
  const std::vector<int64_t> output_padding =
      attrs.output_padding.empty() ? std::vector<int64_t>(r, 0) : attrs.output_padding;
  if (output_padding.size() != r || (!attrs.output_shape.empty() && attrs.output_shape.size() != r)) {
    return InvalidArgument(where, ": output_padding ", Join(output_padding), " / output_shape ",
                           Join(attrs.output_shape), " do not match spatial rank ", r);
  }
  const bool same = attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower;
  g.out_spatial.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = g.strides[i], extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t natural = s * (g.in_spatial[i] - 1) + output_padding[i] + extent;
    if (output_padding[i] < 0) return InvalidArgument(where, ": output_padding ", Join(output_padding), " is negative");
    if (attrs.auto_pad == AutoPad::kValid) g.pads_begin[i] = g.pads_end[i] = 0;
    const bool derive_pads = attrs.pads.empty() && (same || !attrs.output_shape.empty());
    if (derive_pads) {
      // The pads that make the output output_shape (or input * stride under SAME_*).
      const int64_t out = attrs.output_shape.empty() ? g.in_spatial[i] * s : attrs.output_shape[i];
      const int64_t total = natural - out;
      const int64_t half = FloorDiv(total, 2);
      g.pads_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? half : total - half;
      g.pads_end[i] = total - g.pads_begin[i];
      g.out_spatial[i] = out;
    } else {
      g.out_spatial[i] = attrs.output_shape.empty() ? natural - g.pads_begin[i] - g.pads_end[i] : attrs.output_shape[i];
    }
  }
  OL_RETURN_IF_ERROR(FinishSizes(where, &g));
  return g;
}

}  // namespace conv
}  // namespace onnx_light
