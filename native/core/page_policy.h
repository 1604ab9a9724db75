// How fresh large blocks meet transparent huge pages, for the memory a session keeps for
// its whole life: the packed weights kernels create from constant inputs, which come from
// Allocator::Default(). The policy trades session creation time (the first touch of a
// fresh huge page zeroes 2 MiB, after compacting memory where it is fragmented: on a VM
// that returns freed memory to its host, most of what packing weights costs) against
// run-time TLB misses over those weights. Which wins depends on the machine and the model,
// so it is selectable and measured, not guessed:
//
//   ONNX_LIGHT_CONSTANT_PAGES=small+prefault python serve.py    # read when this loads
//   SetConstantPagePolicy(*PagePolicy::Parse("system"));       // from then on
//   benchmarks/model_load_vs_ort.py --page_policies=huge,small  # creation and run, interleaved
//
// It applies to fresh blocks of Allocator::kHugePageMinimum bytes or more that
// Allocator::Default() takes from the system (smaller blocks, and blocks it reuses from its
// cache, are as they were). Session allocators (activations, scratch) always advise huge
// pages (allocator.h). Core's allocator applies the policy; this library, linked into the
// Python extension, names it, reads the environment and sets it (so that core's users do
// not compile against it).
#pragma once

#include <string>
#include <string_view>

#include "native/core/status.h"

namespace onnx_light {

struct PagePolicy {
  // The numbers are allocator.cc's (code() below).
  enum class Pages {
    kHuge = 0,    // 2 MiB aligned, madvise(MADV_HUGEPAGE): huge pages where THP is "madvise" too
    kSystem = 1,  // no advice: what /sys/kernel/mm/transparent_hugepage/enabled says
    kSmall = 2,   // 2 MiB aligned, madvise(MADV_NOHUGEPAGE): 4 KiB pages even where THP is "always"
  };
  Pages pages = Pages::kHuge;
  // Populate the block's pages when it is allocated (madvise(MADV_POPULATE_WRITE): one call
  // instead of a fault per page; where the kernel lacks it, one write per page).
  bool prefault = false;

  // "huge", "system" or "small", optionally followed by "+prefault"; InvalidArgument naming
  // the text otherwise.
  static StatusOr<PagePolicy> Parse(std::string_view text);
  std::string ToString() const;
  // The allocator's encoding: pages * 2 + prefault.
  int code() const { return static_cast<int>(pages) * 2 + (prefault ? 1 : 0); }
  bool operator==(const PagePolicy& other) const { return code() == other.code(); }
};

// The environment's policy (ONNX_LIGHT_CONSTANT_PAGES; unset or empty: huge pages), or
// InvalidArgument naming the variable and its value. Read once when this library loads
// (a value that does not parse is reported on stderr, and huge pages stay).
StatusOr<PagePolicy> PagePolicyFromEnvironment();

// The policy Allocator::Default() applies now, and a new one for the blocks it takes from
// the system from now on. Thread-safe.
PagePolicy ConstantPagePolicy();
void SetConstantPagePolicy(PagePolicy policy);

}  // namespace onnx_light
