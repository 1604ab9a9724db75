// SVMClassifier and SVMRegressor (ai.onnx.ml 1): kernels LINEAR, POLY, RBF, SIGMOID; the
// classifier votes one-vs-one over support vectors (or scores one linear row per class
// when there are none), with optional Platt probabilities (prob_a, prob_b) coupled
// pairwise as libsvm does. Semantics follow ONNX Runtime / onnx.reference, including the
// binary case's [-s, s] scores. Rows are independent: they split through ParallelFor
// once rows x support vectors x features reaches parallel.minimum_elements (family
// traditional_ml), every row computed whole by one participant.
//
// With support vectors, a participant takes its rows in blocks of algorithm.kernel_rows:
// the block's dot products with every support vector are one product through the GEMM
// engine (float, its packed path, whose per-element summation order does not depend on the
// block), then each kernel value follows from its dot product (RBF: |x|^2 + |s|^2 - 2 x.s,
// exp vectorised), and each row's decision values sum kernel values x coefficients in
// double in a fixed order. So the result does not depend on the block or participant count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/allocator.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/simd/rows.h"
#include "native/kernels/traditional_ml/ml_common.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {
namespace {

constexpr int64_t kMinimumElements = 32768;
constexpr int64_t kBlockRows = 4;
constexpr int64_t kKernelRows = 32;

size_t Align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// sum c[i] * k[i] for i < n in double: four running sums (no single latency chain), then
// the tail; the order depends only on n.
double DotCoefficients(const double* c, const float* k, int64_t n) {
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) s[j] += c[i + j] * static_cast<double>(k[i + j]);
  }
  double total = (s[0] + s[1]) + (s[2] + s[3]);
  for (; i < n; ++i) total += c[i] * static_cast<double>(k[i]);
  return total;
}

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct SvmCommon {
  SvmKernel kernel = SvmKernel::kLinear;
  double gamma = 0, coef0 = 0;
  int64_t degree = 0;
  PostTransform post = PostTransform::kNone;
  std::vector<double> coefficients, rho, support_vectors;
  ThresholdedParallel parallel;
  int64_t kernel_rows = kKernelRows;
  // The support vectors as floats [vectors, features] (the GEMM's B) and their squared norms.
  std::vector<float> vectors_f;
  std::vector<double> norms;

  Status Read(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitRowParallel(info, &parallel));
    OL_ASSIGN_OR_RETURN(kernel_rows, info.tuning().Int64("algorithm.kernel_rows"));
    OL_ASSIGN_OR_RETURN(post, ReadPostTransform(info));
    OL_ASSIGN_OR_RETURN(std::string type, info.GetString("kernel_type", "LINEAR"));
    if (type == "LINEAR")
      kernel = SvmKernel::kLinear;
    else if (type == "POLY")
      kernel = SvmKernel::kPoly;
    else if (type == "RBF")
      kernel = SvmKernel::kRbf;
    else if (type == "SIGMOID")
      kernel = SvmKernel::kSigmoid;
    else
      return InvalidArgument(info.Where(), ": unknown kernel_type '", type, "'");
    OL_ASSIGN_OR_RETURN(std::vector<float> params, info.GetFloats("kernel_params", {}));
    if (params.size() >= 3) {
      gamma = params[0];
      coef0 = params[1];
      degree = static_cast<int64_t>(params[2]);
    }
    OL_ASSIGN_OR_RETURN(coefficients, FloatsOrTensor(info, "coefficients", true));
    OL_ASSIGN_OR_RETURN(rho, FloatsOrTensor(info, "rho", false));
    OL_ASSIGN_OR_RETURN(support_vectors, FloatsOrTensor(info, "support_vectors", false));
    return Status::Ok();
  }

  void PrepareVectors(int64_t vectors, int64_t features) {
    vectors_f.assign(support_vectors.begin(), support_vectors.begin() + vectors * features);
    norms.assign(static_cast<size_t>(vectors), 0.0);
    for (int64_t v = 0; v < vectors; ++v) {
      const float* s = vectors_f.data() + v * features;
      for (int64_t f = 0; f < features; ++f) norms[v] += static_cast<double>(s[f]) * s[f];
    }
  }

  // Bytes of scratch for one block of `rows` rows: converted rows (`convert`), the kernel
  // values and the GEMM's packing, each 64-byte aligned.
  static size_t BlockScratchBytes(int64_t rows, int64_t vectors, int64_t features, bool convert) {
    return (convert ? Align64(sizeof(float) * rows * features) : 0) + Align64(sizeof(float) * rows * vectors) +
           Align64(gemm::SgemmSerialScratchBytes(rows, vectors, features));
  }

  // out[r * vectors + v] = K(x_r, s_v) for the n rows of x (floats, row stride `features`).
  void KernelRows(const float* x, int64_t n, int64_t vectors, int64_t features, float* out, float* scratch) const {
    const gemm::DenseBSource b(/*trans_b=*/true, vectors_f.data(), features);
    gemm::SgemmSerialPackedB(false, n, vectors, features, 1.0f, x, features, b, 0.0f, out, vectors, scratch);
    for (int64_t r = 0; r < n; ++r) {
      float* k = out + r * vectors;
      switch (kernel) {
        case SvmKernel::kLinear:
          break;
        case SvmKernel::kRbf: {
          double xx = 0;
          for (int64_t f = 0; f < features; ++f) xx += static_cast<double>(x[r * features + f]) * x[r * features + f];
          for (int64_t v = 0; v < vectors; ++v) {
            double d = xx + norms[v] - 2.0 * static_cast<double>(k[v]);
            if (d < 0) d = 0;  // rounding of the expansion near x == s
            k[v] = static_cast<float>(-gamma * d);
          }
          simd::ExpShiftedSum(k, vectors, 0.0f);  // k = exp(k)
          break;
        }
        case SvmKernel::kPoly:
          for (int64_t v = 0; v < vectors; ++v) {
            k[v] = static_cast<float>(std::pow(static_cast<double>(k[v]) * gamma + coef0, static_cast<double>(degree)));
          }
          break;
        case SvmKernel::kSigmoid:
          for (int64_t v = 0; v < vectors; ++v) {
            k[v] = static_cast<float>(std::tanh(static_cast<double>(k[v]) * gamma + coef0));
          }
          break;
      }
    }
  }

  // Runs fn(rows r0 as floats, n, kernel values [n, vectors], r0) over every row in blocks
  // of kernel_rows, rows split as the other ML row loops (ThresholdedParallel).
  template <typename Fn>
  Status ForKernelBlocks(KernelContext& ctx, const char* label, const Tensor& x, int64_t rows, int64_t vectors,
                         int64_t features, const std::string& where, Fn&& fn) const {
    if (rows == 0) return Status::Ok();
    const bool convert = x.dtype() != DataType::kFloat;
    const int64_t row_cost = std::max<int64_t>(vectors * features, 1);
    const ParallelPlan plan{label, parallel.UnitsPerBlock(row_cost)};
    const bool split = !parallel.Serial(rows, row_cost);
    const int participants = split ? AvailableParticipants(ctx.parallel(), plan) : 1;
    const int64_t block = std::min(rows, kernel_rows);
    const size_t slice = BlockScratchBytes(block, vectors, features, convert);
    ScratchArena arena(ctx.allocator(), slice * participants + 64);
    OL_RETURN_IF_ERROR(arena.status());
    OL_ASSIGN_OR_RETURN(char* scratch, arena.AllocateArray<char>(slice * participants));
    ctx.RecordScratch(static_cast<int64_t>(slice * participants));
    auto run = [&](int participant, int64_t begin, int64_t end) -> Status {
      char* mine = scratch + slice * participant;
      float* converted = reinterpret_cast<float*>(mine);
      float* kernels = reinterpret_cast<float*>(mine + (convert ? Align64(sizeof(float) * block * features) : 0));
      float* gemm_scratch =
          reinterpret_cast<float*>(reinterpret_cast<char*>(kernels) + Align64(sizeof(float) * block * vectors));
      std::vector<double> as_double;
      for (int64_t b = begin; b < end; b += block) {
        const int64_t n = std::min(block, end - b);
        const float* rows_f = nullptr;
        if (convert) {
          as_double.resize(static_cast<size_t>(n * features));
          OL_RETURN_IF_ERROR(ReadRowsAsDouble(x, b, b + n, features, where, as_double.data()));
          for (int64_t i = 0; i < n * features; ++i) converted[i] = static_cast<float>(as_double[i]);
          rows_f = converted;
        } else {
          rows_f = x.data<float>() + b * features;
        }
        KernelRows(rows_f, n, vectors, features, kernels, gemm_scratch);
        OL_RETURN_IF_ERROR(fn(b, n, static_cast<const float*>(kernels)));
      }
      return Status::Ok();
    };
    if (!split) return run(0, 0, rows);
    return ParallelForWithParticipant(ctx.parallel(), rows, plan, run);
  }

  static double LinearDot(const double* a, const double* b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
  }
};

// libsvm's multiclass_probability (pairwise coupling), as onnx.reference writes it.
void MulticlassProbability(int64_t k, const std::vector<double>& r, double* p) {
  const int64_t max_iter = std::max<int64_t>(100, k);
  std::vector<double> q(static_cast<size_t>(k * k)), qp(static_cast<size_t>(k));
  const double eps = 0.005 / static_cast<double>(k);
  auto R = [&](int64_t i, int64_t j) { return r[i * k + j]; };
  for (int64_t t = 0; t < k; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    double d = 0;
    for (int64_t j = 0; j < t; ++j) {
      d += R(j, t) * R(j, t);
      q[t * k + j] = q[j * k + t];
    }
    for (int64_t j = t + 1; j < k; ++j) {
      d += R(j, t) * R(j, t);
      q[t * k + j] = -R(j, t) * R(t, j);
    }
    q[t * k + t] = d;
  }
  for (int64_t iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int64_t j = 0; j < k; ++j) qp[t] += q[t * k + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-qp[t] + pqp) / q[t * k + t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

class SvmClassifierKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_RETURN_IF_ERROR(svm_.Read(info));
    if (info.HasAttribute("classlabels_strings")) {
      OL_ASSIGN_OR_RETURN(string_labels_, info.GetStrings("classlabels_strings"));
    } else if (info.HasAttribute("classlabels_ints")) {
      OL_ASSIGN_OR_RETURN(int_labels_, info.GetInts("classlabels_ints"));
    }
    classes_ = std::max<int64_t>(static_cast<int64_t>(std::max(string_labels_.size(), int_labels_.size())), 1);
    OL_ASSIGN_OR_RETURN(vectors_per_class_, info.GetInts("vectors_per_class", {}));
    OL_ASSIGN_OR_RETURN(prob_a_, FloatsOrTensor(info, "prob_a", false));
    OL_ASSIGN_OR_RETURN(prob_b_, FloatsOrTensor(info, "prob_b", false));
    for (int64_t v : vectors_per_class_) {
      if (v < 0) return InvalidArgument(where_, ": vectors_per_class must be >= 0");
      starts_.push_back(vectors_);
      vectors_ += v;
    }
    if (svm_.rho.empty()) return InvalidArgument(where_, ": rho is required");
    all_positive_ = std::all_of(svm_.coefficients.begin(), svm_.coefficients.end(), [](double c) { return c >= 0; });
    if (vectors_ > 0) {
      if (static_cast<int64_t>(vectors_per_class_.size()) != classes_) {
        return InvalidArgument(where_, ": vectors_per_class has ", vectors_per_class_.size(), " entries for ", classes_,
                               " classes");
      }
      if (svm_.support_vectors.empty() || svm_.support_vectors.size() % vectors_ != 0) {
        return InvalidArgument(where_, ": ", svm_.support_vectors.size(), " support vector values for ", vectors_,
                               " vectors");
      }
      features_ = static_cast<int64_t>(svm_.support_vectors.size()) / vectors_;
      svm_.PrepareVectors(vectors_, features_);
      const int64_t pairs = classes_ * (classes_ - 1) / 2;
      if (static_cast<int64_t>(svm_.coefficients.size()) != (classes_ - 1) * vectors_ ||
          static_cast<int64_t>(svm_.rho.size()) < pairs) {
        return InvalidArgument(where_, ": coefficients/rho do not fit ", classes_, " classes and ", vectors_,
                               " vectors");
      }
      if (!prob_a_.empty() && (static_cast<int64_t>(prob_a_.size()) < pairs || prob_b_.size() < prob_a_.size())) {
        return InvalidArgument(where_, ": prob_a/prob_b need one entry per class pair");
      }
    } else {
      if (svm_.coefficients.size() % classes_ != 0) {
        return InvalidArgument(where_, ": ", svm_.coefficients.size(), " coefficients for ", classes_, " classes");
      }
      features_ = static_cast<int64_t>(svm_.coefficients.size()) / classes_;
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    if (features != features_) return InvalidArgument(where_, ": X has ", features, " features, the model ", features_);
    const bool svc = vectors_ > 0;
    const bool proba = svc && !prob_a_.empty();
    const int64_t raw = svc ? classes_ * (classes_ - 1) / 2 : classes_;
    const int64_t scored = proba ? classes_ : raw;
    // Output width: a single score becomes two ([-s, s] or [1 - s, s]) when rho has one entry.
    const bool second = svm_.rho.size() == 1 && classes_ == 2 && scored == 1 && svm_.post != PostTransform::kProbit;
    const int64_t width = second ? 2 : scored;
    const bool strings = !string_labels_.empty();
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, strings ? DataType::kString : DataType::kInt64, Shape{rows}));
    OL_ASSIGN_OR_RETURN(Tensor * z, ctx.AllocateOutput(1, DataType::kFloat, Shape{rows, width}));
    auto emit = [&](int64_t r, double* scores, const double* votes) {
      const int64_t label = Finish(scores, votes, svc, proba, scored, second);
      for (int64_t c = 0; c < width; ++c) z->data<float>()[r * width + c] = static_cast<float>(scores[c]);
      if (strings) {
        y->data<std::string>()[r] = string_labels_[std::min<int64_t>(label, string_labels_.size() - 1)];
      } else {
        y->data<int64_t>()[r] =
            int_labels_.empty() ? label : int_labels_[std::min<int64_t>(label, int_labels_.size() - 1)];
      }
    };
    const size_t score_count = static_cast<size_t>(std::max<int64_t>(raw, classes_) + 2);
    if (svc) {
      return svm_.ForKernelBlocks(ctx, "SVMClassifierRows", *x, rows, vectors_, features_, where_,
                                  [&](int64_t begin, int64_t n, const float* kernels) -> Status {
                                    std::vector<double> scores(score_count), votes(static_cast<size_t>(classes_)),
                                        pairs;
                                    for (int64_t r = 0; r < n; ++r) {
                                      RowScores(nullptr, kernels + r * vectors_, scores.data(), votes.data(), &pairs);
                                      emit(begin + r, scores.data(), votes.data());
                                    }
                                    return Status::Ok();
                                  });
    }
    return svm_.parallel.Run(ctx.parallel(), "SVMClassifierRows", rows, std::max<int64_t>(classes_ * features, 1),
                             [&](int64_t begin, int64_t end) -> Status {
                               std::vector<double> row(static_cast<size_t>(features));
                               std::vector<double> scores(score_count), votes(static_cast<size_t>(classes_)), pairs;
                               for (int64_t r = begin; r < end; ++r) {
                                 OL_RETURN_IF_ERROR(ReadRowsAsDouble(*x, r, r + 1, features, where_, row.data()));
                                 RowScores(row.data(), nullptr, scores.data(), votes.data(), &pairs);
                                 emit(r, scores.data(), votes.data());
                               }
                               return Status::Ok();
                             });
  }

 private:
  // Raw scores of one row (pairwise decision values from its kernel values, or per-class
  // linear scores from the row itself when there are no support vectors), the votes, and
  // with Platt scaling the class probabilities in scores[0..classes).
  void RowScores(const double* row, const float* kernels, double* scores, double* votes,
                 std::vector<double>* pairs) const {
    std::fill(votes, votes + classes_, 0.0);
    if (vectors_ == 0) {
      for (int64_t c = 0; c < classes_; ++c) {
        scores[c] = svm_.rho[0] + SvmCommon::LinearDot(row, svm_.coefficients.data() + c * features_, features_);
      }
      return;
    }
    int64_t e = 0;
    for (int64_t i = 0; i < classes_; ++i) {
      for (int64_t j = i + 1; j < classes_; ++j, ++e) {
        const double* ci = svm_.coefficients.data() + (j - 1) * vectors_;
        const double* cj = svm_.coefficients.data() + i * vectors_;
        const double s1 = DotCoefficients(ci + starts_[i], kernels + starts_[i], vectors_per_class_[i]);
        const double s2 = DotCoefficients(cj + starts_[j], kernels + starts_[j], vectors_per_class_[j]);
        const double s = svm_.rho[e] + s1 + s2;
        scores[e] = s;
        votes[s > 0 ? i : j] += 1;
      }
    }
    if (prob_a_.empty()) return;
    pairs->assign(static_cast<size_t>(classes_ * classes_), 0.0);
    e = 0;
    for (int64_t i = 0; i < classes_; ++i) {
      for (int64_t j = i + 1; j < classes_; ++j, ++e) {
        const double v1 = 1.0 - Logistic(scores[e] * prob_a_[e] + prob_b_[e]);
        const double v2 = std::min(std::max(v1, 1.0e-7), 1 - 1.0e-7);
        (*pairs)[i * classes_ + j] = v2;
        (*pairs)[j * classes_ + i] = 1 - v2;
      }
    }
    MulticlassProbability(classes_, *pairs, scores);
  }

  // The label index, with scores turned into the output row.
  int64_t Finish(double* scores, const double* votes, bool svc, bool proba, int64_t scored, bool second) const {
    int64_t max_class;
    double max_weight;
    if (svc) {
      max_class = ArgMax(votes, classes_);
      max_weight = votes[max_class];
    } else {
      max_class = ArgMax(scores, scored);
      max_weight = scores[max_class];
    }
    int64_t label = max_class;
    int add_second = -1;
    if (svm_.rho.size() == 1) {
      if (classes_ == 2) {
        add_second = 2;
        if (!proba && all_positive_ && max_weight >= 0.5) label = 1;
      } else {
        label = max_weight > 0 ? 1 : 0;
      }
    }
    if (scored >= 2) {
      ApplyPostTransform(svm_.post, scores, scored);
    } else if (svm_.post == PostTransform::kProbit) {
      scores[0] = Probit(scores[0]);
    } else if (second) {
      const double s = scores[0];
      if (add_second == 0 || add_second == 1) {
        scores[0] = 1 - s;
        scores[1] = s;
      } else if (add_second >= 2) {
        scores[0] = -s;
        scores[1] = s;
        if (svm_.post == PostTransform::kLogistic) {
          scores[0] = Logistic(-s);
          scores[1] = Logistic(s);
        } else {
          ApplyPostTransform(svm_.post, scores, 2);
        }
      } else {
        scores[0] = s;  // a single score with no second class: the output keeps width 2 = s, s
        scores[1] = s;
      }
    }
    return label;
  }

  std::string where_;
  SvmCommon svm_;
  std::vector<std::string> string_labels_;
  std::vector<int64_t> int_labels_;
  int64_t classes_ = 1;
  std::vector<int64_t> vectors_per_class_, starts_;
  int64_t vectors_ = 0, features_ = 0;
  std::vector<double> prob_a_, prob_b_;
  bool all_positive_ = false;
};

class SvmRegressorKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_RETURN_IF_ERROR(svm_.Read(info));
    OL_ASSIGN_OR_RETURN(supports_, info.GetInt("n_supports", 0));
    OL_ASSIGN_OR_RETURN(one_class_, info.GetInt("one_class", 0));
    if (svm_.rho.empty()) return InvalidArgument(where_, ": rho is required");
    if (supports_ > 0) {
      if (svm_.support_vectors.size() % supports_ != 0 || static_cast<int64_t>(svm_.coefficients.size()) < supports_) {
        return InvalidArgument(where_, ": support_vectors/coefficients do not fit n_supports = ", supports_);
      }
      features_ = static_cast<int64_t>(svm_.support_vectors.size()) / supports_;
      svm_.PrepareVectors(supports_, features_);
    } else {
      features_ = static_cast<int64_t>(svm_.coefficients.size());
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    int64_t rows = 0, features = 0;
    OL_RETURN_IF_ERROR(RowsAndFeatures(*x, where_, &rows, &features));
    if (features != features_) return InvalidArgument(where_, ": X has ", features, " features, the model ", features_);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape{rows, 1}));
    float* out = y->data<float>();
    auto finish = [&](int64_t r, double s) {
      s += svm_.rho[0];
      if (one_class_ != 0) s = s > 0 ? 1.0 : -1.0;
      ApplyPostTransform(svm_.post, &s, 1);
      out[r] = static_cast<float>(s);
    };
    if (supports_ > 0) {
      return svm_.ForKernelBlocks(
          ctx, "SVMRegressorRows", *x, rows, supports_, features_, where_,
          [&](int64_t begin, int64_t n, const float* kernels) -> Status {
            for (int64_t r = 0; r < n; ++r) {
              finish(begin + r, DotCoefficients(svm_.coefficients.data(), kernels + r * supports_, supports_));
            }
            return Status::Ok();
          });
    }
    return svm_.parallel.Run(ctx.parallel(), "SVMRegressorRows", rows, std::max<int64_t>(features, 1),
                             [&](int64_t begin, int64_t end) -> Status {
                               std::vector<double> row(static_cast<size_t>(features));
                               for (int64_t r = begin; r < end; ++r) {
                                 OL_RETURN_IF_ERROR(ReadRowsAsDouble(*x, r, r + 1, features, where_, row.data()));
                                 finish(r, SvmCommon::LinearDot(row.data(), svm_.coefficients.data(), features_));
                               }
                               return Status::Ok();
                             });
  }

 private:
  std::string where_;
  SvmCommon svm_;
  int64_t supports_ = 0, one_class_ = 0, features_ = 0;
};

std::vector<ParamSpec> SvmTuning() {
  return {
      MinimumElementsParam(
          kMinimumElements,
          "kernel evaluations x features (rows x support vectors x features) below which rows stay serial"),
      ParamSpec::Int64(param::kBlockRows, kBlockRows, 1, int64_t{1} << 30,
                       "rows per block are a multiple of this (the ParallelFor grain)"),
      ParamSpec::Int64("algorithm.kernel_rows", kKernelRows, 1, int64_t{1} << 30,
                       "rows whose kernel values are one GEMM (a cache block: changes no result)"),
  };
}

OL_REGISTER_KERNELS(ml_svm) {
  const std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};
  Kernel("SVMClassifier")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(SvmTuning())
      .Factory(MakeKernel<SvmClassifierKernel>())
      .AddTo(registry);
  Kernel("SVMRegressor")
      .Domain("ai.onnx.ml")
      .Types(types)
      .Tuning(SvmTuning())
      .Factory(MakeKernel<SvmRegressorKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
