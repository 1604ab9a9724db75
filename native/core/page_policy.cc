#include "native/core/page_policy.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace onnx_light {
namespace internal {
extern std::atomic<int> default_allocator_page_policy;  // allocator.cc: what it applies
}  // namespace internal

namespace {

constexpr char kEnvironment[] = "ONNX_LIGHT_CONSTANT_PAGES";

PagePolicy Decode(int code) {
  PagePolicy policy;
  policy.pages = static_cast<PagePolicy::Pages>(code / 2);
  policy.prefault = code % 2 == 1;
  return policy;
}

// The environment's policy, applied when this library loads (before any session exists).
const bool kEnvironmentRead = [] {
  StatusOr<PagePolicy> policy = PagePolicyFromEnvironment();
  if (policy.ok()) {
    SetConstantPagePolicy(*policy);
  } else {
    std::fprintf(stderr, "onnx-light: %s; using huge pages\n", policy.status().message().c_str());
  }
  return true;
}();

}  // namespace

StatusOr<PagePolicy> PagePolicy::Parse(std::string_view text) {
  PagePolicy policy;
  std::string_view pages = text;
  constexpr std::string_view kPrefault = "+prefault";
  if (pages.size() > kPrefault.size() && pages.substr(pages.size() - kPrefault.size()) == kPrefault) {
    policy.prefault = true;
    pages.remove_suffix(kPrefault.size());
  }
  if (pages == "huge") {
    policy.pages = Pages::kHuge;
  } else if (pages == "system") {
    policy.pages = Pages::kSystem;
  } else if (pages == "small") {
    policy.pages = Pages::kSmall;
  } else {
    return InvalidArgument("page policy '", text, "' is not huge, system or small (optionally with +prefault)");
  }
  return policy;
}

std::string PagePolicy::ToString() const {
  std::string text = pages == Pages::kHuge ? "huge" : pages == Pages::kSystem ? "system" : "small";
  return prefault ? text + "+prefault" : text;
}

StatusOr<PagePolicy> PagePolicyFromEnvironment() {
  const char* value = std::getenv(kEnvironment);
  if (value == nullptr || *value == '\0') return PagePolicy{};
  StatusOr<PagePolicy> policy = PagePolicy::Parse(value);
  if (!policy.ok()) return InvalidArgument(kEnvironment, ": ", policy.status().message());
  return policy;
}

PagePolicy ConstantPagePolicy() {
  return Decode(internal::default_allocator_page_policy.load(std::memory_order_relaxed));
}

void SetConstantPagePolicy(PagePolicy policy) {
  internal::default_allocator_page_policy.store(policy.code(), std::memory_order_relaxed);
}

}  // namespace onnx_light
