// The shared core of DFT and STFT: signals converted once to complex<double>, a twiddle
// table, and one output bin computed as an in-order sum over the signal's samples (so
// every bin's value is independent of how bins are split across participants; bins are
// split by thresholded_parallel.h, a bin costing its sample count).
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
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/signal/signal_args.h"
#include "native/registry/kernel.h"
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

}  // namespace signal
}  // namespace onnx_light
