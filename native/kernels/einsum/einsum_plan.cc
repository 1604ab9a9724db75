#include "native/kernels/einsum/einsum_plan.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace onnx_light {
namespace einsum {
namespace {

// Label ids: 0-51 for letters, 52 + k for the k-th broadcast dimension (right-aligned,
// k = 0 the outermost of the widest ellipsis).
constexpr int kEllipsisBase = 52;

int LetterId(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A'); }

struct Term {
  std::vector<int> letters_before, letters_after;  // around the ellipsis
  bool ellipsis = false;
};

StatusOr<Term> ParseTerm(const std::string& text, const std::string& where) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (t.ellipsis || text.compare(i, 3, "...") != 0) {
        return InvalidArgument(where, ": malformed ellipsis in einsum term '", text, "'");
      }
      t.ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      (t.ellipsis ? t.letters_after : t.letters_before).push_back(LetterId(c));
    } else {
      return InvalidArgument(where, ": unexpected character '", std::string(1, c), "' in einsum term '", text, "'");
    }
  }
  return t;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

}  // namespace

StatusOr<EinsumPlan> PlanEinsum(const std::string& equation, const std::vector<Shape>& shapes,
                                const std::string& where) {
  std::string eq;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::vector<std::string> inputs_text = Split(eq.substr(0, arrow), ',');
  if (inputs_text.size() != shapes.size()) {
    return InvalidArgument(where, ": equation '", equation, "' has ", inputs_text.size(), " inputs, the node ",
                           shapes.size());
  }
  std::vector<Term> terms;
  int ellipsis_rank = 0;
  std::map<int, int64_t> size_of;  // label -> size (1 broadcasts for ellipsis labels)
  std::vector<std::vector<int>> labels_of(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    OL_ASSIGN_OR_RETURN(Term t, ParseTerm(inputs_text[i], where));
    const int letters = static_cast<int>(t.letters_before.size() + t.letters_after.size());
    const int rank = shapes[i].rank();
    if (t.ellipsis ? rank < letters : rank != letters) {
      return InvalidArgument(where, ": term '", inputs_text[i], "' does not fit input ", i, " of shape ",
                             shapes[i].ToString());
    }
    const int broadcast = rank - letters;
    ellipsis_rank = std::max(ellipsis_rank, broadcast);
    labels_of[i] = t.letters_before;
    for (int k = 0; k < broadcast; ++k) labels_of[i].push_back(-(broadcast - k));  // resolved below
    labels_of[i].insert(labels_of[i].end(), t.letters_after.begin(), t.letters_after.end());
    terms.push_back(t);
  }
  // Ellipsis dimensions, right-aligned: -d (d-th from the right) -> base + ellipsis_rank - d.
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (size_t d = 0; d < labels_of[i].size(); ++d) {
      int& label = labels_of[i][d];
      if (label < 0) label = kEllipsisBase + ellipsis_rank + label;
      const int64_t dim = shapes[i][static_cast<int>(d)];
      auto it = size_of.find(label);
      if (it == size_of.end() || it->second == 1) {
        size_of[label] = dim;
      } else if (dim != it->second && dim != 1) {  // size 1 broadcasts, as numpy's einsum allows
        return InvalidArgument(where, ": einsum label sizes disagree (", it->second, " vs ", dim, ") in input ", i,
                               " of shape ", shapes[i].ToString());
      }
    }
  }
  // Output labels: explicit, or (implicit) the ellipsis then letters used once, sorted.
  std::vector<int> output;
  if (arrow != std::string::npos) {
    OL_ASSIGN_OR_RETURN(Term t, ParseTerm(eq.substr(arrow + 2), where));
    output = t.letters_before;
    if (t.ellipsis) {
      for (int k = 0; k < ellipsis_rank; ++k) output.push_back(kEllipsisBase + k);
    }
    output.insert(output.end(), t.letters_after.begin(), t.letters_after.end());
    for (size_t a = 0; a < output.size(); ++a) {
      if (!size_of.count(output[a]) || std::count(output.begin(), output.end(), output[a]) > 1) {
        return InvalidArgument(where, ": output of '", equation, "' names a label that no input has, or twice");
      }
    }
  } else {
    for (int k = 0; k < ellipsis_rank; ++k) output.push_back(kEllipsisBase + k);
    std::map<int, int> uses;
    for (const auto& labels : labels_of) {
      for (int l : labels) uses[l] += l < kEllipsisBase;
    }
    for (const auto& [label, count] : uses) {  // map order = a..z, A..Z
      if (count == 1) output.push_back(label);
    }
    std::sort(output.begin() + ellipsis_rank, output.end(), [](int a, int b) {
      // numpy orders implicit outputs by character code: uppercase before lowercase.
      const int ca = a < 26 ? 'a' + a : 'A' + a - 26, cb = b < 26 ? 'a' + b : 'A' + b - 26;
      return ca < cb;
    });
  }
  EinsumPlan plan;
  std::vector<int> order = output;
  for (const auto& [label, size] : size_of) {
    if (std::find(output.begin(), output.end(), label) == output.end()) order.push_back(label);
  }
  plan.num_output_labels = static_cast<int>(output.size());
  std::vector<int64_t> out_dims;
  for (size_t a = 0; a < order.size(); ++a) {
    const int64_t size = size_of[order[a]];
    plan.sizes.push_back(size);
    if (static_cast<int>(a) < plan.num_output_labels) {
      out_dims.push_back(size);
      plan.output_size *= size;
    } else {
      plan.contraction_size *= size;
    }
  }
  OL_ASSIGN_OR_RETURN(plan.output_shape, Shape::Create(out_dims));
  plan.strides.assign(shapes.size(), std::vector<int64_t>(order.size(), 0));
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t stride = 1;
    for (int d = shapes[i].rank() - 1; d >= 0; --d) {
      const int64_t dim = shapes[i][d];
      const int pos = static_cast<int>(std::find(order.begin(), order.end(), labels_of[i][d]) - order.begin());
      if (dim != 1 || plan.sizes[pos] == 1) plan.strides[i][pos] += stride;  // size-1 dims broadcast
      stride *= dim;
    }
  }
  return plan;
}

}  // namespace einsum
}  // namespace onnx_light
