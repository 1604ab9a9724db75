#include "native/core/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

TEST(CpuFeaturesTest, HostIsProbedAndConsistent) {
  const CpuInfo& cpu = HostCpu();
  std::cout << "host: " << cpu.architecture << " " << cpu.vendor << ", best ISA " << IsaName(HostIsa()) << ", cap "
            << IsaName(MaxIsa()) << "\n";
  EXPECT_TRUE(std::is_sorted(cpu.features.begin(), cpu.features.end()));
  EXPECT_EQ(&cpu, &HostCpu());
  EXPECT_TRUE(CpuSupportsIsa(Isa::kPortable));
  EXPECT_TRUE(IsaEnabled(Isa::kPortable));
  EXPECT_TRUE(CpuSupportsIsa(HostIsa()));
#if defined(__x86_64__)
  EXPECT_EQ(cpu.architecture, "x86_64");
  EXPECT_TRUE(cpu.Has("sse2"));
  EXPECT_FALSE(CpuSupportsIsa(Isa::kNeon));
  EXPECT_EQ(cpu.avx2, cpu.Has("avx2"));
  if (CpuSupportsIsa(Isa::kAvx512)) {
    EXPECT_TRUE(CpuSupportsIsa(Isa::kAvx2));
  }
#elif defined(__aarch64__)
  EXPECT_EQ(cpu.architecture, "aarch64");
  EXPECT_TRUE(cpu.neon);
  EXPECT_FALSE(CpuSupportsIsa(Isa::kAvx2));
  EXPECT_FALSE(CpuSupportsIsa(Isa::kAvx512));
#endif
}

TEST(CpuFeaturesTest, NamesRoundTrip) {
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    Isa parsed = Isa::kPortable;
    ASSERT_TRUE(ParseIsa(IsaName(isa), &parsed));
    EXPECT_EQ(parsed, isa);
  }
  Isa unused;
  EXPECT_FALSE(ParseIsa("sse9", &unused));
  EXPECT_FALSE(ParseIsa("", &unused));
}

// The cap from ONNX_LIGHT_MAX_ISA (.ci/run runs the native tests capped at avx2 and at
// portable): nothing above it is enabled, and it is honoured up to what the CPU has.
TEST(CpuFeaturesTest, CapFollowsTheEnvironment) {
  const char* env = std::getenv("ONNX_LIGHT_MAX_ISA");
  const std::string requested = env ? env : "";
  std::cout << "ONNX_LIGHT_MAX_ISA=" << requested << " -> cap " << IsaName(MaxIsa()) << "\n";
  if (requested == "portable") {
    EXPECT_EQ(MaxIsa(), Isa::kPortable);
    EXPECT_FALSE(IsaEnabled(Isa::kAvx2));
    EXPECT_FALSE(IsaEnabled(Isa::kNeon));
    EXPECT_NE(IsaDisabledReason(Isa::kAvx2), "");
  } else if (requested == "avx2") {
    EXPECT_FALSE(IsaEnabled(Isa::kAvx512));
    EXPECT_EQ(IsaEnabled(Isa::kAvx2), CpuSupportsIsa(Isa::kAvx2));
  } else if (requested.empty() || requested == "native") {
    EXPECT_EQ(MaxIsa(), HostIsa());
    for (Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) EXPECT_EQ(IsaEnabled(isa), CpuSupportsIsa(isa));
  }
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    EXPECT_EQ(IsaEnabled(isa), IsaDisabledReason(isa).empty()) << IsaName(isa);
  }
  // Fixed at first use: the same cap again is accepted, a different one refused.
  EXPECT_TRUE(SetMaxIsa(MaxIsa()));
  if (MaxIsa() != Isa::kPortable) {
    EXPECT_FALSE(SetMaxIsa(Isa::kPortable));
  }
}

}  // namespace
}  // namespace onnx_light
