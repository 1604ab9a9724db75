// StringConcat, StringSplit, RegexFullMatch (opset 20) and StringNormalizer (opset 10):
// per-string work on tiny tensors, serial (family text: no ParallelFor).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <regex>
#include <string>
#include <unordered_set>
#include <vector>

#include "native/kernels/text/text_args.h"

namespace onnx_light {
namespace text {
namespace {

constexpr char kFamily[] = OL_KERNEL_FAMILY;

// Numpy broadcasting of two shapes: the output shape, or InvalidArgument.
StatusOr<Shape> BroadcastShape(const Shape& a, const Shape& b, const std::string& where) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a.dim(i - (rank - a.rank()));
    const int64_t db = i < rank - b.rank() ? 1 : b.dim(i - (rank - b.rank()));
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument(where, ": shapes ", a.ToString(), " and ", b.ToString(), " do not broadcast");
    }
    dims[i] = da == 1 ? db : da;
  }
  return Shape(std::move(dims));
}

// Offset into a tensor of `shape` of the output element at multi-index `index` (rank of
// the output), broadcasting size-1 and missing leading axes.
int64_t BroadcastOffset(const Shape& shape, const std::vector<int64_t>& index) {
  const int skip = static_cast<int>(index.size()) - shape.rank();
  int64_t offset = 0;
  for (int i = 0; i < shape.rank(); ++i) offset = offset * shape.dim(i) + (shape.dim(i) == 1 ? 0 : index[skip + i]);
  return offset;
}

class StringConcatKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, where_));
    OL_ASSIGN_OR_RETURN(const Tensor* y, StringInput(ctx, 1, where_));
    OL_ASSIGN_OR_RETURN(Shape shape, BroadcastShape(x->shape(), y->shape(), where_));
    OL_RETURN_IF_ERROR(shape.CheckedNumElements().status());
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kString, shape));
    std::vector<int64_t> index(shape.rank(), 0);
    const std::string* xs = x->data<std::string>();
    const std::string* ys = y->data<std::string>();
    std::string* zs = out->data<std::string>();
    for (int64_t i = 0; i < out->num_elements(); ++i) {
      zs[i] = xs[BroadcastOffset(x->shape(), index)] + ys[BroadcastOffset(y->shape(), index)];
      for (int axis = shape.rank() - 1; axis >= 0 && ++index[axis] == shape.dim(axis); --axis) index[axis] = 0;
    }
    return Status::Ok();
  }

 private:
  std::string where_;
};

// Splits like Python's str.split: on `delimiter` when it is non-empty (empty fields kept),
// else on runs of whitespace (leading/trailing whitespace dropped); at most `maxsplit`
// splits when maxsplit >= 0.
std::vector<std::string> Split(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (!delimiter.empty()) {
    size_t start = 0;
    for (size_t at; (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) &&
                    (at = s.find(delimiter, start)) != std::string::npos;
         start = at + delimiter.size()) {
      parts.push_back(s.substr(start, at - start));
    }
    parts.push_back(s.substr(start));
    return parts;
  }
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0;
  while (true) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = s.size();
      while (end > i && space(s[end - 1])) --end;
      parts.push_back(s.substr(i, end - i));
      break;
    }
    const size_t begin = i;
    while (i < s.size() && !space(s[i])) ++i;
    parts.push_back(s.substr(begin, i - begin));
  }
  return parts;
}

class StringSplitKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(delimiter_, info.GetString("delimiter", ""));
    OL_ASSIGN_OR_RETURN(maxsplit_, info.GetInt("maxsplit", -1));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, where_));
    const int64_t n = x->num_elements();
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(n));
    int64_t widest = 0;
    for (int64_t i = 0; i < n; ++i) {
      parts[i] = Split(x->data<std::string>()[i], delimiter_, maxsplit_);
      widest = std::max<int64_t>(widest, static_cast<int64_t>(parts[i].size()));
    }
    std::vector<int64_t> dims = x->shape().dims();
    dims.push_back(widest);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kString, Shape(dims)));
    for (int64_t i = 0; i < n; ++i) {
      std::copy(parts[i].begin(), parts[i].end(), y->data<std::string>() + i * widest);  // the rest stays ""
    }
    if (ctx.num_outputs() > 1) {
      OL_ASSIGN_OR_RETURN(Tensor * counts, ctx.AllocateOutput(1, DataType::kInt64, x->shape()));
      for (int64_t i = 0; i < n; ++i) counts->data<int64_t>()[i] = static_cast<int64_t>(parts[i].size());
    }
    return Status::Ok();
  }

 private:
  std::string where_;
  std::string delimiter_;
  int64_t maxsplit_ = -1;
};

// std::regex (ECMAScript grammar) stands in for RE2: the constructs the ONNX cases use
// (classes, \w \d \s \b, quantifiers, alternation, groups) mean the same in both.
class RegexFullMatchKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(std::string pattern, info.GetString("pattern"));
    try {
      regex_ = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument(where_, ": pattern \"", pattern, "\" is not a valid regular expression: ", e.what());
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, where_));
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kBool, x->shape()));
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      y->data<bool>()[i] = std::regex_match(x->data<std::string>()[i], regex_);
    }
    return Status::Ok();
  }

 private:
  std::string where_;
  std::regex regex_;
};

// ASCII case mapping: locale-specific rules (the `locale` attribute) are not applied.
std::string MapCase(std::string s, int (*map)(int)) {
  for (char& c : s) c = static_cast<char>(map(static_cast<unsigned char>(c)));
  return s;
}

class StringNormalizerKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(std::string action, info.GetString("case_change_action", "NONE"));
    if (action == "LOWER") {
      case_map_ = [](int c) { return std::tolower(c); };
    } else if (action == "UPPER") {
      case_map_ = [](int c) { return std::toupper(c); };
    } else if (action != "NONE") {
      return InvalidArgument(where_, ": case_change_action must be LOWER, UPPER or NONE, got \"", action, "\"");
    }
    OL_ASSIGN_OR_RETURN(int64_t sensitive, info.GetInt("is_case_sensitive", 0));
    case_sensitive_ = sensitive != 0;
    std::vector<std::string> stopwords;
    if (info.HasAttribute("stopwords")) {
      OL_ASSIGN_OR_RETURN(stopwords, info.GetStrings("stopwords"));
    }
    for (const std::string& w : stopwords) stopwords_.insert(StopwordKey(w));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, where_));
    const Shape& shape = x->shape();
    if (!(shape.rank() == 1 || (shape.rank() == 2 && shape.dim(0) == 1))) {
      return InvalidArgument(where_, ": input must be [C] or [1, C], got ", x->TypeAndShape());
    }
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const std::string& s = x->data<std::string>()[i];
      if (stopwords_.count(StopwordKey(s)) == 0) kept.push_back(case_map_ ? MapCase(s, case_map_) : s);
    }
    if (kept.empty()) kept.push_back("");  // ONNX: an all-stopword input gives one empty string
    const int64_t c = static_cast<int64_t>(kept.size());
    OL_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.AllocateOutput(0, DataType::kString, shape.rank() == 1 ? Shape{c} : Shape{1, c}));
    std::move(kept.begin(), kept.end(), y->data<std::string>());
    return Status::Ok();
  }

 private:
  std::string StopwordKey(const std::string& s) const {
    return case_sensitive_ ? s : MapCase(s, [](int c) { return std::tolower(c); });
  }

  std::string where_;
  int (*case_map_)(int) = nullptr;
  bool case_sensitive_ = false;
  std::unordered_set<std::string> stopwords_;
};

void RegisterText(KernelRegistry& registry, const char* op, int since, KernelFactory factory) {
  KernelDef def;
  def.op = op;
  def.since_version = since;
  def.family = kFamily;
  def.element_types = {DataType::kString};
  def.factory = std::move(factory);
  registry.Add(std::move(def));
}

OL_REGISTER_KERNELS(text_strings) {
  RegisterText(registry, "StringConcat", 20, MakeKernel<StringConcatKernel>());
  RegisterText(registry, "StringSplit", 20, MakeKernel<StringSplitKernel>());
  RegisterText(registry, "RegexFullMatch", 20, MakeKernel<RegexFullMatchKernel>());
  RegisterText(registry, "StringNormalizer", 10, MakeKernel<StringNormalizerKernel>());
}

}  // namespace
}  // namespace text
}  // namespace onnx_light
