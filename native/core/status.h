// Status and StatusOr: how every fallible native call reports failure. Messages name the
// op, node and offending shape or type; Python maps each code to an exception class.
#pragma once

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace onnx_light {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,
  kNotImplemented = 2,
  kCancelled = 3,
  kResourceExhausted = 4,
  kInternal = 5,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "InvalidArgument: <message>".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` (e.g. "Add node 'n3': ").
  Status WithContext(const std::string& context) const;

  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Concatenates anything with an operator<< into one string.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <typename... Args>
Status InvalidArgument(const Args&... args) {
  return Status(StatusCode::kInvalidArgument, StrCat(args...));
}
template <typename... Args>
Status NotImplemented(const Args&... args) {
  return Status(StatusCode::kNotImplemented, StrCat(args...));
}
template <typename... Args>
Status Cancelled(const Args&... args) {
  return Status(StatusCode::kCancelled, StrCat(args...));
}
template <typename... Args>
Status ResourceExhausted(const Args&... args) {
  return Status(StatusCode::kResourceExhausted, StrCat(args...));
}
template <typename... Args>
Status Internal(const Args&... args) {
  return Status(StatusCode::kInternal, StrCat(args...));
}

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("StatusOr constructed from an OK status without a value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace onnx_light

#define OL_STATUS_CONCAT_INNER(a, b) a##b
#define OL_STATUS_CONCAT(a, b) OL_STATUS_CONCAT_INNER(a, b)

#define OL_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::onnx_light::Status ol_status_ = (expr); \
    if (!ol_status_.ok()) return ol_status_;  \
  } while (0)

#define OL_ASSIGN_OR_RETURN(lhs, expr) OL_ASSIGN_OR_RETURN_IMPL(OL_STATUS_CONCAT(ol_statusor_, __LINE__), lhs, expr)
#define OL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
