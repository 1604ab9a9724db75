// Tokenizer (com.microsoft, opset 1: ONNX Runtime's contrib op, written by skl2onnx for
// CountVectorizer / TfidfVectorizer): splits every string of a [C] or [N, C] tensor into
// tokens along a new last axis, [C, D] or [N, C, D], D the most tokens of any string
// (+2 with `mark`: 0x02 before a string's tokens, 0x03 after them; `pad_value` fills
// the rest, outside the markers). Tokens of fewer than `mincharnum` UTF-8 characters
// are dropped. Modes:
//   separators = [""] or tokenexp = "."  every UTF-8 character is a token;
//   separators = [r1, r2, ...]           each regex in turn splits every current token
//                                        (its matches are removed);
//   tokenexp = r                         the successive matches of r are the tokens: after
//                                        a match the search resumes behind it, after a
//                                        too-short match one character further.
// When no string has a token the output is [C, 0] / [N, C, 0] (no markers); an empty
// input gives [0] / [N, 0].
//
// Regular expressions: ONNX Runtime uses RE2 (leftmost-longest); this uses std::regex
// with the ECMAScript grammar, which agrees on the syntax both share (classes, \w \d \s
// \b, greedy quantifiers, groups) but differs in three ways:
//   - where several matches start at the same position, std::regex takes the first by
//     Perl's preference order (alternatives left to right, lazy quantifiers short),
//     RE2 the longest: "a|ab" on "ab" gives "a" here and "ab" there;
//   - matching is on bytes: `.`, negated classes and \W can match one byte of a
//     multi-byte character; a match that splits a character is an error here;
//   - syntax RE2 lacks (backreferences, lookahead) and RE2 escapes std::regex lacks
//     (\A \z \p{..} \Q...\E, (?i) flags, ...) are rejected when the node is created,
//     never silently read as literal letters.
// Per-string work on tiny tensors, serial (family text: no ParallelFor).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "native/kernels/text/text_args.h"

namespace onnx_light {
namespace text {
namespace {

constexpr char kStartMarker[] = "\x02";
constexpr char kEndMarker[] = "\x03";

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Bytes of the UTF-8 character that starts with `lead` (1 for a stray byte).
size_t CharBytes(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Byte offset of the first invalid UTF-8 sequence in s, or npos.
size_t InvalidUtf8At(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t n = 1;
    uint32_t code = lead;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      n = 2, code = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      n = 3, code = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      n = 4, code = lead & 0x07;
    } else {
      return i;
    }
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (!IsContinuation(c)) return i;
      code = (code << 6) | (c & 0x3F);
    }
    // Overlong forms, surrogates and code points beyond U+10FFFF.
    if ((n == 3 && code < 0x800) || (n == 4 && (code < 0x10000 || code > 0x10FFFF)) ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

// Characters of valid UTF-8 text.
int64_t CountChars(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += IsContinuation(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

// Escaped letters with an ECMAScript meaning that RE2 shares (\c, \u and octal \0 are
// ECMAScript-only: rejected too).
bool SharedEscape(char c) { return std::strchr("dDwWsSbBfnrtvx", c) != nullptr; }

// Compiles `pattern` (attribute `what`), or InvalidArgument naming the construct.
StatusOr<std::regex> CompileRegex(const std::string& where, const std::string& what, const std::string& pattern) {
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if ((e >= '0' && e <= '9') || (std::isalpha(static_cast<unsigned char>(e)) && !SharedEscape(e))) {
        return InvalidArgument(where, ": ", what, " \"", pattern, "\" uses the escape \\", std::string(1, e),
                               ", which std::regex (ECMAScript) and RE2 do not read alike; not supported");
      }
    } else if (c == '[') {
      in_class = true;
    } else if (c == ']') {
      in_class = false;
    } else if (!in_class && c == '(' && pattern.compare(i, 3, "(?=") == 0) {
      return InvalidArgument(where, ": ", what, " \"", pattern,
                             "\" uses a lookahead (?=...), which RE2 has not; not supported");
    } else if (!in_class && c == '(' && pattern.compare(i, 3, "(?!") == 0) {
      return InvalidArgument(where, ": ", what, " \"", pattern,
                             "\" uses a lookahead (?!...), which RE2 has not; not supported");
    }
  }
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return InvalidArgument(where, ": ", what, " \"", pattern,
                           "\" is not a regular expression std::regex (ECMAScript) accepts: ", e.what());
  }
}

class TokenizerKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t mark, info.GetInt("mark"));
    mark_ = mark != 0;
    OL_ASSIGN_OR_RETURN(pad_value_, info.GetString("pad_value"));
    OL_ASSIGN_OR_RETURN(mincharnum_, info.GetInt("mincharnum"));
    if (mincharnum_ < 1) return InvalidArgument(where_, ": mincharnum must be at least 1, got ", mincharnum_);
    const bool has_separators = info.HasAttribute("separators");
    const bool has_tokenexp = info.HasAttribute("tokenexp");
    if (has_separators == has_tokenexp) {
      return InvalidArgument(where_, ": exactly one of the attributes separators and tokenexp must be set, got ",
                             has_separators ? "both" : "neither");
    }
    if (has_separators) {
      OL_ASSIGN_OR_RETURN(std::vector<std::string> separators, info.GetStrings("separators"));
      if (separators.empty()) return InvalidArgument(where_, ": separators is an empty list");
      characters_ = separators.size() == 1 && separators[0].empty();
      for (size_t i = 0; !characters_ && i < separators.size(); ++i) {
        if (separators[i].empty()) {
          return InvalidArgument(where_, ": separators[", i,
                                 "] is empty (only a lone empty separator is allowed: "
                                 "character tokenization)");
        }
        OL_ASSIGN_OR_RETURN(std::regex re, CompileRegex(where_, StrCat("separators[", i, "]"), separators[i]));
        separators_.push_back(std::move(re));
      }
    } else {
      OL_ASSIGN_OR_RETURN(std::string tokenexp, info.GetString("tokenexp"));
      if (tokenexp.empty()) return InvalidArgument(where_, ": tokenexp is empty");
      characters_ = tokenexp == ".";
      if (!characters_) {
        OL_ASSIGN_OR_RETURN(tokenexp_, CompileRegex(where_, "tokenexp", tokenexp));
        has_tokenexp_ = true;
      }
    }
    if (characters_ && mincharnum_ > 1) {
      return InvalidArgument(where_, ": mincharnum ", mincharnum_, " drops every token of character tokenization");
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, where_));
    const Shape& shape = x->shape();
    if (shape.rank() != 1 && shape.rank() != 2) {
      return InvalidArgument(where_, ": input must be [C] or [N, C], got ", x->TypeAndShape());
    }
    const int64_t n = x->num_elements();
    if (n == 0) {  // [0] -> [0], [N, 0] -> [N, 0] (ONNX Runtime's documented shapes)
      OL_RETURN_IF_ERROR(
          ctx.AllocateOutput(0, DataType::kString, shape.rank() == 1 ? Shape{0} : Shape{shape.dim(0), 0}).status());
      return Status::Ok();
    }
    const std::string* xs = x->data<std::string>();
    std::vector<std::vector<std::string_view>> rows(static_cast<size_t>(n));
    size_t widest = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t bad = InvalidUtf8At(xs[i]);
      if (bad != std::string_view::npos) {
        return InvalidArgument(where_, ": input element ", i, " is not valid UTF-8 (byte ", bad, ")");
      }
      if (characters_) {
        Characters(xs[i], rows[i]);
      } else if (has_tokenexp_) {
        OL_RETURN_IF_ERROR(Matches(xs[i], i, rows[i]));
      } else {
        OL_RETURN_IF_ERROR(Split(xs[i], i, rows[i]));
      }
      widest = std::max(widest, rows[i].size());
    }
    std::vector<int64_t> dims = shape.dims();
    if (widest == 0) {  // nothing but separators (or empty strings): no markers either
      dims.push_back(0);
      OL_RETURN_IF_ERROR(ctx.AllocateOutput(0, DataType::kString, Shape(dims)).status());
      return Status::Ok();
    }
    const int64_t width = static_cast<int64_t>(widest) + (mark_ ? 2 : 0);
    dims.push_back(width);
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kString, Shape(dims)));
    for (int64_t i = 0; i < n; ++i) {
      std::string* out = y->data<std::string>() + i * width;
      int64_t k = 0;
      if (mark_) out[k++] = kStartMarker;
      for (std::string_view token : rows[i]) out[k++].assign(token.data(), token.size());
      if (mark_) out[k++] = kEndMarker;
      for (; k < width; ++k) out[k] = pad_value_;
    }
    return Status::Ok();
  }

 private:
  bool LongEnough(std::string_view token) const { return !token.empty() && CountChars(token) >= mincharnum_; }

  static void Characters(std::string_view s, std::vector<std::string_view>& tokens) {
    for (size_t i = 0; i < s.size();) {
      const size_t len = CharBytes(static_cast<unsigned char>(s[i]));
      tokens.push_back(s.substr(i, len));
      i += len;
    }
  }

  // The next match of `re` in `text` at or after byte `from` (text before `from` is
  // context for \b and ^); false when there is none. A match must not split a UTF-8
  // character (std::regex matches bytes).
  StatusOr<bool> Next(const std::regex& re, std::string_view text, size_t from, int64_t element, size_t& at,
                      size_t& len) const {
    std::cmatch m;
    const auto flags = from > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default;
    if (!std::regex_search(text.data() + from, text.data() + text.size(), m, re, flags)) return false;
    at = from + static_cast<size_t>(m.position(0));
    len = static_cast<size_t>(m.length(0));
    for (size_t edge : {at, at + len}) {
      if (edge < text.size() && IsContinuation(static_cast<unsigned char>(text[edge]))) {
        return InvalidArgument(where_,
                               ": a regular expression match splits a multi-byte UTF-8 character of input "
                               "element ",
                               element,
                               " (std::regex matches bytes; use a pattern that matches whole "
                               "characters there)");
      }
    }
    return true;
  }

  // tokenexp: successive matches; after a match shorter than mincharnum (or empty) the
  // search resumes one character after where that match started.
  Status Matches(std::string_view s, int64_t element, std::vector<std::string_view>& tokens) const {
    size_t from = 0, at = 0, len = 0;
    while (from <= s.size()) {
      OL_ASSIGN_OR_RETURN(bool found, Next(tokenexp_, s, from, element, at, len));
      if (!found) break;
      if (LongEnough(s.substr(at, len))) {
        tokens.push_back(s.substr(at, len));
        from = at + len;
      } else {
        if (at == s.size()) break;
        from = at + CharBytes(static_cast<unsigned char>(s[at]));
      }
    }
    return Status::Ok();
  }

  // separators: each regex in turn splits every token so far; the pieces between matches
  // (and after the last) are kept when long enough. An empty match splits nothing.
  Status Split(std::string_view s, int64_t element, std::vector<std::string_view>& tokens) const {
    std::vector<std::string_view> current{s}, next;
    for (const std::regex& separator : separators_) {
      next.clear();
      for (std::string_view text : current) {
        size_t start = 0, from = 0, at = 0, len = 0;
        while (from <= text.size()) {
          OL_ASSIGN_OR_RETURN(bool found, Next(separator, text, from, element, at, len));
          if (!found) break;
          if (len == 0) {
            if (at == text.size()) break;
            from = at + CharBytes(static_cast<unsigned char>(text[at]));
            continue;
          }
          if (LongEnough(text.substr(start, at - start))) next.push_back(text.substr(start, at - start));
          start = from = at + len;
        }
        if (LongEnough(text.substr(start))) next.push_back(text.substr(start));
      }
      current.swap(next);
      if (current.empty()) break;
    }
    tokens = std::move(current);
    return Status::Ok();
  }

  std::string where_;
  bool mark_ = false;
  std::string pad_value_;
  int64_t mincharnum_ = 1;
  bool characters_ = false;
  std::vector<std::regex> separators_;
  bool has_tokenexp_ = false;
  std::regex tokenexp_;
};

OL_REGISTER_KERNELS(text_tokenizer) {
  KernelDef def;
  def.domain = "com.microsoft";
  def.op = "Tokenizer";
  def.since_version = 1;
  def.family = OL_KERNEL_FAMILY;
  def.element_types = {DataType::kString};
  def.factory = MakeKernel<TokenizerKernel>();
  registry.Add(std::move(def));
}

}  // namespace
}  // namespace text
}  // namespace onnx_light
