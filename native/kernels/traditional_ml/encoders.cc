// The ai.onnx.ml feature encoders and map ops (opset 1): ZipMap, CastMap, DictVectorizer,
// FeatureVectorizer, CategoryMapper, Imputer, OneHotEncoder and LabelEncoder-1 (family
// ml_encoders). Every output element (or row) depends on its own input element (or row)
// or on one map entry, so the work splits through ParallelFor above
// parallel.minimum_elements, each output written by one participant:
// - ZipMap allocates every row's values tensor first (workers may not call the session
//   allocator), then copies the rows in parallel;
// - CastMap and DictVectorizer find the entry of each output column first (serially, so a
//   repeated key resolves the same way every time: the last wins), then fill columns.
// Maps arrive as Value::Map (keys and values tensors, in the order the caller gave them);
// ONNX Runtime's maps are ordered by key, so CastMap's DENSE form sorts first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/type_dispatch.h"
#include "native/kernels/traditional_ml/ml_common.h"
#include "native/registry/kernel.h"
#include "native/tuning/schema.h"

namespace onnx_light {
namespace ml {
namespace {

constexpr char kDomain[] = "ai.onnx.ml";
constexpr int64_t kMinimumElements = 32768;  // PyTorch's GRAIN_SIZE

// ZipMap and DictVectorizer split only their cheap part: copying a row's 4-byte values
// (ZipMap, after a serial session allocation and map per row, ~140 ns a row in the kernel
// report's crossover cell) or gathering one value per column (DictVectorizer, after a
// serial hash look-up per key). That part costs ~0.25-2 ns an element, so two participants
// save at most ~0.1-1 ns an element while a region costs ~25 us (ONNX Runtime's 100k
// cycles; //benchmarks:parallel_for_overhead measures ours): at GRAIN_SIZE the region
// costs more than it saves (the crossover cells lost 5-8%). Their minimum is where the
// saving is about twenty regions' cost: 2^22 copied elements (~0.5 ms saved) for ZipMap,
// 2^20 gathered columns (random reads, ~0.5-1 ms saved) for DictVectorizer. Even then the
// serial part bounds the node's gain to a few percent; below, nothing is split.
constexpr int64_t kZipMapMinimumElements = int64_t{1} << 22;
constexpr int64_t kDictVectorizerMinimumColumns = int64_t{1} << 20;

// The tuning values every encoder reads, and its parallel loop over `total` units.
class EncoderKernel : public OpKernel {
 protected:
  Status InitTuning(const KernelInfo& info) {
    where_ = info.Where();
    OL_RETURN_IF_ERROR(InitRowParallel(info, &parallel_));
    // An encoder's block counts its own units (rows, columns or elements), whatever their cost.
    parallel_.block_unit = ThresholdedParallel::BlockUnit::kUnits;
    return Status::Ok();
  }

  // fn(begin, end) over [0, total), each unit costing `cost` elements.
  template <typename Fn>
  Status Split(const KernelContext& ctx, const char* label, int64_t total, int64_t cost, Fn&& fn) const {
    return parallel_.Run(ctx.parallel(), label, total, std::max<int64_t>(cost, 1), std::forward<Fn>(fn));
  }

  std::string where_;
  ThresholdedParallel parallel_;
};

template <typename T>
StatusOr<Tensor> VectorTensor(const std::vector<T>& values, Allocator* allocator) {
  OL_ASSIGN_OR_RETURN(Tensor t,
                      Tensor::Allocate(kDataTypeOf<T>, Shape{static_cast<int64_t>(values.size())}, allocator));
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

StatusOr<const Value*> RequiredMap(const KernelContext& ctx, const std::string& where) {
  const Value* v = ctx.input_value(0);
  if (v == nullptr || !v->is_map()) {
    return InvalidArgument(where, ": input 0 must be a map, got ", v == nullptr ? "nothing" : v->Describe());
  }
  if (v->map_keys().num_elements() != v->map_values().num_elements()) {
    return InvalidArgument(where, ": the map has ", v->map_keys().num_elements(), " keys and ",
                           v->map_values().num_elements(), " values");
  }
  return v;
}

// Element i of a numeric or string tensor as double (strings parsed; unparsable = NaN).
double NumberAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat:
      return t.data<float>()[i];
    case DataType::kDouble:
      return t.data<double>()[i];
    case DataType::kInt64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kString: {
      const std::string& s = t.data<std::string>()[i];
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      return end == s.c_str() ? NAN : d;
    }
    default:
      return NAN;
  }
}

std::string FloatText(double v) { return std::to_string(static_cast<float>(v)); }

// ZipMap: each row of X [N, C] becomes a map {classlabel_c: X[r, c]}; the output is the
// sequence of those maps (scikit-learn converters' default classifier probabilities).
class ZipMapKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    if (info.HasAttribute("classlabels_strings")) {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> labels, info.GetStrings("classlabels_strings"));
      OL_ASSIGN_OR_RETURN(keys_, VectorTensor(labels, Allocator::Default()));
    } else {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> labels, info.GetInts("classlabels_int64s"));
      OL_ASSIGN_OR_RETURN(keys_, VectorTensor(labels, Allocator::Default()));
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int64_t classes = keys_.num_elements();
    const Shape& s = x->shape();
    if (x->dtype() != DataType::kFloat || s.rank() < 1 || s.rank() > 2 || s.dim(s.rank() - 1) != classes) {
      return InvalidArgument(where_, ": X must be float [N, ", classes, "] (one column per class label), got ",
                             x->TypeAndShape());
    }
    const int64_t rows = s.rank() == 1 ? 1 : s.dim(0);
    std::vector<Tensor> values(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {  // the session allocator, before any worker runs
      OL_ASSIGN_OR_RETURN(values[r], Tensor::Allocate(DataType::kFloat, Shape{classes}, ctx.allocator()));
    }
    OL_RETURN_IF_ERROR(Split(ctx, "ZipMapRows", rows, classes, [&](int64_t begin, int64_t end) -> Status {
      for (int64_t r = begin; r < end; ++r) {
        std::copy(x->data<float>() + r * classes, x->data<float>() + (r + 1) * classes, values[r].data<float>());
      }
      return Status::Ok();
    }));
    std::vector<Value> maps;
    maps.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) maps.push_back(Value::Map(keys_, std::move(values[r])));  // keys shared
    ctx.RecordCopy(rows);
    return ctx.SetOutput(0, Value::Sequence(std::move(maps), keys_.dtype()));
  }

 private:
  Tensor keys_;
};

// CastMap: map(int64, string|float) -> [1, K] tensor of float, string or int64; DENSE
// lists the values in key order, SPARSE puts value v of key k at column k < max_map.
class CastMapKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    OL_ASSIGN_OR_RETURN(std::string cast_to, info.GetString("cast_to", "TO_FLOAT"));
    OL_ASSIGN_OR_RETURN(std::string form, info.GetString("map_form", "DENSE"));
    OL_ASSIGN_OR_RETURN(max_map_, info.GetInt("max_map", 1));
    if (cast_to == "TO_FLOAT")
      to_ = DataType::kFloat;
    else if (cast_to == "TO_STRING")
      to_ = DataType::kString;
    else if (cast_to == "TO_INT64")
      to_ = DataType::kInt64;
    else
      return InvalidArgument(where_, ": unknown cast_to '", cast_to, "'");
    if (form != "DENSE" && form != "SPARSE") return InvalidArgument(where_, ": unknown map_form '", form, "'");
    sparse_ = form == "SPARSE";
    if (sparse_ && max_map_ < 1) return InvalidArgument(where_, ": max_map must be >= 1");
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* map, RequiredMap(ctx, where_));
    const Tensor& keys = map->map_keys();
    const Tensor& values = map->map_values();
    if (keys.dtype() != DataType::kInt64)
      return InvalidArgument(where_, ": map keys must be int64, got ", map->Describe());
    const int64_t n = keys.num_elements();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return keys.data<int64_t>()[a] < keys.data<int64_t>()[b]; });
    const int64_t width = sparse_ ? max_map_ : n;
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, to_, Shape{1, width}));
    // The entry of each output column (-1: none; a repeated key: the last in key order).
    std::vector<int64_t> entry(static_cast<size_t>(width), -1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = keys.data<int64_t>()[order[i]];
      const int64_t c = sparse_ ? (k >= 0 && k < max_map_ ? k : -1) : i;
      if (c >= 0) entry[c] = order[i];
    }
    return Split(ctx, "CastMapColumns", width, 1, [&](int64_t begin, int64_t end) -> Status {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t i = entry[c];
        if (to_ == DataType::kString) {
          y->data<std::string>()[c] = i < 0                                 ? std::string("0")
                                      : values.dtype() == DataType::kString ? values.data<std::string>()[i]
                                                                            : FloatText(NumberAt(values, i));
        } else if (to_ == DataType::kFloat) {
          y->data<float>()[c] = i < 0 ? 0.0f : static_cast<float>(NumberAt(values, i));
        } else {
          y->data<int64_t>()[c] = i < 0 ? 0 : static_cast<int64_t>(NumberAt(values, i));
        }
      }
      return Status::Ok();
    });
  }

 private:
  DataType to_ = DataType::kFloat;
  bool sparse_ = false;
  int64_t max_map_ = 1;
};

// DictVectorizer: map -> [1, V] tensor of the map's value type, column j holding the value
// of vocabulary word j (0 / "" when absent).
class DictVectorizerKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    if (info.HasAttribute("string_vocabulary")) {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> words, info.GetStrings("string_vocabulary"));
      for (size_t i = 0; i < words.size(); ++i) string_index_.emplace(words[i], static_cast<int64_t>(i));
      size_ = static_cast<int64_t>(words.size());
    } else {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> words, info.GetInts("int64_vocabulary"));
      for (size_t i = 0; i < words.size(); ++i) int_index_.emplace(words[i], static_cast<int64_t>(i));
      size_ = static_cast<int64_t>(words.size());
      int_keys_ = true;
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Value* map, RequiredMap(ctx, where_));
    const Tensor& keys = map->map_keys();
    const Tensor& values = map->map_values();
    if (keys.dtype() != (int_keys_ ? DataType::kInt64 : DataType::kString)) {
      return InvalidArgument(where_, ": map keys must be ", int_keys_ ? "int64" : "string", ", got ", map->Describe());
    }
    return DispatchType(
        TypeList<float, double, int64_t, std::string>{}, values.dtype(), where_, [&](auto tag) -> Status {
          using T = typename decltype(tag)::type;
          OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, values.dtype(), Shape{1, size_}));
          std::vector<int64_t> entry(static_cast<size_t>(size_), -1);  // a repeated key: the last wins
          for (int64_t i = 0; i < keys.num_elements(); ++i) {
            int64_t column = -1;
            if (int_keys_) {
              auto it = int_index_.find(keys.data<int64_t>()[i]);
              if (it != int_index_.end()) column = it->second;
            } else {
              auto it = string_index_.find(keys.data<std::string>()[i]);
              if (it != string_index_.end()) column = it->second;
            }
            if (column >= 0) entry[column] = i;
          }
          return Split(ctx, "DictVectorizerColumns", size_, 1, [&](int64_t begin, int64_t end) -> Status {
            for (int64_t c = begin; c < end; ++c) y->data<T>()[c] = entry[c] < 0 ? T{} : values.data<T>()[entry[c]];
            return Status::Ok();
          });
        });
  }

 private:
  bool int_keys_ = false;
  int64_t size_ = 0;
  std::unordered_map<std::string, int64_t> string_index_;
  std::unordered_map<int64_t, int64_t> int_index_;
};

// FeatureVectorizer: inputs [N, C_i] (or [C_i]) concatenated as float columns, input i
// taking exactly inputdimensions[i] columns (cut or zero-padded).
class FeatureVectorizerKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    OL_ASSIGN_OR_RETURN(dims_, info.GetInts("inputdimensions", {}));
    for (int64_t d : dims_) {
      if (d < 0) return InvalidArgument(where_, ": inputdimensions must be >= 0");
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    if (ctx.num_inputs() != static_cast<int>(dims_.size())) {
      return InvalidArgument(where_, ": ", ctx.num_inputs(), " inputs for ", dims_.size(), " inputdimensions");
    }
    int64_t rows = -1;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(i));
      const int64_t r =
          x->shape().rank() <= 1 ? 1 : x->num_elements() / std::max<int64_t>(x->shape().dim(x->shape().rank() - 1), 1);
      if (rows >= 0 && r != rows) return InvalidArgument(where_, ": inputs disagree on the row count");
      rows = r;
    }
    if (rows < 0) rows = 0;
    const int64_t width = std::accumulate(dims_.begin(), dims_.end(), int64_t{0});
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape{rows, width}));
    float* out = y->data<float>();
    return Split(ctx, "FeatureVectorizerRows", rows, width, [&](int64_t begin, int64_t end) -> Status {
      std::fill(out + begin * width, out + end * width, 0.0f);
      int64_t offset = 0;
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor* x = ctx.input(i);
        const int64_t cols = x->shape().rank() == 0 ? 1 : x->shape().dim(x->shape().rank() - 1);
        const int64_t take = std::min(cols, dims_[i]);
        const Status copied =
            DispatchType(TypeList<float, double, int64_t, int32_t>{}, x->dtype(), where_, [&](auto tag) -> Status {
              using T = typename decltype(tag)::type;
              for (int64_t r = begin; r < end; ++r) {
                for (int64_t c = 0; c < take; ++c)
                  out[r * width + offset + c] = static_cast<float>(x->data<T>()[r * cols + c]);
              }
              return Status::Ok();
            });
        OL_RETURN_IF_ERROR(copied);
        offset += dims_[i];
      }
      return Status::Ok();
    });
  }

 private:
  std::vector<int64_t> dims_;
};

// CategoryMapper (string <-> int64 through two parallel lists) and LabelEncoder-1 (string
// -> its index in classes_strings, int64 -> the string at that index).
class StringIntMapKernel : public EncoderKernel {
 public:
  explicit StringIntMapKernel(bool label_encoder) : label_encoder_(label_encoder) {}

  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    OL_ASSIGN_OR_RETURN(default_int_, info.GetInt("default_int64", -1));
    OL_ASSIGN_OR_RETURN(default_string_, info.GetString("default_string", "_Unused"));
    if (label_encoder_) {
      OL_ASSIGN_OR_RETURN(strings_, info.GetStrings("classes_strings"));
      ints_.resize(strings_.size());
      std::iota(ints_.begin(), ints_.end(), int64_t{0});
    } else {
      OL_ASSIGN_OR_RETURN(strings_, info.GetStrings("cats_strings"));
      OL_ASSIGN_OR_RETURN(ints_, info.GetInts("cats_int64s"));
      if (strings_.size() != ints_.size()) {
        return InvalidArgument(where_, ": cats_strings and cats_int64s differ in length");
      }
    }
    for (size_t i = 0; i < strings_.size(); ++i) {
      to_int_.emplace(strings_[i], ints_[i]);
      to_string_.emplace(ints_[i], strings_[i]);
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int64_t n = x->num_elements();
    if (x->dtype() == DataType::kString) {
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, x->shape()));
      return Split(ctx, "StringToInt", n, 1, [&](int64_t begin, int64_t end) -> Status {
        for (int64_t i = begin; i < end; ++i) {
          auto it = to_int_.find(x->data<std::string>()[i]);
          y->data<int64_t>()[i] = it == to_int_.end() ? default_int_ : it->second;
        }
        return Status::Ok();
      });
    }
    if (x->dtype() != DataType::kInt64) {
      return InvalidArgument(where_, ": X must be string or int64, got ", x->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kString, x->shape()));
    return Split(ctx, "IntToString", n, 1, [&](int64_t begin, int64_t end) -> Status {
      for (int64_t i = begin; i < end; ++i) {
        auto it = to_string_.find(x->data<int64_t>()[i]);
        y->data<std::string>()[i] = it == to_string_.end() ? default_string_ : it->second;
      }
      return Status::Ok();
    });
  }

 private:
  bool label_encoder_;
  int64_t default_int_ = -1;
  std::string default_string_;
  std::vector<std::string> strings_;
  std::vector<int64_t> ints_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_string_;
};

// Imputer: along the last axis, elements equal to the replaced value (NaN matches NaN)
// become the imputed value of their column (or the single imputed value).
class ImputerKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    OL_ASSIGN_OR_RETURN(std::vector<float> floats, info.GetFloats("imputed_value_floats", {}));
    OL_ASSIGN_OR_RETURN(ints_, info.GetInts("imputed_value_int64s", {}));
    OL_ASSIGN_OR_RETURN(replaced_float_, info.GetFloat("replaced_value_float", 0.0f));
    OL_ASSIGN_OR_RETURN(replaced_int_, info.GetInt("replaced_value_int64", 0));
    floats_.assign(floats.begin(), floats.end());
    if (floats_.empty() && ints_.empty()) return InvalidArgument(where_, ": needs imputed_value_floats or _int64s");
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const int64_t cols = x->shape().rank() == 0 ? 1 : x->shape().dim(x->shape().rank() - 1);
    return DispatchType(TypeList<float, double, int64_t, int32_t>{}, x->dtype(), where_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      constexpr bool kFloating = std::is_floating_point_v<T>;
      const size_t count = kFloating ? floats_.size() : ints_.size();
      if (count == 0) {
        return InvalidArgument(where_, ": X is ", DataTypeName(x->dtype()), " but imputed_value_",
                               kFloating ? "floats" : "int64s", " is empty");
      }
      if (count != 1 && static_cast<int64_t>(count) != cols) {
        return InvalidArgument(where_, ": ", count, " imputed values for ", cols, " columns");
      }
      OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
      return Split(ctx, "ImputerElements", x->num_elements(), 1, [&](int64_t begin, int64_t end) -> Status {
        for (int64_t i = begin; i < end; ++i) {
          const T v = x->data<T>()[i];
          const size_t c = count == 1 ? 0 : static_cast<size_t>(i % cols);
          bool replace;
          T with;
          if constexpr (kFloating) {
            replace = std::isnan(replaced_float_) ? std::isnan(v) : static_cast<double>(v) == replaced_float_;
            with = static_cast<T>(floats_[c]);
          } else {
            replace = static_cast<int64_t>(v) == replaced_int_;
            with = static_cast<T>(ints_[c]);
          }
          y->data<T>()[i] = replace ? with : v;
        }
        return Status::Ok();
      });
    });
  }

 private:
  std::vector<double> floats_;
  std::vector<int64_t> ints_;
  double replaced_float_ = 0;
  int64_t replaced_int_ = 0;
};

// OneHotEncoder: X (any shape) -> float X.shape + [K], a 1 at the category's index; an
// unknown category is all zeros, or an error when zeros = 0.
class OneHotEncoderKernel : public EncoderKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(InitTuning(info));
    OL_ASSIGN_OR_RETURN(zeros_, info.GetInt("zeros", 1));
    if (info.HasAttribute("cats_strings")) {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> cats, info.GetStrings("cats_strings"));
      for (size_t i = 0; i < cats.size(); ++i) strings_.emplace(cats[i], static_cast<int64_t>(i));
      size_ = static_cast<int64_t>(cats.size());
    } else {
      OL_ASSIGN_OR_RETURN(std::vector<int64_t> cats, info.GetInts("cats_int64s"));
      for (size_t i = 0; i < cats.size(); ++i) ints_.emplace(cats[i], static_cast<int64_t>(i));
      size_ = static_cast<int64_t>(cats.size());
    }
    if (size_ == 0) return InvalidArgument(where_, ": needs cats_strings or cats_int64s");
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    std::vector<int64_t> dims = x->shape().dims();
    dims.push_back(size_);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape(dims)));
    if (x->dtype() != DataType::kString && x->dtype() != DataType::kInt64 && x->dtype() != DataType::kInt32 &&
        x->dtype() != DataType::kFloat && x->dtype() != DataType::kDouble) {
      return InvalidArgument(where_, ": X must be string, int64, int32, float or double, got ", x->TypeAndShape());
    }
    float* out = y->data<float>();
    return Split(ctx, "OneHotElements", x->num_elements(), size_,
                 [&](int64_t begin, int64_t end) -> Status { return Encode(*x, begin, end, out); });
  }

 private:
  Status Encode(const Tensor& in, int64_t begin, int64_t end, float* out) const {
    const Tensor* x = &in;
    std::fill(out + begin * size_, out + end * size_, 0.0f);
    for (int64_t i = begin; i < end; ++i) {
      int64_t slot = -1;
      if (x->dtype() == DataType::kString) {
        if (!strings_.empty()) {
          auto it = strings_.find(x->data<std::string>()[i]);
          if (it != strings_.end()) slot = it->second;
        }
      } else {
        const double v = NumberAt(*x, i);
        if (!ints_.empty() && !std::isnan(v)) {
          auto it = ints_.find(static_cast<int64_t>(v));
          if (it != ints_.end()) slot = it->second;
        }
      }
      if (slot >= 0) {
        out[i * size_ + slot] = 1.0f;
      } else if (zeros_ == 0) {
        return InvalidArgument(where_, ": element ", i, " is not a known category (zeros = 0)");
      }
    }
    return Status::Ok();
  }

  int64_t zeros_ = 1;
  int64_t size_ = 0;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
};

// The encoders' tuning schema: blocks of `grain` `unit`s.
std::vector<ParamSpec> EncoderTuning(int64_t grain, const char* unit, int64_t minimum = kMinimumElements) {
  return {
      MinimumElementsParam(minimum, "output elements below which the kernel runs serially"),
      ParamSpec::Int64(std::string(unit) == "rows" ? param::kBlockRows : param::kBlockElements, grain, 1,
                       int64_t{1} << 30,
                       std::string(unit) + " per block are a multiple of this (the ParallelFor grain)"),
  };
}

template <bool kLabelEncoder>
KernelFactory StringIntMap() {
  return [](const KernelInfo& info) -> StatusOr<std::unique_ptr<OpKernel>> {
    auto kernel = std::make_unique<StringIntMapKernel>(kLabelEncoder);
    OL_RETURN_IF_ERROR(kernel->Init(info));
    return std::unique_ptr<OpKernel>(std::move(kernel));
  };
}

OL_REGISTER_KERNELS(ml_encoders) {
  const std::vector<DataType> numeric = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};
  const std::vector<DataType> string_int = {DataType::kString, DataType::kInt64};
  Kernel("ZipMap")
      .Domain(kDomain)
      .Types({DataType::kFloat})
      .Tuning(EncoderTuning(64, "rows", kZipMapMinimumElements))
      .Factory(MakeKernel<ZipMapKernel>())
      .AddTo(registry);
  Kernel("CastMap")
      .Domain(kDomain)
      .Types({DataType::kInt64})
      .Tuning(EncoderTuning(1024, "columns"))
      .Factory(MakeKernel<CastMapKernel>())
      .AddTo(registry);
  Kernel("DictVectorizer")
      .Domain(kDomain)
      .Types(string_int)
      .Tuning(EncoderTuning(1024, "columns", kDictVectorizerMinimumColumns))
      .Factory(MakeKernel<DictVectorizerKernel>())
      .AddTo(registry);
  Kernel("FeatureVectorizer")
      .Domain(kDomain)
      .Types(numeric)
      .Tuning(EncoderTuning(64, "rows"))
      .Factory(MakeKernel<FeatureVectorizerKernel>())
      .AddTo(registry);
  Kernel("CategoryMapper")
      .Domain(kDomain)
      .Types(string_int)
      .Tuning(EncoderTuning(1024, "elements"))
      .Factory(StringIntMap<false>())
      .AddTo(registry);
  Kernel("LabelEncoder")
      .Domain(kDomain)
      .Versions(1, 1)
      .Types(string_int)
      .Tuning(EncoderTuning(1024, "elements"))
      .Factory(StringIntMap<true>())
      .AddTo(registry);
  Kernel("Imputer")
      .Domain(kDomain)
      .Types(numeric)
      .Tuning(EncoderTuning(4096, "elements"))
      .Factory(MakeKernel<ImputerKernel>())
      .AddTo(registry);
  Kernel("OneHotEncoder")
      .Domain(kDomain)
      .Types({DataType::kString, DataType::kInt64, DataType::kInt32, DataType::kFloat, DataType::kDouble})
      .Tuning(EncoderTuning(1024, "elements"))
      .Factory(MakeKernel<OneHotEncoderKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace ml
}  // namespace onnx_light
