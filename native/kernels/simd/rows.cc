#include "native/kernels/simd/rows.h"

#include <cmath>

#include "native/kernels/simd/rows_variants.h"

namespace onnx_light {
namespace simd {

// The vectorised rows (math.h's exp over each ISA's lanes), in rows_<isa>.cc (each an
// isa_library with its ISA's flags): reach them only through FloatRowsVariants().
#define OL_DECLARE_ROWS(Isa)                                                                             \
  float ExpShiftedSum##Isa(const float* x, float* y, int64_t n, float shift);                            \
  void ScaleRow##Isa(float* x, int64_t n, float factor);                                                 \
  float RowMax##Isa(const float* x, int64_t n);                                                          \
  void SoftmaxRow##Isa(const float* x, float* y, int64_t n);                                             \
  void LogSoftmaxRow##Isa(const float* x, float* y, int64_t n);                                          \
  void MaxInto##Isa(const float* x, float* m, int64_t n);                                                \
  void ExpShiftedAccumulate##Isa(const float* x, const float* shift, float* y, float* sum, int64_t n);   \
  float RowSum##Isa(const float* x, int64_t n);                                                          \
  float RowSquaredDeviationSum##Isa(const float* x, int64_t n, float mean);                              \
  void NormalizeRow##Isa(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma, \
                         const float* beta);
#if defined(__x86_64__)
OL_DECLARE_ROWS(Avx2)
OL_DECLARE_ROWS(Avx512)
#elif defined(__aarch64__)
OL_DECLARE_ROWS(Neon)
#endif
#undef OL_DECLARE_ROWS

namespace {

template <typename T>
T ExpShiftedSumPortable(const T* x, T* y, int64_t n, T shift) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

template <typename T>
void ScaleRowPortable(T* x, int64_t n, T factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

// Eight independent running maxima: no loop-carried latency chain, vectorisable.
template <typename T>
T RowMaxPortable(const T* x, int64_t n) {
  constexpr int kLanes = 8;
  T lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  }
  T m = x[0];
  for (int l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

void SoftmaxRowPortable(const float* x, float* y, int64_t n) {
  ScaleRowPortable(y, n, 1.0f / ExpShiftedSumPortable(x, y, n, RowMaxPortable(x, n)));
}

void LogSoftmaxRowPortable(const float* x, float* y, int64_t n) {
  const float m = RowMaxPortable(x, n);
  const float shift = m + std::log(ExpShiftedSumPortable(x, y, n, m));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
}

void MaxIntoPortable(const float* x, float* m, int64_t n) {
  for (int64_t i = 0; i < n; ++i) m[i] = x[i] > m[i] ? x[i] : m[i];
}

void ExpShiftedAccumulatePortable(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift[i]);
    sum[i] += y[i];
  }
}

// Sums in the order of the 8-lane vector code (rows_simd.h's SumMapped over Lanes8): two
// sets of 8 running sums, lanes added as a fixed pairwise tree, the tail last. A single
// running sum loses too much on long rows far from zero (rows of 1000 around 100 put the
// normalization off by 3e-5); this order also makes the portable and avx2 sums equal.
template <typename F>
float SumMappedPortable(const float* x, int64_t n, F f) {
  constexpr int kLanes = 8;
  float a0[kLanes] = {}, a1[kLanes] = {};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      a0[l] += f(x[i + l]);
      a1[l] += f(x[i + kLanes + l]);
    }
  }
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) a0[l] += f(x[i + l]);
  }
  for (int l = 0; l < kLanes; ++l) a0[l] += a1[l];
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) a0[l] += a0[l + width];
  }
  float total = a0[0];
  for (; i < n; ++i) total += f(x[i]);
  return total;
}

float RowSumPortable(const float* x, int64_t n) {
  return SumMappedPortable(x, n, [](float v) { return v; });
}

float RowSquaredDeviationSumPortable(const float* x, int64_t n, float mean) {
  return SumMappedPortable(x, n, [mean](float v) { return (v - mean) * (v - mean); });
}

void NormalizeRowPortable(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma,
                          const float* beta) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = (x[i] - mean) * inv * gamma[i];
    y[i] = beta ? v + beta[i] : v;
  }
}

#define OL_FLOAT_ROWS(Isa)                                                                             \
  FloatRows {                                                                                          \
    ExpShiftedSum##Isa, ScaleRow##Isa, RowMax##Isa, SoftmaxRow##Isa, LogSoftmaxRow##Isa, MaxInto##Isa, \
        ExpShiftedAccumulate##Isa, RowSum##Isa, RowSquaredDeviationSum##Isa, NormalizeRow##Isa         \
  }

const FloatRows& Rows() {
  static const FloatRows rows = BestVariant(FloatRowsVariants()).impl;
  return rows;
}

}  // namespace

const std::vector<IsaVariant<FloatRows>>& FloatRowsVariants() {
  static const auto* variants = new std::vector<IsaVariant<FloatRows>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, OL_FLOAT_ROWS(Avx512)}, {"avx2", Isa::kAvx2, OL_FLOAT_ROWS(Avx2)},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, OL_FLOAT_ROWS(Neon)},
#endif
        {"portable", Isa::kPortable,
         FloatRows{ExpShiftedSumPortable<float>, ScaleRowPortable<float>, RowMaxPortable<float>, SoftmaxRowPortable,
                   LogSoftmaxRowPortable, MaxIntoPortable, ExpShiftedAccumulatePortable, RowSumPortable,
                   RowSquaredDeviationSumPortable, NormalizeRowPortable}},
  };
  return *variants;
}
#undef OL_FLOAT_ROWS

float ExpShiftedSum(const float* x, float* y, int64_t n, float shift) { return Rows().exp_shifted_sum(x, y, n, shift); }
double ExpShiftedSum(const double* x, double* y, int64_t n, double shift) {
  return ExpShiftedSumPortable(x, y, n, shift);
}
void ScaleRow(float* x, int64_t n, float factor) { Rows().scale_row(x, n, factor); }
void ScaleRow(double* x, int64_t n, double factor) { ScaleRowPortable(x, n, factor); }
float RowMax(const float* x, int64_t n) { return Rows().row_max(x, n); }
double RowMax(const double* x, int64_t n) { return RowMaxPortable(x, n); }
void SoftmaxRow(const float* x, float* y, int64_t n) { Rows().softmax_row(x, y, n); }
void LogSoftmaxRow(const float* x, float* y, int64_t n) { Rows().log_softmax_row(x, y, n); }
void MaxInto(const float* x, float* m, int64_t n) { Rows().max_into(x, m, n); }
void ExpShiftedAccumulate(const float* x, const float* shift, float* y, float* sum, int64_t n) {
  Rows().exp_shifted_accumulate(x, shift, y, sum, n);
}
float RowSum(const float* x, int64_t n) { return Rows().row_sum(x, n); }
float RowSquaredDeviationSum(const float* x, int64_t n, float mean) {
  return Rows().row_squared_deviation_sum(x, n, mean);
}
void NormalizeRow(const float* x, float* y, int64_t n, float mean, float inv, const float* gamma, const float* beta) {
  Rows().normalize_row(x, y, n, mean, inv, gamma, beta);
}

}  // namespace simd
}  // namespace onnx_light
