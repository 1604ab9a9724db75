// A minimal streaming JSON writer for the baseline document (numbers, strings, arrays,
// objects): enough for machine output without a JSON library in the native build.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace onnx_light {
namespace baseline {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& BeginObject() { Separator(); out_ << '{'; first_ = true; return *this; }
  JsonWriter& EndObject() { out_ << '}'; first_ = false; return *this; }
  JsonWriter& BeginArray() { Separator(); out_ << '['; first_ = true; return *this; }
  JsonWriter& EndArray() { out_ << ']'; first_ = false; return *this; }
  JsonWriter& Key(const std::string& key) {
    Separator();
    String(key);
    out_ << ':';
    first_ = true;  // the value that follows takes no comma
    return *this;
  }
  JsonWriter& Value(const std::string& v) { Separator(); String(v); return *this; }
  JsonWriter& Value(const char* v) { return Value(std::string(v)); }
  JsonWriter& Value(int64_t v) { Separator(); out_ << v; return *this; }
  JsonWriter& Value(int v) { return Value(static_cast<int64_t>(v)); }
  JsonWriter& Value(double v) { Separator(); out_ << v; return *this; }
  JsonWriter& Value(bool v) { Separator(); out_ << (v ? "true" : "false"); return *this; }
  template <typename T>
  JsonWriter& Array(const std::vector<T>& values) {
    BeginArray();
    for (const auto& v : values) Value(v);
    return EndArray();
  }
  template <typename T>
  JsonWriter& Field(const std::string& key, const T& value) {
    Key(key);
    return Value(value);
  }

 private:
  void Separator() {
    if (!first_) out_ << ',';
    first_ = false;
  }
  void String(const std::string& s) {
    out_ << '"';
    for (char c : s) {
      switch (c) {
        case '"': out_ << "\\\""; break;
        case '\\': out_ << "\\\\"; break;
        case '\n': out_ << "\\n"; break;
        case '\t': out_ << "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ << buf;
          } else {
            out_ << c;
          }
      }
    }
    out_ << '"';
  }

  std::ostream& out_;
  bool first_ = true;
};

}  // namespace baseline
}  // namespace onnx_light
