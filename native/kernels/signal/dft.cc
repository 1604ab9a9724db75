// DFT (opsets 17 and 20): forward, inverse, one-sided forward (real to half spectrum) and
// one-sided inverse (half spectrum to real signal, Hermitian-extended), with dft_length
// zero-padding or truncation. Each output bin is an in-order O(N) sum; bins are split
// across participants.
#include <algorithm>
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/signal/dft_core.h"

namespace onnx_light {
namespace signal {
namespace {

class DftKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    axis_from_input_ = info.opset_version() >= 20;
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis", axis_from_input_ ? -2 : 1));
    OL_ASSIGN_OR_RETURN(int64_t inverse, info.GetInt("inverse", 0));
    OL_ASSIGN_OR_RETURN(int64_t onesided, info.GetInt("onesided", 0));
    inverse_ = inverse != 0;
    onesided_ = onesided != 0;
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& in = x->shape();
    const int rank = in.rank();
    if (rank < 2 || (in[rank - 1] != 1 && in[rank - 1] != 2)) {
      return InvalidArgument(where_, ": input must be [..., 1] (real) or [..., 2] (complex), got ", x->TypeAndShape());
    }
    int64_t axis = axis_;
    if (axis_from_input_) OL_RETURN_IF_ERROR(ReadOptionalScalar(ctx, 2, where_, "axis", &axis).status());
    if (axis < -rank || axis > rank - 2 || axis == -1) {
      return InvalidArgument(where_, ": axis ", axis, " is out of range for input ", x->TypeAndShape());
    }
    const int ax = static_cast<int>(axis < 0 ? axis + rank : axis);
    const int64_t n_in = in[ax];
    const bool irfft = inverse_ && onesided_;
    int64_t length = irfft ? 2 * (n_in - 1) : n_in;
    OL_RETURN_IF_ERROR(ReadOptionalScalar(ctx, 1, where_, "dft_length", &length).status());
    if (length < 1) return InvalidArgument(where_, ": dft_length must be positive, got ", length);

    const int64_t outer = in.SizeTo(ax), inner = in.SizeBetween(ax + 1, rank - 1);
    const int64_t bins = onesided_ && !inverse_ ? length / 2 + 1 : length;
    // Samples each bin sums: the used input (zero-padding adds nothing), or for the
    // one-sided inverse the whole Hermitian extension.
    const int64_t samples = irfft ? length : std::min(n_in, length);
    Shape out_shape = in;
    out_shape.mutable_dims()[ax] = bins;
    out_shape.mutable_dims()[rank - 1] = irfft ? 1 : 2;

    return DispatchType(SignalTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const size_t signal_bytes = sizeof(Complex) * static_cast<size_t>(outer * samples * inner);
      ScratchArena arena(ctx.allocator(), signal_bytes + sizeof(Complex) * length + 128);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Complex * signal, arena.AllocateArray<Complex>(outer * samples * inner));
      OL_ASSIGN_OR_RETURN(Complex * twiddles, arena.AllocateArray<Complex>(length));
      ctx.RecordScratch(static_cast<int64_t>(arena.used()));
      FillTwiddles(twiddles, length, inverse_ ? 1.0 : -1.0);
      Load(x->data<T>(), in[rank - 1] == 2, outer, n_in, inner, samples, irfft, signal);

      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
      T* out = y->data<T>();
      const double scale = inverse_ ? 1.0 / static_cast<double>(length) : 1.0;
      const int64_t channels = irfft ? 1 : 2;
      return policy_.Run(ctx.parallel(), "DFT", outer * bins * inner, samples, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t i = b % inner, k = (b / inner) % bins, o = b / (inner * bins);
          const Complex v = BinSum(signal + o * samples * inner + i, inner, nullptr, samples, k, twiddles, length);
          out[b * channels] = StoreDouble<T>(v.real() * scale);
          if (channels == 2) out[b * channels + 1] = StoreDouble<T>(v.imag() * scale);
        }
      });
    });
  }

 private:
  // Converts the input into signal[outer][samples][inner]: the first `samples` values
  // along the axis (zeros past the input), or for the one-sided inverse the Hermitian
  // extension X[m] = conj(X[length - m]) of the half spectrum.
  template <typename T>
  static void Load(const T* x, bool complex_input, int64_t outer, int64_t n_in, int64_t inner, int64_t samples,
                   bool hermitian, Complex* signal) {
    const int64_t channels = complex_input ? 2 : 1;
    auto at = [&](int64_t o, int64_t n, int64_t i) -> Complex {
      if (n >= n_in) return Complex(0.0, 0.0);
      const T* p = x + ((o * n_in + n) * inner + i) * channels;
      return Complex(LoadDouble(p[0]), complex_input ? LoadDouble(p[1]) : 0.0);
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t m = 0; m < samples; ++m) {
        for (int64_t i = 0; i < inner; ++i) {
          Complex v;
          if (!hermitian || m <= samples / 2) {
            v = at(o, m, i);
          } else {
            v = std::conj(at(o, samples - m, i));
          }
          signal[(o * samples + m) * inner + i] = v;
        }
      }
    }
  }

  std::string where_;
  bool axis_from_input_ = false;
  int64_t axis_ = 1;
  bool inverse_ = false, onesided_ = false;
  ThresholdedParallel policy_;
};

OL_REGISTER_KERNELS(dft) {
  Kernel("DFT")
      .SinceVersions({17, 20})
      .Types({DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16})
      .Tuning(WorkUnitTuning(32768, "bin"))
      .Calibratable()
      .Factory(MakeKernel<DftKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace signal
}  // namespace onnx_light
