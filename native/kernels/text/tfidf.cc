// TfIdfVectorizer (opset 9): counts the pool's n-grams (with skips) in each row of X and
// weights them (TF, IDF or TFIDF). Tiny per-row scans, serial (family text).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "native/kernels/text/text_args.h"

namespace onnx_light {
namespace text {
namespace {

enum class Weighting { kTF, kIDF, kTFIDF };

class TfIdfVectorizerKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(min_gram_, info.GetInt("min_gram_length"));
    OL_ASSIGN_OR_RETURN(max_gram_, info.GetInt("max_gram_length"));
    OL_ASSIGN_OR_RETURN(max_skip_, info.GetInt("max_skip_count"));
    if (min_gram_ < 1 || max_gram_ < min_gram_ || max_skip_ < 0) {
      return InvalidArgument(where_, ": need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got ",
                             min_gram_, ", ", max_gram_, ", ", max_skip_);
    }
    OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("mode"));
    if (mode == "TF") {
      weighting_ = Weighting::kTF;
    } else if (mode == "IDF") {
      weighting_ = Weighting::kIDF;
    } else if (mode == "TFIDF") {
      weighting_ = Weighting::kTFIDF;
    } else {
      return InvalidArgument(where_, ": mode must be TF, IDF or TFIDF, got \"", mode, "\"");
    }
    return BuildPool(info);
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    const Shape& shape = x->shape();
    if (shape.rank() != 1 && shape.rank() != 2) {
      return InvalidArgument(where_, ": X must be [C] or [N, C], got ", x->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, Tokens(*x));
    const int64_t rows = shape.rank() == 2 ? shape.dim(0) : 1;
    const int64_t columns = shape.dim(shape.rank() - 1);
    OL_ASSIGN_OR_RETURN(
        Tensor * y,
        ctx.AllocateOutput(0, DataType::kFloat, shape.rank() == 2 ? Shape{rows, output_size_} : Shape{output_size_}));
    std::fill(y->data<float>(), y->data<float>() + y->num_elements(), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      CountRow(tokens.data() + r * columns, columns, y->data<float>() + r * output_size_);
    return Status::Ok();
  }

 private:
  // Reads the pool: ngram_counts[k] is where the (k+1)-grams start in pool_int64s or
  // pool_strings, and the i-th pooled n-gram (in pool order) counts into output
  // ngram_indexes[i]. Strings become token ids so that every n-gram is an id sequence.
  Status BuildPool(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> starts, info.GetInts("ngram_counts"));
    OL_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, info.GetInts("ngram_indexes"));
    for (int64_t index : indexes) output_size_ = std::max(output_size_, index + 1);
    std::vector<int64_t> pool;
    if (info.HasAttribute("pool_strings")) {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> strings, info.GetStrings("pool_strings"));
      for (const std::string& s : strings) pool.push_back(string_ids_.emplace(s, string_ids_.size()).first->second);
    } else {
      OL_ASSIGN_OR_RETURN(pool, info.GetInts("pool_int64s"));
    }
    if (info.HasAttribute("weights")) {
      OL_ASSIGN_OR_RETURN(weights_, info.GetFloats("weights"));
    }
    size_t ngram = 0;
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t n = static_cast<int64_t>(k) + 1;
      const int64_t begin = starts[k];
      const int64_t end = k + 1 < starts.size() ? starts[k + 1] : static_cast<int64_t>(pool.size());
      if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
        return InvalidArgument(where_, ": ngram_counts ", k, " = ", begin, " does not delimit whole ", n,
                               "-grams of a pool of ", pool.size());
      }
      for (int64_t at = begin; at < end; at += n, ++ngram) {
        if (ngram >= indexes.size() || indexes[ngram] < 0) {
          return InvalidArgument(where_, ": ngram_indexes has no valid entry for pooled n-gram ", ngram);
        }
        if (!weights_.empty() && ngram >= weights_.size()) {
          return InvalidArgument(where_, ": weights has ", weights_.size(), " entries, fewer than the pool's n-grams");
        }
        slots_[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = {indexes[ngram], ngram};
      }
    }
    return Status::Ok();
  }

  // X as token ids; strings outside the pool get -1 (they match no n-gram).
  StatusOr<std::vector<int64_t>> Tokens(const Tensor& x) const {
    const int64_t n = x.num_elements();
    std::vector<int64_t> tokens(static_cast<size_t>(n));
    const bool strings = !string_ids_.empty();
    if (strings && x.dtype() == DataType::kString) {
      for (int64_t i = 0; i < n; ++i) {
        auto it = string_ids_.find(x.data<std::string>()[i]);
        tokens[i] = it == string_ids_.end() ? -1 : it->second;
      }
    } else if (!strings && x.dtype() == DataType::kInt64) {
      std::copy(x.data<int64_t>(), x.data<int64_t>() + n, tokens.begin());
    } else if (!strings && x.dtype() == DataType::kInt32) {
      std::copy(x.data<int32_t>(), x.data<int32_t>() + n, tokens.begin());
    } else {
      return InvalidArgument(where_, ": X ", x.TypeAndShape(), " does not match the pool type (",
                             strings ? "pool_strings" : "pool_int64s", ")");
    }
    return tokens;
  }

  // Every n-gram (min_gram..max_gram items, consecutive items skip+1 apart, skip up to
  // max_skip) starting at every position; a unigram counts once per position.
  void CountRow(const int64_t* row, int64_t columns, float* out) const {
    std::vector<float> counts(slots_.size() ? output_size_ : 0, 0.0f);
    std::vector<int64_t> gram;
    for (int64_t start = 0; start < columns; ++start) {
      for (int64_t skip = 0; skip <= max_skip_; ++skip) {
        for (int64_t n = min_gram_; n <= max_gram_; ++n) {
          if (n == 1 && skip > 0) continue;
          if (start + (n - 1) * (skip + 1) >= columns) break;
          gram.clear();
          for (int64_t j = 0; j < n; ++j) gram.push_back(row[start + j * (skip + 1)]);
          auto it = slots_.find(gram);
          if (it != slots_.end()) counts[it->second.output] += 1.0f;
        }
      }
    }
    for (const auto& [gram_items, slot] : slots_) {
      const float count = counts[slot.output];
      const float weight = weights_.empty() ? 1.0f : weights_[slot.ngram];
      switch (weighting_) {
        case Weighting::kTF:
          out[slot.output] = count;
          break;
        case Weighting::kIDF:
          out[slot.output] = count > 0 ? weight : 0.0f;
          break;
        case Weighting::kTFIDF:
          out[slot.output] = count * weight;
          break;
      }
    }
  }

  struct Slot {
    int64_t output;  // index into the output row
    size_t ngram;    // index into weights
  };

  std::string where_;
  int64_t min_gram_ = 1, max_gram_ = 1, max_skip_ = 0;
  Weighting weighting_ = Weighting::kTF;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::map<std::vector<int64_t>, Slot> slots_;
  std::vector<float> weights_;
  int64_t output_size_ = 0;
};

OL_REGISTER_KERNELS(text_tfidf) {
  KernelDef def;
  def.op = "TfIdfVectorizer";
  def.since_version = 9;
  def.family = OL_KERNEL_FAMILY;
  def.element_types = {DataType::kString, DataType::kInt32, DataType::kInt64};
  def.factory = MakeKernel<TfIdfVectorizerKernel>();
  registry.Add(std::move(def));
}

}  // namespace
}  // namespace text
}  // namespace onnx_light
