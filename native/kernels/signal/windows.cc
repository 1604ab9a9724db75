// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (opset 17): tiny tables
// computed serially in double and stored in the requested output type (family
// signal_windows: no ParallelFor).
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "native/kernels/signal/signal_args.h"

namespace onnx_light {
namespace signal {
namespace {

using OutputTypes = TypeList<float, double, Float16, BFloat16, uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t,
                             int32_t, int64_t>;

// Writes `values` as a tensor of `type` and `shape` into output 0 (integers truncate, as
// a cast does).
Status Emit(KernelContext& ctx, const std::vector<double>& values, DataType type, Shape shape,
            const std::string& where) {
  return DispatchType(OutputTypes{}, type, where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, type, shape));
    for (size_t i = 0; i < values.size(); ++i) out->data<T>()[i] = StoreDouble<T>(values[i]);
    return Status::Ok();
  });
}

StatusOr<DataType> OutputDatatype(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(int64_t t, info.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat)));
  if (!IsValidDataType(static_cast<int32_t>(t))) {
    return InvalidArgument(info.Where(), ": output_datatype ", t, " is not an ONNX element type");
  }
  return static_cast<DataType>(t);
}

// Generalised cosine windows: w[n] = a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D), with D =
// size (periodic) or size - 1 (symmetric).
struct CosineTerms {
  double a0, a1, a2;
};

template <const CosineTerms& kTerms>
class CosineWindowKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t periodic, info.GetInt("periodic", 1));
    periodic_ = periodic != 0;
    OL_ASSIGN_OR_RETURN(type_, OutputDatatype(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    int64_t size = 0;
    OL_ASSIGN_OR_RETURN(bool has_size, ReadOptionalScalar(ctx, 0, where_, "size", &size));
    if (!has_size || size < 0) return InvalidArgument(where_, ": size must be a non-negative scalar");
    const double period = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> w(static_cast<size_t>(size), 1.0);  // a one-sample symmetric window is 1
    if (period > 0) {
      for (int64_t n = 0; n < size; ++n) {
        const double x = 2.0 * M_PI * static_cast<double>(n) / period;
        w[n] = kTerms.a0 - kTerms.a1 * std::cos(x) + kTerms.a2 * std::cos(2.0 * x);
      }
    }
    return Emit(ctx, w, type_, Shape{size}, where_);
  }

 private:
  std::string where_;
  bool periodic_ = true;
  DataType type_ = DataType::kFloat;
};

constexpr CosineTerms kHann{0.5, 0.5, 0.0};
constexpr CosineTerms kHamming{25.0 / 46.0, 21.0 / 46.0, 0.0};
constexpr CosineTerms kBlackman{0.42, 0.5, 0.08};

// Triangular filters between mel-spaced points (mel = 2595 log10(1 + hz / 700)), as ONNX
// defines them: num_mel_bins + 2 points spaced (high - low) / (num_mel_bins + 2) apart,
// each mapped to spectrogram bin floor((dft_length + 1) * hz / sample_rate).
class MelWeightMatrixKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(type_, OutputDatatype(info));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    int64_t mel_bins = 0, dft_length = 0, sample_rate = 0;
    for (auto [index, name, value] :
         {std::tuple{0, "num_mel_bins", &mel_bins}, std::tuple{1, "dft_length", &dft_length},
          std::tuple{2, "sample_rate", &sample_rate}}) {
      OL_ASSIGN_OR_RETURN(bool present, ReadOptionalScalar(ctx, index, where_, name, value));
      if (!present || *value < 1) return InvalidArgument(where_, ": ", name, " must be a positive scalar");
    }
    OL_ASSIGN_OR_RETURN(double low_hz, ReadFloatScalar(ctx, 3, "lower_edge_hertz"));
    OL_ASSIGN_OR_RETURN(double high_hz, ReadFloatScalar(ctx, 4, "upper_edge_hertz"));
    const int64_t rows = dft_length / 2 + 1;
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(low_hz);
    const double mel_step = (to_mel(high_hz) - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> point(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (low_mel + i * mel_step) / 2595.0) - 1.0);
      point[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
      if (point[i] < 0 || point[i] >= rows) {
        return InvalidArgument(where_, ": mel point ", i, " falls on spectrogram bin ", point[i], ", outside [0, ",
                               rows, "): check the edge frequencies against sample_rate ", sample_rate);
      }
    }
    std::vector<double> w(static_cast<size_t>(rows * mel_bins), 0.0);
    for (int64_t m = 0; m < mel_bins; ++m) {
      const int64_t left = point[m], center = point[m + 1], right = point[m + 2];
      if (center == left) {
        w[center * mel_bins + m] = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j) w[j * mel_bins + m] = double(j - left) / double(center - left);
      }
      for (int64_t j = center; j < right; ++j) w[j * mel_bins + m] = double(right - j) / double(right - center);
    }
    return Emit(ctx, w, type_, Shape{rows, mel_bins}, where_);
  }

 private:
  StatusOr<double> ReadFloatScalar(const KernelContext& ctx, int index, const char* name) const {
    OL_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequiredInput(index));
    if (t->num_elements() != 1)
      return InvalidArgument(where_, ": ", name, " must be a scalar, got ", t->TypeAndShape());
    double v = 0;
    OL_RETURN_IF_ERROR(DispatchType(SignalTypes{}, t->dtype(), where_, [&](auto tag) -> Status {
      v = LoadDouble(t->data<typename decltype(tag)::type>()[0]);
      return Status::Ok();
    }));
    return v;
  }

  std::string where_;
  DataType type_ = DataType::kFloat;
};

OL_REGISTER_KERNELS(signal_windows) {
  const std::vector<DataType> size_types = {DataType::kInt32, DataType::kInt64};
  for (auto [op, factory] : {std::pair{"HannWindow", MakeKernel<CosineWindowKernel<kHann>>()},
                             std::pair{"HammingWindow", MakeKernel<CosineWindowKernel<kHamming>>()},
                             std::pair{"BlackmanWindow", MakeKernel<CosineWindowKernel<kBlackman>>()},
                             std::pair{"MelWeightMatrix", MakeKernel<MelWeightMatrixKernel>()}}) {
    KernelDef def;
    def.op = op;
    def.since_version = 17;
    def.family = OL_KERNEL_FAMILY;
    def.element_types = size_types;
    def.factory = factory;
    registry.Add(std::move(def));
  }
}

}  // namespace
}  // namespace signal
}  // namespace onnx_light
