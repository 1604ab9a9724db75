#include "native/tuning/processor.h"

#include <gtest/gtest.h>

#include <iostream>

namespace onnx_light {
namespace {

TEST(ProcessorTest, HostDescriptorIsFilledIn) {
  const ProcessorDescriptor& p = HostProcessor();
  std::cout << "host: " << p.Summary() << "\n";
  EXPECT_FALSE(p.vendor.empty());
  EXPECT_FALSE(p.isa_level.empty());
  EXPECT_GE(p.logical_cores, 1);
  EXPECT_GE(p.physical_cores, 1);
  EXPECT_LE(p.physical_cores, p.logical_cores);
  EXPECT_TRUE(std::is_sorted(p.isa_features.begin(), p.isa_features.end()));
  EXPECT_EQ(p, HostProcessor());
  EXPECT_NE(p.Summary().find(p.isa_level), std::string::npos);
#if defined(__x86_64__)
  EXPECT_EQ(p.architecture, "x86_64");
  EXPECT_GT(p.family, 0);
  EXPECT_TRUE(p.HasFeature("sse2"));  // part of the x86-64 baseline
  EXPECT_EQ(p.isa_level.rfind("x86-64", 0), 0u);
  // Caches come from sysfs, which every Linux x86-64 machine has.
  ASSERT_FALSE(p.caches.empty());
  EXPECT_GE(p.caches.front().level, 1);
  EXPECT_GT(p.caches.front().size_bytes, 0);
#elif defined(__aarch64__)
  EXPECT_EQ(p.architecture, "aarch64");
  EXPECT_TRUE(p.HasFeature("asimd"));  // mandatory in ARMv8-A Linux
  EXPECT_EQ(p.family, 0xF);            // MIDR architecture field of every ARMv8+ core
  EXPECT_EQ(p.isa_level.rfind("armv8", 0), 0u);
#endif
}

TEST(ProcessorTest, X86IsaLevelsFollowThePsAbi) {
  const std::vector<std::string> v2 = {"cx16", "lahf_lm", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"};
  std::vector<std::string> v3 = v2;
  for (const char* f : {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe"}) v3.push_back(f);
  std::vector<std::string> v4 = v3;
  for (const char* f : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}) v4.push_back(f);
  EXPECT_EQ(X86IsaLevel({"sse2"}), "x86-64");
  EXPECT_EQ(X86IsaLevel(v2), "x86-64-v2");
  EXPECT_EQ(X86IsaLevel(v3), "x86-64-v3");
  EXPECT_EQ(X86IsaLevel(v4), "x86-64-v4");
  v4.pop_back();  // without avx512vl it is not v4
  EXPECT_EQ(X86IsaLevel(v4), "x86-64-v3");
}

TEST(ProcessorTest, Aarch64IsaLevels) {
  EXPECT_EQ(Aarch64IsaLevel({"asimd", "fp"}), "armv8.0-a");
  EXPECT_EQ(Aarch64IsaLevel({"asimd", "atomics", "rdm"}), "armv8.1-a");
  EXPECT_EQ(Aarch64IsaLevel({"asimd", "atomics", "dotprod", "fp16", "rdm"}), "armv8.2-a");
  EXPECT_EQ(Aarch64IsaLevel({"asimd", "dotprod", "fp16", "sve"}), "armv8.2-a+sve");
  EXPECT_EQ(Aarch64IsaLevel({"asimd", "bf16", "i8mm", "sve", "sve2"}), "armv8.6-a+sve2");
}

TEST(ProcessorTest, ExecutionDescriptorResolvesThreads) {
  CpuExecutionPolicy policy;
  policy.num_threads = 0;
  EXPECT_EQ(DescribeExecution(policy).threads, PhysicalCoreCount());
  policy.num_threads = 3;
  policy.affinity = {0};
  const ExecutionDescriptor e = DescribeExecution(policy);
  EXPECT_EQ(e.threads, 3);
  EXPECT_EQ(e.affinity, std::vector<int>({0}));
}

}  // namespace
}  // namespace onnx_light
