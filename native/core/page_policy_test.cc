#include "native/core/page_policy.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "native/core/allocator.h"

namespace onnx_light {
namespace {

// What /proc/self/smaps says of the mapping that holds `address`: its VmFlags (two-letter
// codes: "hg" = MADV_HUGEPAGE, "nh" = MADV_NOHUGEPAGE) and its resident kilobytes.
struct MappingFacts {
  bool found = false;
  std::set<std::string> flags;
  int64_t rss_kib = 0;
};

MappingFacts FactsOf(const void* address) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  MappingFacts facts;
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long long begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= a && a < end;
      if (inside) facts.found = true;
      continue;
    }
    if (!inside) continue;
    std::istringstream field(line);
    std::string name;
    field >> name;
    if (name == "Rss:") field >> facts.rss_kib;
    if (name == "VmFlags:") {
      for (std::string flag; field >> flag;) facts.flags.insert(flag);
    }
  }
  return facts;
}

// Whether this kernel shows madvise advice in smaps. qemu-user (the aarch64 test runs)
// accepts madvise and ignores it (the hints and MADV_POPULATE_WRITE alike), so no VmFlags
// ever appear there and nothing is prefaulted: the flag and prefault checks below cannot be
// made there; everything else is still checked. A real x86-64 kernel must show them, so
// the probe cannot quietly turn the checks off where they matter.
bool AdviceIsVisible() {
  static const bool visible = [] {
    const size_t bytes = size_t{4} << 20;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool seen = ::madvise(p, bytes, MADV_HUGEPAGE) == 0 && FactsOf(p).flags.count("hg") == 1;
    ::munmap(p, bytes);
    return seen;
  }();
  return visible;
}

TEST(PagePolicyTest, ThisKernelShowsAdviceWhereTheFlagChecksMustRun) {
#if defined(__x86_64__)
  EXPECT_TRUE(AdviceIsVisible()) << "an x86-64 kernel that hides MADV_HUGEPAGE from smaps";
#else
  if (!AdviceIsVisible()) RecordProperty("advice_flags", "not visible (emulated): flag checks not made");
#endif
}

struct PolicyCase {
  const char* text;
  size_t mib;  // a size of its own per case: a cached block of another case is never reused
};

class ConstantPagePolicyTest : public ::testing::TestWithParam<PolicyCase> {
 protected:
  void TearDown() override { SetConstantPagePolicy(PagePolicy{}); }
};

TEST_P(ConstantPagePolicyTest, DefaultAllocatorAdvisesAndPrefaultsFreshLargeBlocksAsThePolicySays) {
  const PolicyCase c = GetParam();
  StatusOr<PagePolicy> policy = PagePolicy::Parse(c.text);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  SetConstantPagePolicy(*policy);
  const size_t bytes = c.mib << 20;
  ASSERT_GE(bytes, Allocator::kHugePageMinimum);
  StatusOr<void*> block = Allocator::Default()->Allocate(bytes);
  ASSERT_TRUE(block.ok());
  const MappingFacts facts = FactsOf(*block);
  ASSERT_TRUE(facts.found);
  const bool huge = policy->pages == PagePolicy::Pages::kHuge;
  const bool small = policy->pages == PagePolicy::Pages::kSmall;
  if (AdviceIsVisible()) {
    EXPECT_EQ(facts.flags.count("hg"), huge ? 1u : 0u) << c.text;
    EXPECT_EQ(facts.flags.count("nh"), small ? 1u : 0u) << c.text;
  }
  if (!small && !huge) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*block) % Allocator::kAlignment, 0u);
  } else {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*block) % (size_t{2} << 20), 0u) << "huge-page aligned";
  }
  // Untouched, a block is not resident (only the allocator's header page may be); populated,
  // all of it is.
  if (policy->prefault) {
    if (AdviceIsVisible()) EXPECT_GE(facts.rss_kib, static_cast<int64_t>(bytes >> 10)) << c.text;
  } else {
    EXPECT_LT(facts.rss_kib, static_cast<int64_t>(bytes >> 10) / 2) << c.text;
  }
  Allocator::Default()->Free(*block, bytes);
}

INSTANTIATE_TEST_SUITE_P(Policies, ConstantPagePolicyTest,
                         ::testing::Values(PolicyCase{"system", 8}, PolicyCase{"huge", 10}, PolicyCase{"small", 12},
                                           PolicyCase{"huge+prefault", 14}, PolicyCase{"small+prefault", 16},
                                           PolicyCase{"system+prefault", 20}),
                         [](const ::testing::TestParamInfo<PolicyCase>& info) {
                           std::string name = info.param.text;
                           const size_t plus = name.find('+');
                           return plus == std::string::npos ? name : name.substr(0, plus) + "_prefault";
                         });

TEST(PagePolicyTest, SessionAllocatorsKeepHugePagesWhateverTheConstantPolicy) {
  SetConstantPagePolicy(*PagePolicy::Parse("small"));
  Allocator session_allocator;
  const size_t bytes = size_t{24} << 20;
  StatusOr<void*> block = session_allocator.Allocate(bytes);
  ASSERT_TRUE(block.ok());
  const MappingFacts facts = FactsOf(*block);
  ASSERT_TRUE(facts.found);
  if (AdviceIsVisible()) {
    EXPECT_EQ(facts.flags.count("hg"), 1u);
    EXPECT_EQ(facts.flags.count("nh"), 0u);
  }
  session_allocator.Free(*block, bytes);
  SetConstantPagePolicy(PagePolicy{});
}

TEST(PagePolicyTest, SmallBlocksAreLeftAlone) {
  SetConstantPagePolicy(*PagePolicy::Parse("small+prefault"));
  const size_t bytes = Allocator::kHugePageMinimum / 2;
  StatusOr<void*> block = Allocator::Default()->Allocate(bytes);
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(FactsOf(*block).flags.count("nh"), 0u);
  Allocator::Default()->Free(*block, bytes);
  SetConstantPagePolicy(PagePolicy{});
}

TEST(PagePolicyTest, ParsesEveryNameAndPrintsItBack) {
  for (const char* text : {"huge", "system", "small", "huge+prefault", "system+prefault", "small+prefault"}) {
    StatusOr<PagePolicy> policy = PagePolicy::Parse(text);
    ASSERT_TRUE(policy.ok()) << text;
    EXPECT_EQ(policy->ToString(), text);
  }
  EXPECT_EQ(PagePolicy::Parse("small+prefault")->pages, PagePolicy::Pages::kSmall);
  EXPECT_TRUE(PagePolicy::Parse("small+prefault")->prefault);
  EXPECT_FALSE(PagePolicy::Parse("huge")->prefault);
}

TEST(PagePolicyTest, RejectsUnknownNamesNamingThem) {
  for (const char* text : {"", "Huge", "tiny", "+prefault", "huge+", "huge+prefault+prefault", "small prefault"}) {
    StatusOr<PagePolicy> policy = PagePolicy::Parse(text);
    ASSERT_FALSE(policy.ok()) << text;
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(policy.status().message().find(std::string("'") + text + "'"), std::string::npos)
        << policy.status().message();
  }
}

TEST(PagePolicyTest, EnvironmentSelectsThePolicyAndNamesABadValue) {
  ASSERT_EQ(unsetenv("ONNX_LIGHT_CONSTANT_PAGES"), 0);
  EXPECT_EQ(*PagePolicyFromEnvironment(), PagePolicy{});
  ASSERT_EQ(setenv("ONNX_LIGHT_CONSTANT_PAGES", "small+prefault", 1), 0);
  EXPECT_EQ(PagePolicyFromEnvironment()->ToString(), "small+prefault");
  ASSERT_EQ(setenv("ONNX_LIGHT_CONSTANT_PAGES", "gigantic", 1), 0);
  StatusOr<PagePolicy> bad = PagePolicyFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ONNX_LIGHT_CONSTANT_PAGES"), std::string::npos);
  EXPECT_NE(bad.status().message().find("'gigantic'"), std::string::npos);
  ASSERT_EQ(unsetenv("ONNX_LIGHT_CONSTANT_PAGES"), 0);
}

}  // namespace
}  // namespace onnx_light
