// Shared pieces of the ai.onnx.ml scoring kernels (tree ensembles, linear models, SVMs):
// reading float-or-tensor attributes, the post_transform functions (ONNX Runtime's
// formulas) and the per-row parallel split.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "native/core/status.h"
#include "native/core/tensor.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace ml {

enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };

inline StatusOr<PostTransform> ReadPostTransform(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(std::string name, info.GetString("post_transform", "NONE"));
  if (name == "NONE") return PostTransform::kNone;
  if (name == "LOGISTIC") return PostTransform::kLogistic;
  if (name == "SOFTMAX") return PostTransform::kSoftmax;
  if (name == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (name == "PROBIT") return PostTransform::kProbit;
  return InvalidArgument(info.Where(), ": unknown post_transform '", name, "'");
}

// Attribute `name` (floats) or `name`_as_tensor (a float or double tensor) as doubles;
// empty when neither is present (InvalidArgument if `required`).
inline StatusOr<std::vector<double>> FloatsOrTensor(const KernelInfo& info, const std::string& name, bool required) {
  const std::string tensor_name = name + "_as_tensor";
  if (info.HasAttribute(tensor_name)) {
    OL_ASSIGN_OR_RETURN(Tensor t, info.GetTensor(tensor_name));
    std::vector<double> out(static_cast<size_t>(t.num_elements()));
    Status s = DispatchType(TypeList<float, double>{}, t.dtype(), info.Where(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(t.data<T>()[i]);
      return Status::Ok();
    });
    if (!s.ok()) return s;
    return out;
  }
  if (info.HasAttribute(name)) {
    OL_ASSIGN_OR_RETURN(std::vector<float> f, info.GetFloats(name));
    return std::vector<double>(f.begin(), f.end());
  }
  if (required) return InvalidArgument(info.Where(), ": attribute ", name, " (or ", tensor_name, ") is required");
  return std::vector<double>{};
}

inline double Logistic(double v) {
  const double e = 1.0 / (1.0 + std::exp(-std::abs(v)));
  return v < 0 ? 1.0 - e : e;
}

// The approximation ONNX Runtime and onnx.reference use (Winitzki, a = 0.147), in float
// arithmetic as ONNX Runtime computes it: near 0.5 the cancellation makes the float result
// differ from a double one in the second significant digit.
inline float ErfInv(float x) {
  const float sign = x < 0 ? -1.0f : 1.0f;
  x = (1 - x) * (1 + x);
  if (x == 0) return 0;
  const float log = std::log(x);
  const float v = 2 / (3.14159f * 0.147f) + 0.5f * log;
  const float v2 = 1 / 0.147f * log;
  const float v3 = -v + std::sqrt(v * v - v2);
  return sign * std::sqrt(v3);
}

inline double Probit(double v) { return 1.41421356f * ErfInv(static_cast<float>(v) * 2 - 1); }

// Applies the transform to one row of scores in place.
inline void ApplyPostTransform(PostTransform transform, double* scores, int64_t n) {
  switch (transform) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) scores[i] = Logistic(scores[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) scores[i] = Probit(scores[i]);
      return;
    case PostTransform::kSoftmax: {
      if (n == 0) return;
      const double m = *std::max_element(scores, scores + n);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += (scores[i] = std::exp(scores[i] - m));
      for (int64_t i = 0; i < n; ++i) scores[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      if (n == 0) return;
      const double m = *std::max_element(scores, scores + n);
      const double exp_neg_max = std::exp(-m);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = scores[i];
        scores[i] = (v > 0.0000001 || v < -0.0000001) ? std::exp(v - m) : v * exp_neg_max;
        sum += scores[i];
      }
      for (int64_t i = 0; i < n; ++i) scores[i] = sum == 0 ? 0.5 : scores[i] / sum;
      return;
    }
  }
}

// Index of the first largest value.
inline int64_t ArgMax(const double* v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

// X as [rows, features]: a 1-D X is one row. InvalidArgument for other ranks.
inline Status RowsAndFeatures(const Tensor& x, const std::string& where, int64_t* rows, int64_t* features) {
  const Shape& s = x.shape();
  if (s.rank() == 1) {
    *rows = 1;
    *features = s.dim(0);
  } else if (s.rank() == 2) {
    *rows = s.dim(0);
    *features = s.dim(1);
  } else {
    return InvalidArgument(where, ": X must be [N, F] or [F], got ", x.TypeAndShape());
  }
  return Status::Ok();
}

// Input row r of X converted to doubles (X float, double, int64 or int32).
inline Status ReadRowsAsDouble(const Tensor& x, int64_t begin, int64_t end, int64_t features, const std::string& where,
                               double* out) {
  return DispatchType(TypeList<float, double, int64_t, int32_t>{}, x.dtype(), where, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>() + begin * features;
    for (int64_t i = 0, n = (end - begin) * features; i < n; ++i) out[i] = static_cast<double>(in[i]);
    return Status::Ok();
  });
}

// The ML families split rows (or their own units) with ThresholdedParallel: serially
// below parallel.minimum_elements (rows x max(1, cost per row)) or when the rows fit one
// block, else in blocks of whole rows. Every row is written by exactly one participant, so
// the result does not depend on the participant count.
inline Status InitRowParallel(const KernelInfo& info, ThresholdedParallel* parallel) {
  parallel->serial_single_block = true;
  return parallel->Init(info);
}

}  // namespace ml
}  // namespace onnx_light
