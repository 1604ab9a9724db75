// Processor and execution descriptors: what a tuning profile is keyed by. Two machines
// whose descriptors are equal are expected to pick the same thresholds; lower precedence
// tiers match on the microarchitecture or only the ISA level (DESIGN.md, tuning contract).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/executor/cpu_execution_policy.h"

namespace onnx_light {

struct CacheLevel {
  int level = 0;     // 1, 2, 3...
  std::string type;  // "Data", "Instruction", "Unified"
  int64_t size_bytes = 0;
  bool operator==(const CacheLevel& o) const {
    return level == o.level && type == o.type && size_bytes == o.size_bytes;
  }
};

struct ProcessorDescriptor {
  std::string architecture;               // "x86_64", "aarch64"
  std::string vendor;                     // "GenuineIntel", "AuthenticAMD", "ARM", "Apple", ...
  int family = 0;                         // x86: display family; aarch64: MIDR architecture field
  int model = 0;                          // x86: display model; aarch64: MIDR part number
  int stepping = 0;                       // x86: stepping; aarch64: MIDR variant << 4 | revision
  std::string microarchitecture;          // "skylake-avx512", "zen4", "neoverse-n1"; empty when unknown
  std::string model_name;                 // brand string where the hardware gives one
  std::vector<std::string> isa_features;  // sorted: "avx2", "fma", "sve", ...
  std::string isa_level;                  // "x86-64-v3", "armv8.2-a", ...
  std::vector<CacheLevel> caches;         // of cpu0, from sysfs
  int physical_cores = 0;                 // available to this process
  int logical_cores = 0;

  bool HasFeature(const std::string& feature) const;
  // One line for logs: "x86_64 GenuineIntel 6/143/8 (sapphirerapids) x86-64-v4, 2 cores".
  std::string Summary() const;
  bool operator==(const ProcessorDescriptor& o) const;
};

// The processor this process runs on; detected once and cached.
const ProcessorDescriptor& HostProcessor();

// The ISA level of a feature set (exposed for tests and for descriptors read from JSON).
std::string X86IsaLevel(const std::vector<std::string>& features);
std::string Aarch64IsaLevel(const std::vector<std::string>& features);

// How kernels will run: what a calibrated threshold depends on besides the processor.
struct ExecutionDescriptor {
  int threads = 1;            // effective participants (0 resolved to physical cores)
  std::vector<int> affinity;  // empty: not pinned
  bool operator==(const ExecutionDescriptor& o) const { return threads == o.threads && affinity == o.affinity; }
};

ExecutionDescriptor DescribeExecution(const CpuExecutionPolicy& policy);

}  // namespace onnx_light
