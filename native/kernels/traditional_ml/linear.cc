// Row-wise ai.onnx.ml scorers and transforms: LinearClassifier, LinearRegressor, Scaler,
// Normalizer (opset 1). Each output row depends on its input row alone, so rows split
// through ParallelFor once rows x features reaches parallel.minimum_elements (family
// traditional_ml); every row is computed whole by one participant. Inputs may be float,
// double, int64 or int32; outputs are float, computed in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/traditional_ml/ml_common.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {
namespace {

constexpr int64_t kMinimumElements = 32768;  // PyTorch's GRAIN_SIZE: a region start is a few us
constexpr int64_t kBlockRows = 16;

// Reads the row tuning values and converts X rows to doubles block by block.
class RowKernel : public OpKernel {
 protected:
  Status InitRows(const KernelInfo& info) {
    where_ = info.Where();
    return InitRowParallel(info, &parallel_);
  }

  // fn(row index, row as doubles) for every row; the row buffer is per call of the block.
  template <typename Fn>
  Status EachRow(const KernelContext& ctx, const char* label, const Tensor& x, int64_t rows, int64_t features,
                 int64_t cost_per_row, Fn&& fn) const {
    return parallel_.Run(ctx.parallel(), label, rows, std::max<int64_t>(cost_per_row, 1),
                         [&](int64_t begin, int64_t end) -> Status {
                           std::vector<double> row(static_cast<size_t>(std::max<int64_t>(features, 1)));
                           for (int64_t r = begin; r < end; ++r) {
                             OL_RETURN_IF_ERROR(ReadRowsAsDouble(x, r, r + 1, features, where_, row.data()));
                             fn(r, row.data());
                           }
                           return Status::Ok();
                         });
  }

  std::string where_;
  ThresholdedParallel parallel_;
};

// scores = X . coefficients^T + intercepts, one coefficient row per class.
class LinearClassifierKernel : public RowKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitRows(info));
    OL_ASSIGN_OR_RETURN(post_, ReadPostTransform(info));
    OL_ASSIGN_OR_RETURN(std::vector<float> c, info.GetFloats("coefficients"));
    OL_ASSIGN_OR_RETURN(std::vector<float> b, info.GetFloats("intercepts", {}));
    coefficients_.assign(c.begin(), c.end());
    intercepts_.assign(b.begin(), b.end());
    if (info.HasAttribute("classlabels_strings")) {
      OL_ASSIGN_OR_RETURN(string_labels_, info.GetStrings("classlabels_strings"));
    } else {
      OL_ASSIGN_OR_RETURN(int_labels_, info.GetInts("classlabels_ints"));
    }
    classes_ = static_cast<int64_t>(string_labels_.empty() ? int_labels_.size() : string_labels_.size());
    if (classes_ < 1) return InvalidArgument(where_, ": needs class labels");
    rows_of_coefficients_ = (classes_ == 2 && !intercepts_.empty() && intercepts_.size() == 1) ? 1 : classes_;
    if (classes_ == 2 && intercepts_.empty() && coefficients_.size() % 2 != 0) rows_of_coefficients_ = 1;
    if (coefficients_.empty() || coefficients_.size() % rows_of_coefficients_ != 0) {
      return InvalidArgument(where_, ": ", coefficients_.size(), " coefficients do not split into ",
                             rows_of_coefficients_, " rows");
    }
    if (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != rows_of_coefficients_) {
      return InvalidArgument(where_, ": ", intercepts_.size(), " intercepts for ", rows_of_coefficients_, " rows");
    }
    if (rows_of_coefficients_ == 1 && classes_ != 2) {
      return InvalidArgument(where_, ": one coefficient row needs exactly 2 class labels");
    }
    features_ = static_cast<int64_t>(coefficients_.size()) / rows_of_coefficients_;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    if (features != features_) {
      return InvalidArgument(where_, ": X has ", features, " features, the coefficients ", features_);
    }
    const bool strings = !string_labels_.empty();
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, strings ? DataType::kString : DataType::kInt64, Shape{rows}));
    OL_ASSIGN_OR_RETURN(Tensor * z, ctx.AllocateOutput(1, DataType::kFloat, Shape{rows, classes_}));
    const int64_t k = rows_of_coefficients_;
    return EachRow(ctx, "LinearClassifierRows", *x, rows, features, features * k, [&](int64_t r, const double* row) {
      double scores[2];
      std::vector<double> many;
      double* s = scores;
      if (k > 2) {
        many.resize(static_cast<size_t>(k));
        s = many.data();
      }
      for (int64_t c = 0; c < k; ++c) {
        double acc = intercepts_.empty() ? 0.0 : intercepts_[c];
        const double* w = coefficients_.data() + c * features_;
        for (int64_t f = 0; f < features_; ++f) acc += w[f] * row[f];
        s[c] = acc;
      }
      int64_t label = 0;
      if (k == 1) {  // binary with one score: ONNX Runtime's [1 - s, s]
        const double v = s[0];
        label = v > 0 ? 1 : 0;
        if (post_ == PostTransform::kLogistic) {
          s[1] = Logistic(v);
          s[0] = 1.0 - s[1];
        } else {
          s[0] = 1.0 - v;
          s[1] = v;
          if (post_ == PostTransform::kProbit) ApplyPostTransform(post_, s, 2);
        }
      } else {
        label = ArgMax(s, k);
        ApplyPostTransform(post_, s, k);
      }
      for (int64_t c = 0; c < classes_; ++c) z->data<float>()[r * classes_ + c] = static_cast<float>(s[c]);
      if (strings) {
        y->data<std::string>()[r] = string_labels_[label];
      } else {
        y->data<int64_t>()[r] = int_labels_[label];
      }
    });
  }

 private:
  PostTransform post_ = PostTransform::kNone;
  std::vector<double> coefficients_, intercepts_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  int64_t classes_ = 0, rows_of_coefficients_ = 0, features_ = 0;
};

// Y = X . coefficients^T + intercepts, `targets` outputs per row.
class LinearRegressorKernel : public RowKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitRows(info));
    OL_ASSIGN_OR_RETURN(post_, ReadPostTransform(info));
    OL_ASSIGN_OR_RETURN(std::vector<float> c, info.GetFloats("coefficients"));
    OL_ASSIGN_OR_RETURN(std::vector<float> b, info.GetFloats("intercepts", {}));
    OL_ASSIGN_OR_RETURN(targets_, info.GetInt("targets", 1));
    coefficients_.assign(c.begin(), c.end());
    intercepts_.assign(b.begin(), b.end());
    if (targets_ < 1 || coefficients_.size() % targets_ != 0 ||
        (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != targets_)) {
      return InvalidArgument(where_, ": ", coefficients_.size(), " coefficients and ", intercepts_.size(),
                             " intercepts do not fit ", targets_, " targets");
    }
    features_ = static_cast<int64_t>(coefficients_.size()) / targets_;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    if (features != features_) {
      return InvalidArgument(where_, ": X has ", features, " features, the coefficients ", features_);
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape{rows, targets_}));
    return EachRow(ctx, "LinearRegressorRows", *x, rows, features, features * targets_,
                   [&](int64_t r, const double* row) {
                     std::vector<double> s(static_cast<size_t>(targets_));
                     for (int64_t t = 0; t < targets_; ++t) {
                       double acc = intercepts_.empty() ? 0.0 : intercepts_[t];
                       const double* w = coefficients_.data() + t * features_;
                       for (int64_t f = 0; f < features_; ++f) acc += w[f] * row[f];
                       s[t] = acc;
                     }
                     ApplyPostTransform(post_, s.data(), targets_);
                     for (int64_t t = 0; t < targets_; ++t)
                       y->data<float>()[r * targets_ + t] = static_cast<float>(s[t]);
                   });
  }

 private:
  PostTransform post_ = PostTransform::kNone;
  std::vector<double> coefficients_, intercepts_;
  int64_t targets_ = 1, features_ = 0;
};

// Y = (X - offset) * scale, offset and scale per feature or one for all.
class ScalerKernel : public RowKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitRows(info));
    OL_ASSIGN_OR_RETURN(std::vector<float> offset, info.GetFloats("offset", {}));
    OL_ASSIGN_OR_RETURN(std::vector<float> scale, info.GetFloats("scale", {}));
    offset_.assign(offset.begin(), offset.end());
    scale_.assign(scale.begin(), scale.end());
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    for (const auto* v : {&offset_, &scale_}) {
      if (v->size() > 1 && static_cast<int64_t>(v->size()) != features) {
        return InvalidArgument(where_, ": offset/scale have ", v->size(), " entries for ", features, " features");
      }
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, x->shape()));
    auto at = [](const std::vector<double>& v, int64_t f, double fallback) {
      return v.empty() ? fallback : v[v.size() == 1 ? 0 : f];
    };
    return EachRow(ctx, "ScalerRows", *x, rows, features, features, [&](int64_t r, const double* row) {
      float* out = y->data<float>() + r * features;
      for (int64_t f = 0; f < features; ++f)
        out[f] = static_cast<float>((row[f] - at(offset_, f, 0.0)) * at(scale_, f, 1.0));
    });
  }

 private:
  std::vector<double> offset_, scale_;
};

// Each row divided by its MAX, L1 or L2 norm.
class NormalizerKernel : public RowKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitRows(info));
    OL_ASSIGN_OR_RETURN(norm_, info.GetString("norm", "MAX"));
    if (norm_ != "MAX" && norm_ != "L1" && norm_ != "L2")
      return InvalidArgument(where_, ": unknown norm '", norm_, "'");
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, x->shape()));
    return EachRow(ctx, "NormalizerRows", *x, rows, features, features, [&](int64_t r, const double* row) {
      // ONNX Runtime (and the operator's definition): MAX divides by the largest value
      // (signed), L1 by the sum of |x|, L2 by the Euclidean norm; a zero divisor leaves x.
      double norm = 0;
      if (norm_ == "MAX") {
        norm = features > 0 ? row[0] : 0;
        for (int64_t f = 1; f < features; ++f) norm = std::max(norm, row[f]);
      } else {
        for (int64_t f = 0; f < features; ++f) norm += norm_ == "L1" ? std::abs(row[f]) : row[f] * row[f];
        if (norm_ == "L2") norm = std::sqrt(norm);
      }
      if (norm == 0) norm = 1;
      float* out = y->data<float>() + r * features;
      for (int64_t f = 0; f < features; ++f) out[f] = static_cast<float>(row[f] / norm);
    });
  }

 private:
  std::string norm_;
};

std::vector<ParamSpec> LinearTuning() {
  return {
      MinimumElementsParam(kMinimumElements, "multiply-adds (rows x features x outputs) below which rows stay serial"),
      ParamSpec::Int64(param::kBlockRows, kBlockRows, 1, int64_t{1} << 30,
                       "rows per block are a multiple of this (the ParallelFor grain)"),
  };
}

OL_REGISTER_KERNELS(ml_linear) {
  const std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};
  Kernel("LinearClassifier")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(LinearTuning())
      .Factory(MakeKernel<LinearClassifierKernel>())
      .AddTo(registry);
  Kernel("LinearRegressor")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(LinearTuning())
      .Factory(MakeKernel<LinearRegressorKernel>())
      .AddTo(registry);
  Kernel("Scaler")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(LinearTuning())
      .Factory(MakeKernel<ScalerKernel>())
      .AddTo(registry);
  Kernel("Normalizer")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(LinearTuning())
      .Factory(MakeKernel<NormalizerKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
