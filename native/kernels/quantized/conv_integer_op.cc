// ConvInteger (int32 output) and QLinearConv (requantized 8-bit output) on the integer GEMM
// engine (igemm/igemm.h), output channels as the product's rows:
//   Y[n, g, :, block] = W_g (Mg x K, packed once as the engine's left operand with its row
//   sums) x X columns (K = C/group x kernel rows, one column per output position)
// The input block is packed per run straight into the engine's right-hand panels, the input
// zero point as padding value (so padding contributes exactly 0): for a 1x1, stride-1,
// unpadded convolution from the input planes in place; for other 1-D/2-D ones from padded
// copies of the planes split by stride phase, on the phase-width grid (each im2col row a
// contiguous span of one phase plane); otherwise from an im2col slice of the block's
// columns. Each C row is an NCHW output row: the epilogue writes it (int32, or requantized
// with the channel's multiplier, bias and the output zero point) with no transposition.
// Work splits over (image, group, spatial block, channel block) tasks fixed by the shape;
// integer sums are exact, so results do not depend on the participant count. Depthwise
// convolutions (group == C == M) take a direct loop over output rows (each tap a shifted
// row times one weight, int32 accumulation), parallel over (image, channel) planes. Any
// spatial rank (ranks 1 and 2 take the row-copy im2col).
// Constant symmetric int8 weights (zero points 0, group 1, 1-D/2-D, channels a multiple of
// 4, not 1x1 stride 1 unpadded) take SymmetricConv instead where the igemm kernel has
// indirect tiles: output positions
// as the product's rows, read in place from an NHWC copy of the input (ONNX Runtime's
// symmetric indirect convolution; tuning algorithm.symmetric_indirect). Same bits.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/conv/conv_geometry.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/quantized/igemm/igemm.h"
#include "native/kernels/quantized/quantized_util.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using quantized::PerAxis;

// Tuning: whether symmetric int8 weights take SymmetricConv (ConvTuningParams).
constexpr char kSymmetricIndirect[] = "algorithm.symmetric_indirect";

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
  // Requantized output: run[0, count) of channel m requantized into dst (the same
  // elementwise arithmetic as Emit), for a caller that scatters the bytes itself.
  void Requantize(int64_t m, int64_t count, const int32_t* run, uint8_t* dst) const {
    igemm::Requantize(run, count, bias != nullptr ? bias[m] : 0, multipliers + m, 0, y_zero_point, is_signed, dst);
  }
  // Output channel m of image n at position p: the byte address (8-bit output only).
  uint8_t* Byte(const conv::ConvGeometry& g, int64_t n, int64_t m, int64_t p) const {
    return y8 + (n * g.out_channels + m) * g.out_size + p;
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

// A 1-D or 2-D convolution as 2-D (a 1-D one is one row high); rank 0 for others.
struct Plane2D {
  bool ok = false;
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;

  explicit Plane2D(const conv::ConvGeometry& g) {
    if (g.rank == 2) {
      ok = true;
      h = g.in_spatial[0], w = g.in_spatial[1], oh = g.out_spatial[0], ow = g.out_spatial[1];
      kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
      dh = g.dilations[0], dw = g.dilations[1], ph = g.pads_begin[0], pw = g.pads_begin[1];
    } else if (g.rank == 1) {
      ok = true;
      w = g.in_spatial[0], ow = g.out_spatial[0], kw = g.kernel[0], sw = g.strides[0], dw = g.dilations[0];
      pw = g.pads_begin[0];
    }
    if (ok) TapColumns();
  }
  // Output columns [lo, hi) whose tap kx falls inside the input row (divided once per tap
  // here, not per im2col row).
  static int64_t CeilDiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }
  int64_t ColumnLo(int64_t kx) const { return column_lo[kx]; }
  int64_t ColumnHi(int64_t kx) const { return column_hi[kx]; }
  std::vector<int64_t> column_lo, column_hi;

 private:
  void TapColumns() {
    for (int64_t kx = 0; kx < kw; ++kx) {
      column_lo.push_back(std::min(ow, CeilDiv(pw - kx * dw, sw)));
      column_hi.push_back(std::min(ow, CeilDiv(w + pw - kx * dw, sw)));
    }
  }
};

// dst[j] = src[j * stride] for j < n; stride 2 (the strided convolutions of CNNs) with a
// constant stride the compiler can vectorise, the stride in a local (a byte store could
// otherwise alias it).
inline void StridedCopy(const uint8_t* src, int64_t stride, int64_t n, uint8_t* dst) {
  if (stride == 2) {
    for (int64_t j = 0; j < n; ++j) dst[j] = src[2 * j];
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j * stride];
}

// even[j] = src[2 j], odd[j] = src[2 j + 1] for j < n (vectorised by the compiler).
inline void Deinterleave2(const uint8_t* __restrict src, int64_t n, uint8_t* __restrict even, uint8_t* __restrict odd) {
  for (int64_t j = 0; j < n; ++j) {
    even[j] = src[2 * j];
    odd[j] = src[2 * j + 1];
  }
}

// The im2col slice of output positions [p0, p0 + cols) for one image and group: row
// k = (c, tap) at dst + k * cols holds x[c, window(p) + tap] for each position, `pad` in the
// padding. x points at the group's first input channel of the image.
void Im2ColBlock(const conv::ConvGeometry& g, const Plane2D& v, const WindowIndexer& windows, const uint8_t* x,
                 uint8_t pad, int64_t p0, int64_t cols, uint8_t* dst) {
  const int64_t cg = g.in_per_group(), ks = g.kernel_size;
  if (!v.ok) {  // any rank: window by window
    std::vector<int64_t> origin(static_cast<size_t>(g.rank));
    for (int64_t j = 0; j < cols; ++j) {
      int64_t linear = 0;
      windows.Origin(p0 + j, origin.data(), &linear);
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t t = 0; t < ks; ++t) {
          const int64_t idx = windows.Tap(origin.data(), t);
          dst[(c * ks + t) * cols + j] = idx < 0 ? pad : x[c * g.in_size + idx];
        }
      }
    }
    return;
  }
  // The block starts in output row oy0 at column a0 (divided once, not per segment).
  const int64_t oy0 = p0 / v.ow, a0 = p0 % v.ow;
  for (int64_t c = 0; c < cg; ++c) {
    const uint8_t* plane = x + c * g.in_size;
    for (int64_t ky = 0; ky < v.kh; ++ky) {
      for (int64_t kx = 0; kx < v.kw; ++kx) {
        uint8_t* row = dst + ((c * v.kh + ky) * v.kw + kx) * cols;
        const int64_t lo = v.ColumnLo(kx), hi = v.ColumnHi(kx);
        // Output rows crossed by the block, a segment [a, b) of columns each.
        int64_t oy = oy0, a = a0;
        for (int64_t p = p0, end = p0 + cols; p < end; ++oy, a = 0) {
          const int64_t b = std::min(v.ow, a + (end - p));
          uint8_t* out = row + (p - p0);
          const int64_t iy = oy * v.sh - v.ph + ky * v.dh;
          if (iy < 0 || iy >= v.h) {
            std::fill(out, out + (b - a), pad);
          } else {
            const uint8_t* in = plane + iy * v.w - v.pw + kx * v.dw;  // in[ox * sw]: input of column ox
            const int64_t m0 = std::max(a, std::min(lo, b)), m1 = std::max(m0, std::min(hi, b));
            std::fill(out, out + (m0 - a), pad);
            if (v.sw == 1) {
              std::copy(in + m0, in + m1, out + (m0 - a));
            } else {
              StridedCopy(in + m0 * v.sw, v.sw, m1 - m0, out + (m0 - a));
            }
            std::fill(out + (m1 - a), out + (b - a), pad);
          }
          p += b - a;
        }
      }
    }
  }
}

// Direct depthwise convolution (group == C == M): one plane per (image, channel); 1-D and
// 2-D planes row by row (each tap adds a shifted input row times one weight), other ranks
// window by window. The input plane is shifted by its zero point once, so padding (skipped)
// contributes 0 as in the definition.
Status DepthwiseConv(KernelContext& ctx, const gemm::GemmTuning& tuning, const conv::ConvGeometry& g,
                     const ConvInputs& in, const ConvOutput& out) {
  const WindowIndexer windows(g);
  const Plane2D v(g);
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
      const uint8_t* x_raw = xb + (n * g.in_channels + m) * g.in_size;
      int32_t* x = inputs[participant];
      if (x_signed) {
        for (int64_t e = 0; e < g.in_size; ++e) x[e] = static_cast<int32_t>(static_cast<int8_t>(x_raw[e])) - in.x_zp;
      } else {
        for (int64_t e = 0; e < g.in_size; ++e) x[e] = static_cast<int32_t>(x_raw[e]) - in.x_zp;
      }
      if (v.ok) {
        for (int64_t oy = 0; oy < v.oh; ++oy) {
          uint32_t* row = plane_acc + oy * v.ow;
          std::fill(row, row + v.ow, 0u);
          for (int64_t ky = 0; ky < v.kh; ++ky) {
            const int64_t iy = oy * v.sh - v.ph + ky * v.dh;
            if (iy < 0 || iy >= v.h) continue;
            for (int64_t kx = 0; kx < v.kw; ++kx) {
              const uint32_t wt = static_cast<uint32_t>(w_shifted[ky * v.kw + kx]);
              const int32_t* in_row = x + iy * v.w - v.pw + kx * v.dw;  // in_row[ox * sw]
              const int64_t lo = v.ColumnLo(kx), hi = std::max(lo, v.ColumnHi(kx));
              if (v.sw == 1) {
                for (int64_t ox = lo; ox < hi; ++ox) row[ox] += static_cast<uint32_t>(in_row[ox]) * wt;
              } else {
                for (int64_t ox = lo; ox < hi; ++ox) row[ox] += static_cast<uint32_t>(in_row[ox * v.sw]) * wt;
              }
            }
          }
        }
      } else {
        for (int64_t p = 0; p < g.out_size; ++p) {
          int64_t linear = 0;
          uint32_t s = 0;
          if (windows.Origin(p, origin.data(), &linear)) {
            for (int64_t t = 0; t < ks; ++t) {
              s += static_cast<uint32_t>(x[linear + windows.tap_offset(t)]) * static_cast<uint32_t>(w_shifted[t]);
            }
          } else {
            for (int64_t t = 0; t < ks; ++t) {
              const int64_t idx = windows.Tap(origin.data(), t);
              if (idx >= 0) s += static_cast<uint32_t>(x[idx]) * static_cast<uint32_t>(w_shifted[t]);
            }
          }
          plane_acc[p] = s;
        }
      }
      out.Emit(g, n, m, 0, g.out_size, reinterpret_cast<const int32_t*>(plane_acc));
    }
    return Status::Ok();
  };
  if (participants <= 1) return run(0, 0, planes);
  return ParallelForWithParticipant(ctx.parallel(), planes, ParallelPlan{"qconv.depthwise_planes", 1, participants},
                                    run);
}

// W of group gi as the engine's left operand: Mg rows of K = C/group x kernel bytes.
StatusOr<std::shared_ptr<const igemm::IgemmPackedA>> PackGroupWeights(const Tensor& w, const PerAxis<int32_t>& w_zp,
                                                                      int64_t group, int64_t gi) {
  const int64_t m = w.shape()[0], mg = m / group, k = w.num_elements() / std::max<int64_t>(m, 1);
  std::vector<int32_t> zps = w_zp.values;
  if (zps.size() != 1) zps.assign(w_zp.values.begin() + gi * mg, w_zp.values.begin() + (gi + 1) * mg);
  const igemm::IgemmMatrix matrix{static_cast<const uint8_t*>(w.raw_data()) + gi * mg * k, w.dtype() == DataType::kInt8,
                                  k, 1};
  return igemm::IgemmPackedA::Create(mg, k, matrix, zps.data(), static_cast<int64_t>(zps.size()));
}

using PackedGroups = std::vector<std::shared_ptr<const igemm::IgemmPackedA>>;

// int8 W (M x C x taps, zero points 0) as the engine's right operand for SymmetricConv:
// K = taps x C rows ordered tap-major (row t C + c holds W[:, c, t]), one column per output
// channel, so that an output position's K bytes are its taps' C-channel spans of an NHWC
// input, in tap order.
StatusOr<std::shared_ptr<const igemm::IgemmPackedB>> PackSymmetricWeights(const Tensor& w) {
  const int64_t m = w.shape()[0], c = w.shape()[1], taps = w.num_elements() / std::max<int64_t>(m * c, 1);
  const auto* src = static_cast<const int8_t*>(w.raw_data());
  std::vector<int8_t> tap_major(static_cast<size_t>(m * c * taps));
  for (int64_t mm = 0; mm < m; ++mm) {
    for (int64_t cc = 0; cc < c; ++cc) {
      for (int64_t t = 0; t < taps; ++t) tap_major[(t * c + cc) * m + mm] = src[(mm * c + cc) * taps + t];
    }
  }
  return igemm::IgemmPackedB::Create(c * taps, m, igemm::IgemmMatrix{tap_major.data(), true, m, 1}, nullptr, 1);
}

// W packed per group at creation when it is a constant initializer (with its zero point if
// constant). When the zero point is constant or absent and the convolution is not
// depthwise (the depthwise loop reads W itself), the packed groups are all a run needs: W
// is absorbed (registry/kernel.h, the packed bytes reported as held in its place) and
// matched by shape, its data being released. Otherwise the packed groups are used only
// when the run's W and zero point are those very tensors.
class PrepackedConvWeights {
 public:
  // symmetric: whether symmetric int8 weights may take SymmetricConv (the kernel's tuning).
  Status Init(const KernelInfo& info, const conv::ConvAttributes& attrs, int w_index, int zp_index, bool symmetric) {
    const Tensor* w = info.constant_input(w_index);
    const Tensor* zp = info.constant_input(zp_index);
    if (w == nullptr || w->shape().rank() < 3 || (w->dtype() != DataType::kInt8 && w->dtype() != DataType::kUint8)) {
      return Status::Ok();
    }
    const int64_t m = w->shape()[0], group = attrs.group;
    if (group < 1 || m % group != 0) return Status::Ok();  // reported at run time
    auto w_zp = quantized::ReadZeroPoint(zp, m, info.node_name(), "w_zero_point");
    if (!w_zp.ok()) return Status::Ok();
    if (zp != nullptr) zp_ = *zp;
    zp_data_ = zp != nullptr ? zp_.raw_data() : nullptr;
    w_shape_ = w->shape();
    // Symmetric int8 weights (every zero point 0, as quantize_static writes them), one
    // group, 1-D or 2-D, channels a multiple of 4: W as the engine's B for SymmetricConv,
    // when the best kernel has indirect tiles (VNNI's bytes, AVX2's pairs; the scalar, NEON
    // and AVX-512-without-VNNI kernels take the path below).
    // Not a 1x1, stride-1, unpadded convolution: the path below reads its input planes in
    // place, where SymmetricConv would copy them to NHWC first (session 13, Zen 5, 1 thread:
    // ResNet-50's 1024->256 on 14x14 187 vs 130 us, 256->64 on 56x56 192 vs 163, 64->256
    // 287 vs 269; only 2048->512 on 7x7 gained, 145 vs 149).
    const bool zero_zp = std::all_of(w_zp->values.begin(), w_zp->values.end(), [](int32_t z) { return z == 0; });
    const int rank = w->shape().rank();
    const bool unit_strides = std::all_of(attrs.strides.begin(), attrs.strides.end(), [](int64_t e) { return e == 1; });
    const bool unpadded = std::all_of(attrs.pads.begin(), attrs.pads.end(), [](int64_t e) { return e == 0; });
    const bool in_place = w->num_elements() == m * w->shape()[1] && unit_strides && unpadded;
    if (symmetric && igemm::IgemmIndirectAvailable() && w->dtype() == DataType::kInt8 && zero_zp && group == 1 &&
        (rank == 3 || rank == 4) && w->shape()[1] % 4 == 0 && !in_place &&
        (zp != nullptr || zp_index >= info.num_inputs())) {
      OL_ASSIGN_OR_RETURN(auto packed, PackSymmetricWeights(*w));
      if (igemm::IgemmIndirectSupported(*packed, w->shape()[1])) {
        symmetric_ = std::move(packed);
        absorbed_ = true;
        return info.AbsorbConstantInput(w_index, symmetric_->held_bytes());
      }
    }
    int64_t held = 0;
    for (int64_t gi = 0; gi < group; ++gi) {
      OL_ASSIGN_OR_RETURN(auto packed, PackGroupWeights(*w, *w_zp, group, gi));
      held += static_cast<int64_t>(packed->held_bytes());
      groups_.push_back(std::move(packed));
    }
    // Depthwise (group == C == M, so W is M x 1 x kernel): DepthwiseConv reads W's bytes.
    const bool depthwise = group == m && w->shape()[1] == 1;
    if (!depthwise && (zp != nullptr || zp_index >= info.num_inputs())) {
      absorbed_ = true;
      return info.AbsorbConstantInput(w_index, held);
    }
    w_ = *w;
    w_data_ = w_.raw_data();
    return Status::Ok();
  }
  // The packed groups if they are this run's W (by shape once absorbed) and zero point,
  // else null.
  const PackedGroups* Match(const Tensor& w, const Tensor* zp, const conv::ConvGeometry& g) const {
    if (groups_.empty() || (zp != nullptr ? zp->raw_data() : nullptr) != zp_data_ ||
        (absorbed_ ? w.shape() != w_shape_ : w.raw_data() != w_data_) ||
        static_cast<int64_t>(groups_.size()) != g.group || groups_[0]->k() != g.in_per_group() * g.kernel_size) {
      return nullptr;
    }
    return &groups_;
  }
  // W packed for SymmetricConv if this run's W (by shape) and zero point are the constants
  // it was packed from, else null.
  const igemm::IgemmPackedB* MatchSymmetric(const Tensor& w, const Tensor* zp, const conv::ConvGeometry& g) const {
    if (symmetric_ == nullptr || (zp != nullptr ? zp->raw_data() : nullptr) != zp_data_ || w.shape() != w_shape_ ||
        g.group != 1) {
      return nullptr;
    }
    return symmetric_.get();
  }
  bool absorbed() const { return absorbed_; }

 private:
  PackedGroups groups_;
  std::shared_ptr<const igemm::IgemmPackedB> symmetric_;
  bool absorbed_ = false;
  Shape w_shape_;
  Tensor w_, zp_;  // keep the constant buffers alive (and their addresses unique); w_ unless absorbed
  const void* w_data_ = nullptr;
  const void* zp_data_ = nullptr;
};

// n bytes from src to dst without a library call when n <= 16 (overlapping fixed-size
// moves): a small plane's rows are a few bytes, and a memmove call per row cost more than
// the copy (ResNet-18's 7x7 planes: 512 channels x 7 rows per run, plus the output runs).
inline void CopyBytes(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n > 16) {
    std::memcpy(dst, src, static_cast<size_t>(n));
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n > 0) {
    const uint8_t a = src[0], b = src[n / 2], c = src[n - 1];
    dst[0] = a;
    dst[n / 2] = b;
    dst[n - 1] = c;
  }
}

// Input plane x (h x w) into dst (hp x wp): row y, column x holds x[y - ph, x - pw], the
// zero point byte `pad` outside the input (dst filled whole, then the input rows copied in).
void PadPlane(const Plane2D& v, int64_t hp, int64_t wp, const uint8_t* x, uint8_t pad, uint8_t* dst) {
  const int64_t left = std::min(v.pw, wp), count = std::max<int64_t>(0, std::min(v.w, wp - left));
  std::fill(dst, dst + hp * wp, pad);
  for (int64_t y = std::max<int64_t>(0, v.ph), end = std::min(hp, v.h + v.ph); y < end; ++y) {
    CopyBytes(dst + y * wp + left, x + (y - v.ph) * v.w, count);
  }
}

// The padded input of a stride-(sh, sw) convolution split by stride phase: phase (py, px)
// is the hq x wq plane at dst + (py * sw + px) * hq * wq whose row r, column q holds
// x[r * sh + py - ph, q * sw + px - pw], the zero point byte `pad` outside the input. Tap
// (ky, kx) of output (oy, ox) reads phase ((ky dh) % sh, (kx dw) % sw) at row oy + (ky dh) /
// sh, column ox + (kx dw) / sw: every tap is a shifted window of one phase plane, as for
// stride 1 (one phase, the padded plane itself). Only phases some tap reads are written.
struct PhasePlanes {
  int64_t hq = 0, wq = 0;                   // rows and columns of a phase plane
  std::vector<bool> row_used, column_used;  // phase py (px) read by some ky (kx)

  explicit PhasePlanes(const Plane2D& v)
      : hq(v.oh + (v.kh - 1) * v.dh / v.sh), wq(v.ow + (v.kw - 1) * v.dw / v.sw), row_used(v.sh), column_used(v.sw) {
    for (int64_t ky = 0; ky < v.kh; ++ky) row_used[ky * v.dh % v.sh] = true;
    for (int64_t kx = 0; kx < v.kw; ++kx) column_used[kx * v.dw % v.sw] = true;
  }
  int64_t size() const { return hq * wq; }
  // Offset of tap (ky, kx)'s window in the phase planes of one input channel.
  int64_t TapOffset(const Plane2D& v, int64_t ky, int64_t kx) const {
    const int64_t ty = ky * v.dh, tx = kx * v.dw;
    return ((ty % v.sh) * v.sw + tx % v.sw) * size() + (ty / v.sh) * wq + tx / v.sw;
  }
  // Columns [lo, hi) of phase px whose input column q * sw + px - pw lies inside the row.
  int64_t ColumnLo(const Plane2D& v, int64_t px) const { return std::min(wq, Plane2D::CeilDiv(v.pw - px, v.sw)); }
  int64_t ColumnHi(const Plane2D& v, int64_t px) const {
    return std::max(ColumnLo(v, px), std::min(wq, Plane2D::CeilDiv(v.w + v.pw - px, v.sw)));
  }
  // Writes the read phases of input plane x (h x w) to dst (stride 1: PadPlane).
  void Fill(const Plane2D& v, const uint8_t* x, uint8_t pad, uint8_t* dst) const {
    if (v.sh == 1 && v.sw == 1) return PadPlane(v, hq, wq, x, pad, dst);
    for (int64_t py = 0; py < v.sh; ++py) {
      if (!row_used[py]) continue;
      if (v.sw == 2 && column_used[0] && column_used[1]) {
        FillColumnPair(v, py, x, pad, dst);
        continue;
      }
      for (int64_t px = 0; px < v.sw; ++px) {
        if (!column_used[px]) continue;
        uint8_t* out = dst + (py * v.sw + px) * size();
        const int64_t lo = ColumnLo(v, px), hi = ColumnHi(v, px);
        for (int64_t r = 0; r < hq; ++r) {
          uint8_t* row = out + r * wq;
          const int64_t iy = r * v.sh + py - v.ph;
          if (iy < 0 || iy >= v.h) {
            std::fill(row, row + wq, pad);
            continue;
          }
          std::fill(row, row + lo, pad);
          if (hi > lo) StridedCopy(x + iy * v.w + lo * v.sw + px - v.pw, v.sw, hi - lo, row + lo);
          std::fill(row + hi, row + wq, pad);
        }
      }
    }
  }

 private:
  // Column stride 2 with both column phases read (3x3 and 7x7 stride 2): each input row is
  // split into the two phase rows in one pass (Deinterleave2) instead of two strided copies.
  void FillColumnPair(const Plane2D& v, int64_t py, const uint8_t* x, uint8_t pad, uint8_t* dst) const {
    uint8_t* out0 = dst + py * 2 * size();
    uint8_t* out1 = out0 + size();
    const int64_t lo0 = ColumnLo(v, 0), hi0 = ColumnHi(v, 0), lo1 = ColumnLo(v, 1), hi1 = ColumnHi(v, 1);
    const int64_t a = std::max(lo0, lo1), b = std::max(a, std::min(hi0, hi1));  // both inside
    std::fill(out0, out0 + 2 * size(), pad);  // both planes whole: no fill call per row
    for (int64_t r = 0; r < hq; ++r) {
      uint8_t* row0 = out0 + r * wq;
      uint8_t* row1 = out1 + r * wq;
      const int64_t iy = r * v.sh + py - v.ph;
      if (iy < 0 || iy >= v.h) continue;
      const uint8_t* in = x + iy * v.w;  // column q of phase px: in[2 q + px - pw]
      for (int64_t q = lo0; q < std::min(a, hi0); ++q) row0[q] = in[2 * q - v.pw];
      for (int64_t q = lo1; q < std::min(a, hi1); ++q) row1[q] = in[2 * q + 1 - v.pw];
      if (b > a) Deinterleave2(in + 2 * a - v.pw, b - a, row0 + a, row1 + a);
      for (int64_t q = std::max(a, b); q < hi0; ++q) row0[q] = in[2 * q - v.pw];
      for (int64_t q = std::max(a, b); q < hi1; ++q) row1[q] = in[2 * q + 1 - v.pw];
    }
  }
};

// Blocking of the GEMM path, from the shape alone: columns per spatial block (a multiple of
// nr whose packed panels stay near kPanelBudget bytes, at most kMaxColumns, balanced) and
// rows per channel block (a multiple of mr, at most about kMaxRows).
constexpr int64_t kPanelBudget = int64_t{1} << 17;
constexpr int64_t kMaxColumns = 256;
constexpr int64_t kMaxRows = 128;

int64_t RoundUpTo(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// dst[j * dst_stride + i] = src[i * src_stride + j] ^ flip for i, j < 16: on x86-64 four
// rounds of interleaving row i with row i + 8 (SSE2, the baseline), which is the transpose.
inline void Transpose16x16(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, uint8_t flip) {
#if defined(__x86_64__)
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  __m128i r[16], t[16];
  for (int i = 0; i < 16; ++i) {
    r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride)), f);
  }
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
  for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * dst_stride), r[j]);
#else
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) dst[j * dst_stride + i] = static_cast<uint8_t>(src[i * src_stride + j] ^ flip);
  }
#endif
}

// dst[j * dst_stride + i] = src[i * src_stride + j] ^ flip for i < rows, j < cols: 16 x 16
// blocks when rows is 16 and cols at least 16 (the last block overlapping the one before,
// writing the same bytes again), else element by element.
inline void TransposeBytes(const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst,
                           int64_t dst_stride, uint8_t flip) {
  if (rows == 16 && cols >= 16) {
    for (int64_t j = 0;; j += 16) {
      const int64_t at = std::min(j, cols - 16);
      Transpose16x16(src + at, src_stride, dst + at * dst_stride, dst_stride, flip);
      if (at == cols - 16) return;
    }
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = static_cast<uint8_t>(src[i * src_stride + j] ^ flip);
  }
}

// Input plane rows of image n, NCHW, into the padded NHWC copy (hp x wp positions of C
// bytes each, `pad` outside the input), each byte xor `flip`: padded rows [row0, row1) of
// the image. Blocks of 16 channels, so that the input rows read stay in cache while their
// positions are written.
void FillNhwcRows(const Plane2D& v, int64_t c, int64_t hp, int64_t wp, const uint8_t* x, uint8_t pad, uint8_t flip,
                  int64_t row0, int64_t row1, uint8_t* nhwc) {
  const int64_t plane = v.h * v.w;
  const int64_t x0 = std::min(v.pw, wp), x1 = std::max(x0, std::min(wp, v.w + v.pw));  // padded columns inside
  for (int64_t py = row0; py < row1; ++py) {
    uint8_t* row = nhwc + py * wp * c;
    const int64_t iy = py - v.ph;
    if (iy < 0 || iy >= v.h) {
      std::memset(row, pad, static_cast<size_t>(wp * c));
      continue;
    }
    std::memset(row, pad, static_cast<size_t>(x0 * c));
    std::memset(row + x1 * c, pad, static_cast<size_t>((wp - x1) * c));
    const uint8_t* in = x + iy * v.w - v.pw;  // in[cc * plane + px]: channel cc at padded column px
    for (int64_t c0 = 0; c0 < c; c0 += 16) {
      TransposeBytes(in + c0 * plane + x0, plane, std::min<int64_t>(16, c - c0), x1 - x0, row + x0 * c + c0, c, flip);
    }
  }
}

// A 1x1 strided convolution whose every output position reads the input (no padding):
// only the positions read are copied, output row oy (input row oy sh, every sw-th column)
// at nhwc + oy ow C, for output rows [row0, row1) of the image.
void FillSubsampledRows(const Plane2D& v, int64_t c, const uint8_t* x, uint8_t flip, int64_t row0, int64_t row1,
                        uint8_t* nhwc) {
  const int64_t plane = v.h * v.w;
  constexpr int64_t kStrip = 256;
  uint8_t strip[16 * kStrip];  // up to 16 channels x kStrip columns of one output row
  for (int64_t oy = row0; oy < row1; ++oy) {
    const uint8_t* in = x + oy * v.sh * v.w;
    for (int64_t c0 = 0; c0 < c; c0 += 16) {
      const int64_t rows = std::min<int64_t>(16, c - c0);
      for (int64_t ox0 = 0; ox0 < v.ow; ox0 += kStrip) {
        const int64_t width = std::min(kStrip, v.ow - ox0);
        for (int64_t cc = 0; cc < rows; ++cc) {
          StridedCopy(in + (c0 + cc) * plane + ox0 * v.sw, v.sw, width, strip + cc * kStrip);
        }
        TransposeBytes(strip, kStrip, rows, width, nhwc + (oy * v.ow + ox0) * c + c0, c, flip);
      }
    }
  }
}

// Symmetric int8 weights, one group, 1-D or 2-D (issue 17; the arrangement of ONNX
// Runtime's symmetric indirect convolution): output positions as the product's rows, the
// output channels as its columns (W packed once, PackSymmetricWeights). The input is copied
// once per run into a padded NHWC buffer (the zero point byte as padding, so padding
// contributes exactly 0; for VNNI's byte tile an int8 input shifted to uint8 by +128, its
// zero point alike; for AVX2's pair tile widened to int16, exact under vpmaddwd),
// and the kernel's indirect tile reads row i of A, output position (n, oy, ox), in place
// through its window origin and each tap's offset (C bytes a tap): no im2col, no packing
// of A. With W's zero points 0 the decomposition leaves one term per channel, - x_zp x W's
// column sum, folded with the bias into one int32 per channel per run; no per-position
// row sums; the tile starts its accumulators from it. The epilogue requantizes a
// position's channels (the channel's multiplier) and writes each channel's run of
// positions to NCHW. The integer sums are
// those of IntegerConv's GEMM path (exact, modulo 2^32) and the requantisation the same
// arithmetic: same bits. The kernel's edge tiles make a 7x7 plane's 49 positions cost 49
// rows where the channels-as-rows path computes 64 columns.
Status SymmetricConv(KernelContext& ctx, const gemm::GemmTuning& tuning, const conv::ConvGeometry& g,
                     const ConvInputs& in, const igemm::IgemmPackedB& w, const ConvOutput& out) {
  const Plane2D v(g);
  const int64_t c = g.in_channels, m = g.out_channels, taps = g.kernel_size, positions = g.out_size;
  // A 1x1 strided convolution reading inside the input only: its NHWC copy holds just the
  // positions read (a quarter of the input at stride 2), as a 1x1 stride-1 input.
  const bool subsample = v.kh == 1 && v.kw == 1 && v.ph == 0 && v.pw == 0 && (v.sh > 1 || v.sw > 1) &&
                         (v.oh - 1) * v.sh < v.h && (v.ow - 1) * v.sw < v.w;
  const int64_t sh = subsample ? 1 : v.sh, sw = subsample ? 1 : v.sw;
  const int64_t hp = subsample ? v.oh : (v.oh - 1) * v.sh + (v.kh - 1) * v.dh + 1;
  const int64_t wp = subsample ? v.ow : (v.ow - 1) * v.sw + (v.kw - 1) * v.dw + 1;
  const int64_t rows = g.batch * positions;
  // A's values: the NHWC bytes for a byte tile (VNNI); for a pair tile (AVX2) those bytes
  // widened to int16 (uint8 or int8 as they are) in a second buffer, row range by row range.
  const int e = igemm::IgemmIndirectElementBytes(w);
  const size_t nhwc_bytes = static_cast<size_t>(g.batch * hp * wp * c);
  const size_t wide_bytes = e == 2 ? 2 * nhwc_bytes : 0;
  ScratchArena arena(ctx.allocator(), nhwc_bytes + wide_bytes + sizeof(const uint8_t*) * static_cast<size_t>(rows) +
                                          sizeof(int64_t) * static_cast<size_t>(taps) +
                                          sizeof(int32_t) * static_cast<size_t>(m) + 320);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(uint8_t * nhwc, arena.AllocateArray<uint8_t>(nhwc_bytes));
  int16_t* wide = nullptr;
  if (e == 2) {
    OL_ASSIGN_OR_RETURN(wide, arena.AllocateArray<int16_t>(nhwc_bytes));
  }
  OL_ASSIGN_OR_RETURN(const uint8_t** origins, arena.AllocateArray<const uint8_t*>(rows));
  OL_ASSIGN_OR_RETURN(int64_t * offsets, arena.AllocateArray<int64_t>(taps));
  OL_ASSIGN_OR_RETURN(int32_t * channel_terms, arena.AllocateArray<int32_t>(m));
  const bool x_signed = in.x->dtype() == DataType::kInt8;
  const bool shift = x_signed && e == 1;     // the byte tile's A is uint8
  const uint8_t flip = shift ? 0x80 : 0x00;  // int8 -> uint8 (+128)
  const uint8_t raw_pad = x_signed ? static_cast<uint8_t>(static_cast<int8_t>(in.x_zp)) : static_cast<uint8_t>(in.x_zp);
  const uint32_t azp = static_cast<uint32_t>(in.x_zp + (shift ? 128 : 0));
  // Per channel: bias - azp x column sum of W, modulo 2^32.
  for (int64_t j = 0; j < m; ++j) {
    const uint32_t bias = out.bias != nullptr ? static_cast<uint32_t>(out.bias[j]) : 0u;
    channel_terms[j] = static_cast<int32_t>(bias - azp * static_cast<uint32_t>(w.column_sums()[j]));
  }
  const auto* xb = static_cast<const uint8_t*>(in.x->raw_data());
  const bool serial =
      gemm::GemmWorkUnits(rows, m, c * taps) < tuning.parallel_minimum_tasks || g.batch * hp * wp * c < 65536;
  const auto fill = [&](int64_t begin, int64_t end) {  // padded rows (n, py) in [begin, end)
    for (int64_t r = begin; r < end;) {
      const int64_t n = r / hp, py = r % hp, stop = std::min(end, (n + 1) * hp);
      if (subsample) {
        FillSubsampledRows(v, c, xb + n * c * g.in_size, flip, py, py + (stop - r), nhwc + n * hp * wp * c);
      } else {
        FillNhwcRows(v, c, hp, wp, xb + n * c * g.in_size, static_cast<uint8_t>(raw_pad ^ flip), flip, py,
                     py + (stop - r), nhwc + n * hp * wp * c);
      }
      if (wide != nullptr) {
        const int64_t from = r * wp * c, to = stop * wp * c;
        if (x_signed) {
          for (int64_t q = from; q < to; ++q) wide[q] = static_cast<int16_t>(static_cast<int8_t>(nhwc[q]));
        } else {
          for (int64_t q = from; q < to; ++q) wide[q] = static_cast<int16_t>(nhwc[q]);
        }
      }
      r = stop;
    }
    return Status::Ok();
  };
  if (serial) {
    OL_RETURN_IF_ERROR(fill(0, g.batch * hp));
  } else {
    OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), g.batch * hp,
                                   ParallelPlan{"qconv.nhwc_rows", std::max<int64_t>(1, 16384 / (wp * c))}, fill));
  }
  const uint8_t* values = e == 1 ? nhwc : reinterpret_cast<const uint8_t*>(wide);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t n = i / positions, p = i % positions, oy = p / v.ow, ox = p % v.ow;
    origins[i] = values + ((n * hp + oy * sh) * wp + ox * sw) * c * e;
  }
  for (int64_t ky = 0; ky < v.kh; ++ky) {
    for (int64_t kx = 0; kx < v.kw; ++kx) offsets[ky * v.kw + kx] = (ky * v.dh * wp + kx * v.dw) * c * e;
  }
  // A block of C (the channel terms already in it: the tile starts from them) is positions
  // [i0, i0 + count) x channels [j0, j0 + cols): requantized a position at a time, then
  // written out channel by channel as runs of consecutive positions of one image.
  constexpr int64_t kRows = 16, kCols = 256;
  const auto sink = [&](int64_t i0, int count, int64_t j0, int cols, const int32_t* acc, int64_t ld) {
    for (int64_t r0 = 0; r0 < count;) {
      const int64_t i = i0 + r0, n = i / positions, p = i % positions;
      const int64_t run = std::min<int64_t>({count - r0, positions - p, kRows});
      for (int64_t c0 = 0; c0 < cols; c0 += kCols) {
        const int64_t width = std::min<int64_t>(kCols, cols - c0);
        const int32_t* block = acc + r0 * ld + c0;
        if (out.y32 != nullptr) {
          for (int64_t cc = 0; cc < width; ++cc) {
            int32_t* dst = out.y32 + (n * m + j0 + c0 + cc) * positions + p;
            for (int64_t r = 0; r < run; ++r) dst[r] = block[r * ld + cc];
          }
          continue;
        }
        alignas(64) uint8_t bytes[kRows * kCols];
        for (int64_t r = 0; r < run; ++r) {
          igemm::Requantize(block + r * ld, width, 0, out.multipliers + j0 + c0, 1, out.y_zero_point, out.is_signed,
                            bytes + r * kCols);
        }
        TransposeBytes(bytes, kCols, run, width, out.y8 + (n * m + j0 + c0) * positions + p, positions, 0);
      }
      r0 += run;
    }
  };
  int64_t engine_scratch = 0;
  const igemm::IgemmIndirectA a{origins, offsets, taps, c, channel_terms};
  OL_RETURN_IF_ERROR(igemm::IgemmComputeIndirect(ctx.parallel(), ctx.allocator(), tuning.parallel_minimum_tasks, rows,
                                                 a, w, sink, &engine_scratch));
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()) + engine_scratch);
  return Status::Ok();
}

Status IntegerConv(KernelContext& ctx, const gemm::GemmTuning& tuning, const conv::ConvGeometry& g,
                   const ConvInputs& in, const PrepackedConvWeights& prepacked, const Tensor* w_zp_tensor,
                   const ConvOutput& out) {
  if (const igemm::IgemmPackedB* symmetric = prepacked.MatchSymmetric(*in.w, w_zp_tensor, g)) {
    return SymmetricConv(ctx, tuning, g, in, *symmetric, out);
  }
  if (g.group == g.in_channels && g.group == g.out_channels) return DepthwiseConv(ctx, tuning, g, in, out);
  const WindowIndexer windows(g);
  const Plane2D plane(g);
  const int64_t k = g.in_per_group() * g.kernel_size, positions = g.out_size, mg = g.out_per_group();
  const PackedGroups* groups = prepacked.Match(*in.w, w_zp_tensor, g);
  PackedGroups per_run;
  if (groups == nullptr) {
    if (prepacked.absorbed()) {  // W's data was released: only the packed groups can serve
      return Internal(ctx.Where(), ": W ", in.w->TypeAndShape(), " was absorbed at creation but does not match it");
    }
    for (int64_t gi = 0; gi < g.group; ++gi) {
      OL_ASSIGN_OR_RETURN(auto packed, PackGroupWeights(*in.w, in.w_zp, g.group, gi));
      per_run.push_back(std::move(packed));
    }
    groups = &per_run;
  }
  const igemm::IgemmPackedA& first = *(*groups)[0];
  const int64_t mr = first.mr(), nr = first.nr();
  const int64_t element = first.bytes() ? 1 : 2;
  // 1x1, stride 1, no padding: the input planes are the columns, read in place.
  bool in_place = g.kernel_size == 1;
  for (int d = 0; d < g.rank; ++d) {
    in_place = in_place && g.strides[d] == 1 && g.pads_begin[d] == 0 && g.pads_end[d] == 0;
  }
  // Other 1-D/2-D convolutions: the input planes copied once with their padding (the zero
  // point byte), split by stride phase (PhasePlanes; stride 1: one phase of the padded
  // width). On the grid of positions oy * wp + ox (wp the phase width), im2col row (c, ky,
  // kx) is one contiguous span of a phase plane of channel c, so blocks are packed from the
  // planes with no im2col copy; the grid's columns ox >= ow are computed and dropped. The
  // copy is one pass over the input where a strided im2col wrote every tap (perf at 1
  // thread of cnn_static's 3x3 stride 2 layer alone, 32 -> 64 on 56x56: its im2col took
  // twice its tiles' time). Taken when they are at most a third of a row: an
  // im2col row of a small plane is oh short spans (fill, copy, fill each), which the
  // profile of ResNet-18's 14x14 and 7x7 3x3 layers shows costing more than the grid's
  // extra columns (2 of 16 and 2 of 9 there). Gathering the grid's rows to output positions
  // (8-byte copies from the phase planes, no padding test) did not pay either (session 11,
  // Zen 5, 1 thread, loaded host): 512-ch 7x7 436 vs 396 us, 256-ch 14x14 407 vs 360 us.
  // Presumably because Zen 5 issues 256-bit vpdpbusd no faster than 512-bit ones, so a
  // 16 + 8 column edge tile costs what 32 columns do: 49 columns still cost 64, and 196
  // cost 208 against the grid's 224. The columns only go away with output positions as the
  // tile's rows (benchmarks/reports/session11_h109).
  const PhasePlanes phases(plane);
  const int64_t wp = phases.wq;
  const bool padded = !in_place && plane.ok && (wp - plane.ow) * 3 <= plane.ow;
  const int64_t grid = padded ? (plane.oh - 1) * wp + plane.ow : positions;  // columns of the product
  const int64_t plane_stride = plane.sh * plane.sw * phases.size();          // per input channel
  std::vector<int64_t> tap_offsets;  // of tap ky * kw + kx in a channel's phase planes
  if (padded) {
    for (int64_t ky = 0; ky < plane.kh; ++ky) {
      for (int64_t kx = 0; kx < plane.kw; ++kx) tap_offsets.push_back(phases.TapOffset(plane, ky, kx));
    }
  }
  // At most `widest` columns per block, the columns spread evenly over the fewest such
  // blocks (784 positions: 4 x 224 rather than 3 x 256 + 16).
  const int64_t widest = std::min(RoundUpTo(std::min(grid, kMaxColumns), nr),
                                  std::max(nr, kPanelBudget / (element * std::max<int64_t>(k, 1)) / nr * nr));
  const int64_t fewest_blocks = (grid + widest - 1) / widest;
  const int64_t cols_block = std::min(widest, RoundUpTo((grid + fewest_blocks - 1) / fewest_blocks, nr));
  const int64_t rows_block = RoundUpTo(std::min(mg, kMaxRows), mr);
  const int64_t ldc = RoundUpTo(cols_block, nr) + 16;  // rows not a multiple of 4 KiB apart
  const int64_t spatial_blocks = (grid + cols_block - 1) / cols_block;
  const int64_t channel_blocks = (mg + rows_block - 1) / rows_block;
  const int64_t tasks = g.batch * g.group * spatial_blocks * channel_blocks;
  const bool serial = gemm::GemmWorkUnits(positions * g.batch, g.out_channels, k) < tuning.parallel_minimum_tasks;
  const ParallelPlan plan{"qconv.tiles", 1};
  const int participants = serial ? 1 : AvailableParticipants(ctx.parallel(), plan);
  // Per participant: the im2col slice, the packed panels and their column sums, the C block.
  const auto aligned = [](size_t v) { return (v + 63) / 64 * 64; };
  const size_t col_bytes = in_place ? 0
                           : padded ? aligned(sizeof(const uint8_t*) * static_cast<size_t>(k))  // row pointers
                                    : aligned(static_cast<size_t>(k * cols_block));
  const size_t panel_bytes = aligned(igemm::IgemmBBlockBytes(first, cols_block));
  const size_t sum_bytes = aligned(sizeof(int32_t) * static_cast<size_t>(cols_block));
  const size_t c_bytes = aligned(sizeof(int32_t) * static_cast<size_t>(rows_block * ldc));
  // On the grid with an 8-bit output, a C row is requantized whole (one call over all its
  // columns, the dropped ones included) into a byte row whose runs are then copied out:
  // requantizing each grid row's run separately cost 2.6x as many instructions (callgrind,
  // AVX2, 28-wide runs) as the whole row, and ResNet-18's 14- and 7-wide rows are shorter.
  const bool byte_rows = padded && out.y8 != nullptr;
  const size_t row_bytes = byte_rows ? aligned(static_cast<size_t>(cols_block)) : 0;
  const size_t per = col_bytes + panel_bytes + sum_bytes + c_bytes + row_bytes;
  const size_t padded_bytes = padded ? aligned(static_cast<size_t>(g.batch * g.in_channels * plane_stride)) : 0;
  ScratchArena arena(ctx.allocator(), padded_bytes + per * static_cast<size_t>(participants) + 128);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(void* base, arena.Allocate(per * static_cast<size_t>(participants)));
  uint8_t* padded_planes = nullptr;
  if (padded) {
    OL_ASSIGN_OR_RETURN(padded_planes, arena.AllocateArray<uint8_t>(padded_bytes));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const bool x_signed = in.x->dtype() == DataType::kInt8;
  const uint8_t pad = x_signed ? static_cast<uint8_t>(static_cast<int8_t>(in.x_zp)) : static_cast<uint8_t>(in.x_zp);
  const auto* xb = static_cast<const uint8_t*>(in.x->raw_data());
  if (padded) {
    const auto pad_planes = [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) {
        phases.Fill(plane, xb + e * g.in_size, pad, padded_planes + e * plane_stride);
      }
      return Status::Ok();
    };
    if (serial) {
      OL_RETURN_IF_ERROR(pad_planes(0, g.batch * g.in_channels));
    } else {
      OL_RETURN_IF_ERROR(ParallelFor(ctx.parallel(), g.batch * g.in_channels,
                                     ParallelPlan{"qconv.pad_planes", std::max<int64_t>(1, 65536 / plane_stride)},
                                     pad_planes));
    }
  }
  const auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
    char* mine = static_cast<char*>(base) + static_cast<size_t>(participant) * per;
    auto* col = reinterpret_cast<uint8_t*>(mine);
    igemm::IgemmBBlock block{mine + col_bytes, reinterpret_cast<int32_t*>(mine + col_bytes + panel_bytes), 0, x_signed,
                             in.x_zp};
    auto* c = reinterpret_cast<int32_t*>(mine + col_bytes + panel_bytes + sum_bytes);
    auto* bytes = reinterpret_cast<uint8_t*>(mine + col_bytes + panel_bytes + sum_bytes + c_bytes);
    int64_t packed_unit = -1;  // (image, group, spatial block) whose columns are packed
    for (int64_t task = begin; task < end; ++task) {
      // Channel blocks of one spatial block are consecutive: its columns are packed once.
      const int64_t unit = task / channel_blocks, cb = task % channel_blocks;
      const int64_t sb = unit % spatial_blocks, ng = unit / spatial_blocks, gi = ng % g.group, n = ng / g.group;
      const igemm::IgemmPackedA& a = *(*groups)[gi];
      const int64_t p0 = sb * cols_block, cols = std::min(cols_block, grid - p0);
      if (unit != packed_unit) {
        const uint8_t* x = xb + (n * g.in_channels + gi * g.in_per_group()) * g.in_size;
        block.cols = cols;
        if (in_place) {
          igemm::IgemmPackBBlock(a, igemm::IgemmMatrix{x + p0, x_signed, g.in_size, 1}, &block);
        } else if (padded) {
          auto* rows = reinterpret_cast<const uint8_t**>(col);
          const uint8_t* planes = padded_planes + (n * g.in_channels + gi * g.in_per_group()) * plane_stride + p0;
          const int64_t taps = plane.kh * plane.kw;
          for (int64_t c = 0; c < g.in_per_group(); ++c) {
            for (int64_t t = 0; t < taps; ++t) rows[c * taps + t] = planes + c * plane_stride + tap_offsets[t];
          }
          igemm::IgemmPackBBlockRows(a, rows, &block);
        } else {
          Im2ColBlock(g, plane, windows, x, pad, p0, cols, col);
          igemm::IgemmPackBBlock(a, igemm::IgemmMatrix{col, x_signed, cols, 1}, &block);
        }
        packed_unit = unit;
      }
      const int64_t i0 = cb * rows_block, rows = std::min(rows_block, mg - i0);
      igemm::IgemmMultiplyBlock(a, i0, rows, block, c, ldc);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t m = gi * mg + i0 + r;
        if (!padded) {
          out.Emit(g, n, m, p0, cols, c + r * ldc);
          continue;
        }
        // Grid column p is output (p / wp, p % wp) when p % wp < ow: one run per grid row.
        if (byte_rows) out.Requantize(m, cols, c + r * ldc, bytes);
        int64_t oy = p0 / wp, ox = p0 % wp;
        for (int64_t j = 0; j < cols; ++oy, ox = 0) {
          const int64_t run = std::min(cols - j, wp - ox);
          if (ox < plane.ow) {
            const int64_t p = oy * plane.ow + ox, count = std::min(run, plane.ow - ox);
            if (byte_rows) {
              CopyBytes(out.Byte(g, n, m, p), bytes + j, count);
            } else {
              out.Emit(g, n, m, p, count, c + r * ldc + j);
            }
          }
          j += run;
        }
      }
    }
    return Status::Ok();
  };
  if (participants <= 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{"qconv.tiles", 1, participants}, run);
}

class ConvIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(attrs_, conv::ConvAttributes::Read(info));
    OL_ASSIGN_OR_RETURN(tuning_, gemm::ReadGemmTuning(info.tuning()));
    OL_ASSIGN_OR_RETURN(const bool symmetric, info.tuning().Bool(kSymmetricIndirect));
    return prepacked_.Init(info, attrs_, 1, 3, symmetric);
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
    OL_ASSIGN_OR_RETURN(const bool symmetric, info.tuning().Bool(kSymmetricIndirect));
    return prepacked_.Init(info, attrs_, 3, 5, symmetric);
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

// The GEMM parameters plus the choice of SymmetricConv for symmetric int8 weights.
std::vector<ParamSpec> ConvTuningParams() {
  std::vector<ParamSpec> params = gemm::GemmTuningParams();
  params.push_back(ParamSpec::Bool(kSymmetricIndirect, true,
                                   "constant int8 weights with zero points 0 (group 1, 1-D/2-D) take output positions "
                                   "as the integer GEMM's rows over an NHWC copy of the input (SymmetricConv), where "
                                   "the best igemm kernel has edge tiles; false: output channels as rows"));
  return params;
}

OL_REGISTER_KERNELS(conv_integer_ops) {
  using EightBit = TypeList<int8_t, uint8_t>;
  Kernel("ConvInteger")
      .Opsets({Since(10, EightBit{})})
      .Tuning(ConvTuningParams())
      .Factory(MakeKernel<ConvIntegerKernel>())
      .AddTo(registry);
  Kernel("QLinearConv")
      .Opsets({Since(10, EightBit{})})
      .Tuning(ConvTuningParams())
      .Factory(MakeKernel<QLinearConvKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
