// STFT (opset 17): frames of frame_length samples every frame_step, multiplied by the
// window (all ones when absent), each transformed by a forward DFT of frame_length;
// onesided keeps bins [0, frame_length / 2]. Bins of every (batch, frame) are split
// across participants, each an in-order sum over its frame.
#include <string>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/signal/dft_core.h"

namespace onnx_light {
namespace signal {
namespace {

class StftKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t onesided, info.GetInt("onesided", 1));
    onesided_ = onesided != 0;
    return policy_.Init(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& in = x->shape();
    if (in.rank() != 3 || (in[2] != 1 && in[2] != 2)) {
      return InvalidArgument(where_, ": signal must be [batch, length, 1 or 2], got ", x->TypeAndShape());
    }
    const int64_t batch = in[0], signal_length = in[1];
    int64_t step = 0;
    OL_ASSIGN_OR_RETURN(bool has_step, ReadOptionalScalar(ctx, 1, where_, "frame_step", &step));
    if (!has_step || step < 1) return InvalidArgument(where_, ": frame_step must be a positive scalar");
    const Tensor* window = ctx.input(2);
    int64_t length = window != nullptr ? (window->shape().rank() == 1 ? window->shape()[0] : -1) : signal_length;
    if (window != nullptr && (window->shape().rank() != 1 || window->dtype() != x->dtype())) {
      return InvalidArgument(where_, ": window must be 1-D of the signal's type, got ", window->TypeAndShape());
    }
    int64_t frame_length = length;
    OL_ASSIGN_OR_RETURN(bool has_length, ReadOptionalScalar(ctx, 3, where_, "frame_length", &frame_length));
    if (has_length && window != nullptr && frame_length != length) {
      return InvalidArgument(where_, ": frame_length ", frame_length, " differs from the window ",
                             window->TypeAndShape());
    }
    length = frame_length;
    if (length < 1 || length > signal_length) {
      return InvalidArgument(where_, ": frame length ", length, " must be in [1, signal length ", signal_length, "]");
    }
    const int64_t frames = (signal_length - length) / step + 1;
    const int64_t bins = onesided_ ? length / 2 + 1 : length;

    return DispatchType(SignalTypes{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      ScratchArena arena(ctx.allocator(),
                         sizeof(Complex) * (batch * signal_length + length) + sizeof(double) * length + 192);
      OL_RETURN_IF_ERROR(arena.status());
      OL_ASSIGN_OR_RETURN(Complex * signal, arena.AllocateArray<Complex>(batch * signal_length));
      OL_ASSIGN_OR_RETURN(Complex * twiddles, arena.AllocateArray<Complex>(length));
      OL_ASSIGN_OR_RETURN(double* weights, arena.AllocateArray<double>(length));
      ctx.RecordScratch(static_cast<int64_t>(arena.used()));
      const T* xs = x->data<T>();
      const bool complex_input = in[2] == 2;
      for (int64_t n = 0; n < batch * signal_length; ++n) {
        const T* p = xs + n * in[2];
        signal[n] = Complex(LoadDouble(p[0]), complex_input ? LoadDouble(p[1]) : 0.0);
      }
      for (int64_t n = 0; n < length; ++n) weights[n] = window != nullptr ? LoadDouble(window->data<T>()[n]) : 1.0;
      FillTwiddles(twiddles, length, -1.0);

      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), Shape{batch, frames, bins, 2}));
      T* out = y->data<T>();
      return policy_.Run(ctx.parallel(), "STFT", batch * frames * bins, length, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t k = b % bins, f = (b / bins) % frames, s = b / (bins * frames);
          const Complex v = BinSum(signal + s * signal_length + f * step, 1, weights, length, k, twiddles, length);
          out[2 * b] = StoreDouble<T>(v.real());
          out[2 * b + 1] = StoreDouble<T>(v.imag());
        }
      });
    });
  }

 private:
  std::string where_;
  bool onesided_ = true;
  ThresholdedParallel policy_;
};

OL_REGISTER_KERNELS(stft) {
  Kernel("STFT")
      .Versions(17, kOpenEnded)
      .Types({DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16})
      .Tuning(WorkUnitTuning(32768, "bin"))
      .Calibratable()
      .Factory(MakeKernel<StftKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace signal
}  // namespace onnx_light
