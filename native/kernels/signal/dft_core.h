// The shared core of DFT and STFT: signals converted once to complex<double>, a twiddle
// table, and one output bin computed as an in-order sum over the signal's samples (so
// every bin's value is independent of how bins are split across participants).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/data_type.h"
#include "native/core/status.h"
#include "native/core/tensor.h"
#include "native/executor/parallel_for.h"
#include "native/registry/kernel.h"
#include "native/kernels/signal/signal_args.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace signal {

using Complex = std::complex<double>;

// e^{sign * 2 pi i m / length} for m in [0, length).
inline void FillTwiddles(Complex* twiddles, int64_t length, double sign) {
  for (int64_t m = 0; m < length; ++m) {
    const double angle = sign * 2.0 * M_PI * static_cast<double>(m) / static_cast<double>(length);
    twiddles[m] = Complex(std::cos(angle), std::sin(angle));
  }
}

// sum_{m < count} x[m * stride] * window[m] * twiddles[(k * m) mod length], in order of m.
inline Complex BinSum(const Complex* x, int64_t stride, const double* window, int64_t count, int64_t k,
                      const Complex* twiddles, int64_t length) {
  double re = 0.0, im = 0.0;
  const int64_t step = k % length;
  int64_t index = 0;
  for (int64_t m = 0; m < count; ++m) {
    Complex v = x[m * stride];
    if (window != nullptr) v *= window[m];
    const Complex& w = twiddles[index];
    re += v.real() * w.real() - v.imag() * w.imag();
    im += v.real() * w.imag() + v.imag() * w.real();
    index += step;
    if (index >= length) index -= length;
  }
  return Complex(re, im);
}

// Tuning of both transforms: a bin's work is its sample count (complex multiply-adds).
inline std::vector<ParamSpec> TransformTuning() {
  return {
      MinimumElementsParam(32768, "complex multiply-adds (bins x samples per bin) below which the node runs serially"),
      ParamSpec::Int64("parallel.block_samples", 16384, 1, int64_t{1} << 40,
                       "multiply-adds per block; a block holds max(1, this / samples per bin) whole bins"),
  };
}

struct TransformPolicy {
  int64_t minimum_elements = 32768;
  int64_t block_samples = 16384;
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(minimum_elements, info.tuning().Int64("parallel.minimum_elements"));
    OL_ASSIGN_OR_RETURN(block_samples, info.tuning().Int64("parallel.block_samples"));
    return Status::Ok();
  }
};

// Runs fn(first_bin, end_bin) over `bins` output bins of `samples` multiply-adds each.
template <typename Fn>
Status RunBins(const KernelContext& ctx, const TransformPolicy& policy, const char* label, int64_t bins,
               int64_t samples, Fn&& fn) {
  if (bins <= 0) return Status::Ok();
  const int64_t per_bin = samples > 0 ? samples : 1;
  if (static_cast<double>(bins) * static_cast<double>(per_bin) < static_cast<double>(policy.minimum_elements)) {
    fn(int64_t{0}, bins);
    return Status::Ok();
  }
  const int64_t grain = policy.block_samples / per_bin > 0 ? policy.block_samples / per_bin : 1;
  return ParallelFor(ctx.parallel(), bins, ParallelPlan{label, grain}, [&](int64_t begin, int64_t end) {
    fn(begin, end);
    return Status::Ok();
  });
}

}  // namespace signal
}  // namespace onnx_light
