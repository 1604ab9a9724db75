// ConvInteger (int32 output) and QLinearConv (requantized 8-bit output) on the integer GEMM
// engine (igemm/igemm.h). Per image and group: im2col of the 8-bit input (the input zero
// point as padding value, so padding contributes exactly 0), one row per output position,
// times W^T (K = C/group x kernel, N = output channels of the group, w's zero point per
// column = per output channel), written back to NCHW by the engine's sink. A constant W is
// packed once at creation. Depthwise convolutions (group == C == M) take a direct loop,
// parallel over (image, channel) planes. Any spatial rank.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/quantized/igemm/igemm.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using quantized::PerAxis;

Status CheckEightBit(const std::string& where, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt8 || t.dtype() == DataType::kUint8) return Status::Ok();
  return InvalidArgument(where, ": ", what, " must be int8 or uint8, got ", t.TypeAndShape());
}

// Where each output element goes: int32 as is (ConvInteger), or requantized with a
// multiplier and bias per output channel (QLinearConv).
struct ConvOutput {
  int32_t* y32 = nullptr;
  uint8_t* y8 = nullptr;
  bool is_signed = false;
  const float* multipliers = nullptr;  // per output channel
  const int32_t* bias = nullptr;       // per output channel, may be null
  int32_t y_zero_point = 0;

  // Output channel m of image n, positions [p0, p0 + count) of the plane: run[0, count).
  void Emit(const conv::ConvGeometry& g, int64_t n, int64_t m, int64_t p0, int64_t count, const int32_t* run) const {
    const int64_t base = (n * g.out_channels + m) * g.out_size + p0;
    if (y32 != nullptr) {
      std::copy(run, run + count, y32 + base);
      return;
    }
    igemm::Requantize(run, count, bias != nullptr ? bias[m] : 0, multipliers + m, 0, y_zero_point, is_signed,
                      y8 + base);
  }
};

struct ConvInputs {
  const Tensor* x = nullptr;
  int32_t x_zp = 0;
  const Tensor* w = nullptr;
  PerAxis<int32_t> w_zp;
};

// Input offsets of a window: position p's window origin and each kernel tap's offset, as
// linear input indices, and whether p's window lies inside the image (no padding).
class WindowIndexer {
 public:
  explicit WindowIndexer(const conv::ConvGeometry& g) : g_(g) {
    const int r = g.rank;
    in_strides_.assign(r, 1);
    for (int d = r - 1; d > 0; --d) in_strides_[d - 1] = in_strides_[d] * g.in_spatial[d];
    taps_.resize(g.kernel_size);
    tap_coords_.resize(g.kernel_size * r);
    for (int64_t t = 0; t < g.kernel_size; ++t) {
      int64_t rest = t, offset = 0;
      for (int d = r - 1; d >= 0; --d) {
        const int64_t c = (rest % g.kernel[d]) * g.dilations[d];
        rest /= g.kernel[d];
        tap_coords_[t * r + d] = c;
        offset += c * in_strides_[d];
      }
      taps_[t] = offset;
    }
  }

  // Fills origin[d] (may be negative) for output position p; returns whether every tap
  // is inside the input.
  bool Origin(int64_t p, int64_t* origin, int64_t* linear) const {
    const int r = g_.rank;
    bool inside = true;
    int64_t lin = 0;
    for (int d = r - 1; d >= 0; --d) {
      const int64_t o = (p % g_.out_spatial[d]) * g_.strides[d] - g_.pads_begin[d];
      p /= g_.out_spatial[d];
      origin[d] = o;
      lin += o * in_strides_[d];
      inside = inside && o >= 0 && o + (g_.kernel[d] - 1) * g_.dilations[d] < g_.in_spatial[d];
    }
    *linear = lin;
    return inside;
  }
  // Input index of tap t from origin, or -1 when it falls in the padding.
  int64_t Tap(const int64_t* origin, int64_t t) const {
    int64_t idx = 0;
    for (int d = 0; d < g_.rank; ++d) {
      const int64_t c = origin[d] + tap_coords_[t * g_.rank + d];
      if (c < 0 || c >= g_.in_spatial[d]) return -1;
      idx += c * in_strides_[d];
    }
    return idx;
  }
  int64_t tap_offset(int64_t t) const { return taps_[t]; }

 private:
  const conv::ConvGeometry& g_;
  std::vector<int64_t> in_strides_, taps_, tap_coords_;
};

// rows [p0, p1) of the im2col matrix of image n, group gi: row p holds, for each input
// channel c of the group and tap t, x[n, gi * Cg + c, window(p) + t], the zero point byte
// in the padding.
void Im2ColRows(const conv::ConvGeometry& g, const WindowIndexer& windows, const uint8_t* x, uint8_t pad, int64_t n,
                int64_t gi, int64_t p0, int64_t p1, uint8_t* col) {
  const int64_t cg = g.in_per_group(), ks = g.kernel_size, row_len = cg * ks;
  std::vector<int64_t> origin(static_cast<size_t>(g.rank));
  for (int64_t p = p0; p < p1; ++p) {
    uint8_t* row = col + p * row_len;
    int64_t linear = 0;
    const bool inside = windows.Origin(p, origin.data(), &linear);
    for (int64_t c = 0; c < cg; ++c) {
      const uint8_t* plane = x + (n * g.in_channels + gi * cg + c) * g.in_size;
      uint8_t* dst = row + c * ks;
      if (inside) {
        const uint8_t* base = plane + linear;
        for (int64_t t = 0; t < ks; ++t) dst[t] = base[windows.tap_offset(t)];
      } else {
        for (int64_t t = 0; t < ks; ++t) {
          const int64_t idx = windows.Tap(origin.data(), t);
          dst[t] = idx < 0 ? pad : plane[idx];
        }
      }
    }
  }
}

// W of one group as a K x N matrix (K = C/group x kernel, N = M/group): B(k, j) = W[j, k].
igemm::IgemmMatrix GroupWeights(const conv::ConvGeometry& g, const Tensor& w, int64_t gi) {
  const int64_t k = g.in_per_group() * g.kernel_size;
  return igemm::IgemmMatrix{static_cast<const uint8_t*>(w.raw_data()) + gi * g.out_per_group() * k,
                            w.dtype() == DataType::kInt8, 1, k};
}

std::vector<int32_t> GroupZeroPoints(const PerAxis<int32_t>& w_zp, const conv::ConvGeometry& g, int64_t gi) {
  if (w_zp.values.size() == 1) return w_zp.values;
  return std::vector<int32_t>(w_zp.values.begin() + gi * g.out_per_group(),
                              w_zp.values.begin() + (gi + 1) * g.out_per_group());
}

// Direct depthwise convolution (group == C == M): one plane per (image, channel).
Status DepthwiseConv(KernelContext& ctx, const gemm::GemmTuning& tuning, const conv::ConvGeometry& g,
                     const ConvInputs& in, const ConvOutput& out) {
  const WindowIndexer windows(g);
  const bool x_signed = in.x->dtype() == DataType::kInt8, w_signed = in.w->dtype() == DataType::kInt8;
  const auto* xb = static_cast<const uint8_t*>(in.x->raw_data());
  const auto* wb = static_cast<const uint8_t*>(in.w->raw_data());
  const int64_t planes = g.batch * g.out_channels, ks = g.kernel_size;
  const bool serial = gemm::GemmWorkUnits(planes, g.out_size, ks) < tuning.parallel_minimum_tasks;
  const ParallelPlan plan{"qconv.depthwise_planes", 1};
  const int participants = serial ? 1 : AvailableParticipants(ctx.parallel(), plan);
  // Per participant: the plane's accumulators, its shifted weights and its shifted input.
  ScratchArena arena(ctx.allocator(), (sizeof(int32_t) * (g.out_size + ks + g.in_size) + 192) * participants);
  OL_RETURN_IF_ERROR(arena.status());
  std::vector<int32_t*> acc(participants), taps(participants), inputs(participants);
  for (int p = 0; p < participants; ++p) {
    OL_ASSIGN_OR_RETURN(acc[p], arena.AllocateArray<int32_t>(g.out_size));
    OL_ASSIGN_OR_RETURN(taps[p], arena.AllocateArray<int32_t>(ks));
    OL_ASSIGN_OR_RETURN(inputs[p], arena.AllocateArray<int32_t>(g.in_size));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
    std::vector<int64_t> origin(static_cast<size_t>(g.rank));
    uint32_t* plane_acc = reinterpret_cast<uint32_t*>(acc[participant]);
    int32_t* w_shifted = taps[participant];
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.out_channels, m = plane % g.out_channels;
      const int32_t wzp = in.w_zp.at(m);
      for (int64_t t = 0; t < ks; ++t) {
        const uint8_t raw = wb[m * ks + t];
        w_shifted[t] = (w_signed ? static_cast<int32_t>(static_cast<int8_t>(raw)) : static_cast<int32_t>(raw)) - wzp;
      }
      // The input plane shifted by its zero point once (the taps' loops are plain int32).
      const uint8_t* x_raw = xb + (n * g.in_channels + m) * g.in_size;
      int32_t* x = inputs[participant];
      if (x_signed) {
        for (int64_t e = 0; e < g.in_size; ++e) x[e] = static_cast<int32_t>(static_cast<int8_t>(x_raw[e])) - in.x_zp;
      } else {
        for (int64_t e = 0; e < g.in_size; ++e) x[e] = static_cast<int32_t>(x_raw[e]) - in.x_zp;
      }
      for (int64_t p = 0; p < g.out_size; ++p) {
        int64_t linear = 0;
        uint32_t s = 0;
        if (windows.Origin(p, origin.data(), &linear)) {
          for (int64_t t = 0; t < ks; ++t) {
            s += static_cast<uint32_t>(x[linear + windows.tap_offset(t)] * w_shifted[t]);
          }
        } else {
          for (int64_t t = 0; t < ks; ++t) {
            const int64_t idx = windows.Tap(origin.data(), t);
            if (idx >= 0) s += static_cast<uint32_t>(x[idx] * w_shifted[t]);  // padding: x - x_zp = 0
          }
        }
        plane_acc[p] = s;
      }
      out.Emit(g, n, m, 0, g.out_size, reinterpret_cast<const int32_t*>(plane_acc));
    }
    return Status::Ok();
  };
  if (participants <= 1) return run(0, 0, planes);
  return ParallelForWithParticipant(ctx.parallel(), planes, ParallelPlan{"qconv.depthwise_planes", 1, participants},
                                    run);
}

// W packed per group at creation when it is a constant initializer (with its zero point if
// constant); used only when the run's W and zero point are those very tensors.
class PrepackedConvWeights {
 public:
  Status Init(const KernelInfo& info, const conv::ConvAttributes& attrs, int w_index, int zp_index) {
    const Tensor* w = info.constant_input(w_index);
    const Tensor* zp = info.constant_input(zp_index);
    if (w == nullptr || w->shape().rank() < 3 || (w->dtype() != DataType::kInt8 && w->dtype() != DataType::kUint8)) {
      return Status::Ok();
    }
    const int64_t m = w->shape()[0], group = attrs.group;
    if (group < 1 || m % group != 0) return Status::Ok();  // reported at run time
    auto w_zp = quantized::ReadZeroPoint(zp, m, info.node_name(), "w_zero_point");
    if (!w_zp.ok()) return Status::Ok();
    conv::ConvGeometry g;  // just what GroupWeights reads
    g.group = group;
    g.out_channels = m;
    g.in_channels = w->shape()[1] * group;
    g.kernel_size = w->shape().num_elements() / std::max<int64_t>(1, m * w->shape()[1]);
    const int64_t k = w->shape()[1] * g.kernel_size;
    for (int64_t gi = 0; gi < group; ++gi) {
      const auto zps = GroupZeroPoints(*w_zp, g, gi);
      OL_ASSIGN_OR_RETURN(auto packed, igemm::IgemmPackedB::Create(k, m / group, GroupWeights(g, *w, gi), zps.data(),
                                                                   static_cast<int64_t>(zps.size())));
      groups_.push_back(std::move(packed));
    }
    w_ = *w;
    if (zp != nullptr) zp_ = *zp;
    w_data_ = w_.raw_data();
    zp_data_ = zp != nullptr ? zp_.raw_data() : nullptr;
    return Status::Ok();
  }
  // The packed groups if they are this run's W and zero point, else null.
  const std::vector<std::shared_ptr<const igemm::IgemmPackedB>>* Match(const Tensor& w, const Tensor* zp,
                                                                       const conv::ConvGeometry& g) const {
    if (groups_.empty() || w.raw_data() != w_data_ || (zp != nullptr ? zp->raw_data() : nullptr) != zp_data_ ||
        static_cast<int64_t>(groups_.size()) != g.group || groups_[0]->k() != g.in_per_group() * g.kernel_size) {
      return nullptr;
    }
    return &groups_;
  }

 private:
  std::vector<std::shared_ptr<const igemm::IgemmPackedB>> groups_;
  Tensor w_, zp_;  // keep the constant buffers alive (and their addresses unique)
  const void* w_data_ = nullptr;
  const void* zp_data_ = nullptr;
};

Status IntegerConv(KernelContext& ctx, const gemm::GemmTuning& tuning, const conv::ConvGeometry& g,
                   const ConvInputs& in, const PrepackedConvWeights& prepacked, const Tensor* w_zp_tensor,
                   const ConvOutput& out) {
  if (g.group == g.in_channels && g.group == g.out_channels) return DepthwiseConv(ctx, tuning, g, in, out);
  const WindowIndexer windows(g);
  const int64_t k = g.in_per_group() * g.kernel_size, p_count = g.out_size, mg = g.out_per_group();
  const auto* packed_groups = prepacked.Match(*in.w, w_zp_tensor, g);
  ScratchArena arena(ctx.allocator(), static_cast<size_t>(p_count * k) + 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(uint8_t * col, arena.AllocateArray<uint8_t>(static_cast<size_t>(p_count * k)));
  int64_t scratch = static_cast<int64_t>(arena.capacity());
  const bool x_signed = in.x->dtype() == DataType::kInt8;
  const uint8_t pad = x_signed ? static_cast<uint8_t>(static_cast<int8_t>(in.x_zp)) : static_cast<uint8_t>(in.x_zp);
  const auto* xb = static_cast<const uint8_t*>(in.x->raw_data());
  const bool parallel_im2col = gemm::GemmWorkUnits(p_count, g.out_channels, k) >= tuning.parallel_minimum_tasks;
  for (int64_t gi = 0; gi < g.group; ++gi) {
    std::shared_ptr<const igemm::IgemmPackedB> packed_here;
    const igemm::IgemmPackedB* packed = nullptr;
    if (packed_groups != nullptr) {
      packed = (*packed_groups)[gi].get();
    } else {
      const auto zps = GroupZeroPoints(in.w_zp, g, gi);
      OL_ASSIGN_OR_RETURN(packed_here, igemm::IgemmPackedB::Create(k, mg, GroupWeights(g, *in.w, gi), zps.data(),
                                                                   static_cast<int64_t>(zps.size())));
      packed = packed_here.get();
    }
    for (int64_t n = 0; n < g.batch; ++n) {
      const auto fill = [&](int64_t begin, int64_t end) {
        Im2ColRows(g, windows, xb, pad, n, gi, begin, end, col);
        return Status::Ok();
      };
      if (parallel_im2col) {
        OL_RETURN_IF_ERROR(
            ParallelFor(ctx.parallel(), p_count,
                        ParallelPlan{"qconv.im2col", std::max<int64_t>(1, 16384 / std::max<int64_t>(k, 1))}, fill));
      } else {
        OL_RETURN_IF_ERROR(fill(0, p_count));
      }
      const igemm::IgemmA a{igemm::IgemmMatrix{col, x_signed, k, 1}, &in.x_zp, 1};
      int64_t engine_scratch = 0;
      OL_RETURN_IF_ERROR(igemm::IgemmCompute(
          ctx.parallel(), ctx.allocator(), tuning.parallel_minimum_tasks, p_count, a, *packed,
          [&](int64_t i0, int rows, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
            // Transposed back to NCHW: channel by channel, a run of positions at a time.
            std::array<int32_t, 128> run;
            for (int c = 0; c < cols; ++c) {
              for (int r0 = 0; r0 < rows; r0 += static_cast<int>(run.size())) {
                const int count = std::min<int>(static_cast<int>(run.size()), rows - r0);
                for (int r = 0; r < count; ++r) run[r] = acc[(r0 + r) * ld + c];
                out.Emit(g, n, gi * mg + j0 + c, i0 + r0, count, run.data());
              }
            }
          },
          &engine_scratch));
      scratch = std::max(scratch, static_cast<int64_t>(arena.capacity()) + engine_scratch);
    }
  }
  ctx.RecordScratch(scratch);
  return Status::Ok();
}

class ConvIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, attrs_, 1, 3);
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    ConvInputs in;
    OL_ASSIGN_OR_RETURN(in.x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(in.w, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *in.x, "x"));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *in.w, "w"));
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry g, conv::ResolveConv(attrs_, in.x->shape(), in.w->shape(), where));
    OL_ASSIGN_OR_RETURN(const auto x_zp, quantized::ReadZeroPoint(ctx.input(2), 1, where, "x_zero_point"));
    in.x_zp = x_zp.at(0);
    OL_ASSIGN_OR_RETURN(in.w_zp, quantized::ReadZeroPoint(ctx.input(3), g.out_channels, where, "w_zero_point"));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, g.output_shape()));
    if (y->num_elements() == 0) return Status::Ok();
    ConvOutput out;
    out.y32 = y->data<int32_t>();
    return IntegerConv(ctx, tuning_, g, in, prepacked_, ctx.input(3), out);
  }

 private:
  conv::ConvAttributes attrs_;
  gemm::GemmTuning tuning_;
  PrepackedConvWeights prepacked_;
};

class QLinearConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    return prepacked_.Init(info, attrs_, 3, 5);
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    ConvInputs in;
    OL_ASSIGN_OR_RETURN(in.x, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(in.w, ctx.RequiredInput(3));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *in.x, "x"));
    OL_RETURN_IF_ERROR(CheckEightBit(where, *in.w, "w"));
    OL_ASSIGN_OR_RETURN(const conv::ConvGeometry g, conv::ResolveConv(attrs_, in.x->shape(), in.w->shape(), where));
    OL_ASSIGN_OR_RETURN(const auto x_scale, quantized::ReadScale(ctx.input(1), 1, where, "x_scale"));
    OL_ASSIGN_OR_RETURN(const auto x_zp, quantized::ReadZeroPoint(ctx.input(2), 1, where, "x_zero_point"));
    in.x_zp = x_zp.at(0);
    OL_ASSIGN_OR_RETURN(const auto w_scale, quantized::ReadScale(ctx.input(4), g.out_channels, where, "w_scale"));
    OL_ASSIGN_OR_RETURN(in.w_zp, quantized::ReadZeroPoint(ctx.input(5), g.out_channels, where, "w_zero_point"));
    OL_ASSIGN_OR_RETURN(const auto y_scale, quantized::ReadScale(ctx.input(6), 1, where, "y_scale"));
    const Tensor* y_zp_tensor = ctx.input(7);
    OL_ASSIGN_OR_RETURN(const auto y_zp, quantized::ReadZeroPoint(y_zp_tensor, 1, where, "y_zero_point"));
    const Tensor* bias = ctx.input(8);
    if (bias != nullptr && (bias->dtype() != DataType::kInt32 || bias->num_elements() != g.out_channels)) {
      return InvalidArgument(where, ": B ", bias->TypeAndShape(), " must be int32 with ", g.out_channels, " elements");
    }
    const DataType out_type = y_zp_tensor != nullptr ? y_zp_tensor->dtype() : in.x->dtype();
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      return InvalidArgument(where, ": y_zero_point must be int8 or uint8, got ", DataTypeName(out_type));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, g.output_shape()));
    if (y->num_elements() == 0) return Status::Ok();
    // x_scale * w_scale / y_scale in float, as the reference computes it.
    std::vector<float> multipliers(static_cast<size_t>(g.out_channels));
    for (int64_t m = 0; m < g.out_channels; ++m) multipliers[m] = x_scale.at(0) * w_scale.at(m) / y_scale.at(0);
    ConvOutput out;
    out.y8 = static_cast<uint8_t*>(y->raw_data());
    out.is_signed = out_type == DataType::kInt8;
    out.multipliers = multipliers.data();
    out.bias = bias != nullptr ? bias->data<int32_t>() : nullptr;
    out.y_zero_point = y_zp.at(0);
    return IntegerConv(ctx, tuning_, g, in, prepacked_, ctx.input(5), out);
  }

 private:
  conv::ConvAttributes attrs_;
  gemm::GemmTuning tuning_;
  PrepackedConvWeights prepacked_;
};

OL_REGISTER_KERNELS(conv_integer_ops) {
  using EightBit = TypeList<int8_t, uint8_t>;
  Kernel("ConvInteger")
      .Opsets({Since(10, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<ConvIntegerKernel>())
      .AddTo(registry);
  Kernel("QLinearConv")
      .Opsets({Since(10, EightBit{})})
      .Tuning(gemm::GemmTuningParams())
      .Factory(MakeKernel<QLinearConvKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
