#include "native/tuning/processor.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "native/core/cpu_features.h"

namespace onnx_light {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "2048K", "1M" -> bytes.
int64_t ParseCacheSize(const std::string& text) {
  std::istringstream in(text);
  int64_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  if (unit == 'K') return value << 10;
  if (unit == 'M') return value << 20;
  if (unit == 'G') return value << 30;
  return value;
}

std::vector<CacheLevel> ReadCaches() {
  std::vector<CacheLevel> caches;
  for (int index = 0; index < 16; ++index) {
    const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = ReadFirstLine(base + "level");
    if (level.empty()) break;
    CacheLevel c;
    c.level = std::atoi(level.c_str());
    c.type = ReadFirstLine(base + "type");
    c.size_bytes = ParseCacheSize(ReadFirstLine(base + "size"));
    caches.push_back(c);
  }
  return caches;
}

bool Has(const std::vector<std::string>& features, const char* name) {
  return std::find(features.begin(), features.end(), name) != features.end();
}

bool HasAll(const std::vector<std::string>& features, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (!Has(features, n)) return false;
  }
  return true;
}

#if defined(__x86_64__)

std::string IntelMicroarchitecture(int model, int stepping) {
  static const std::map<int, const char*> kModels = {
      {0x3C, "haswell"},        {0x3F, "haswell"},        {0x45, "haswell"},        {0x46, "haswell"},
      {0x3D, "broadwell"},      {0x47, "broadwell"},      {0x4F, "broadwell"},      {0x56, "broadwell"},
      {0x4E, "skylake"},        {0x5E, "skylake"},        {0x8E, "skylake"},        {0x9E, "skylake"},
      {0x6A, "icelake-server"}, {0x6C, "icelake-server"}, {0x7D, "icelake-client"}, {0x7E, "icelake-client"},
      {0x8C, "tigerlake"},      {0x8D, "tigerlake"},      {0xA7, "rocketlake"},     {0x97, "alderlake"},
      {0x9A, "alderlake"},      {0xB7, "raptorlake"},     {0xBA, "raptorlake"},     {0xBF, "raptorlake"},
      {0x8F, "sapphirerapids"}, {0xCF, "emeraldrapids"},  {0xAD, "graniterapids"},  {0xAE, "graniterapids"},
  };
  if (model == 0x55) return stepping >= 5 ? "cascadelake" : "skylake-avx512";
  auto it = kModels.find(model);
  return it == kModels.end() ? "" : it->second;
}

std::string AmdMicroarchitecture(int family, int model) {
  if (family == 0x17) return model >= 0x30 ? "zen2" : "zen";
  if (family == 0x19) {
    const bool zen4 =
        (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) || (model >= 0xA0 && model <= 0xAF);
    return zen4 ? "zen4" : "zen3";
  }
  if (family == 0x1A) return "zen5";
  return "";
}

// Identity and features come from the one probe (native/core/cpu_features.h); this file
// only names what it found.
void DetectArchitecture(ProcessorDescriptor& d) {
  const CpuInfo& cpu = HostCpu();
  d.architecture = cpu.architecture;
  d.vendor = cpu.vendor;
  d.family = cpu.family;
  d.model = cpu.model;
  d.stepping = cpu.stepping;
  d.model_name = cpu.model_name;
  d.isa_features = cpu.features;
  if (d.vendor == "GenuineIntel" && d.family == 6) d.microarchitecture = IntelMicroarchitecture(d.model, d.stepping);
  // Hypervisors may report a model that the features contradict (AMX on a model number of
  // a core without it): then the name would mislead the same-microarchitecture tier.
  const bool amx_core = d.microarchitecture == "sapphirerapids" || d.microarchitecture == "emeraldrapids" ||
                        d.microarchitecture == "graniterapids";
  if (d.vendor == "GenuineIntel" && Has(d.isa_features, "amx-tile") && !amx_core) d.microarchitecture.clear();
  if (d.vendor == "AuthenticAMD") d.microarchitecture = AmdMicroarchitecture(d.family, d.model);
  d.isa_level = X86IsaLevel(d.isa_features);
}

#elif defined(__aarch64__)

std::string ArmVendor(int implementer) {
  static const std::map<int, const char*> kImplementers = {
      {0x41, "ARM"},    {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"}, {0x48, "HiSilicon"},
      {0x4E, "NVIDIA"}, {0x51, "Qualcomm"}, {0x61, "Apple"},  {0xC0, "Ampere"},
  };
  auto it = kImplementers.find(implementer);
  return it == kImplementers.end() ? (implementer ? StrCat("implementer-0x", std::hex, implementer) : "unknown")
                                   : it->second;
}

std::string ArmMicroarchitecture(int implementer, int part) {
  static const std::map<int, const char*> kArmParts = {
      {0xd03, "cortex-a53"}, {0xd05, "cortex-a55"},  {0xd07, "cortex-a57"},  {0xd08, "cortex-a72"},
      {0xd0b, "cortex-a76"}, {0xd0c, "neoverse-n1"}, {0xd0d, "cortex-a77"},  {0xd40, "neoverse-v1"},
      {0xd41, "cortex-a78"}, {0xd49, "neoverse-n2"}, {0xd4f, "neoverse-v2"}, {0xd8e, "neoverse-n3"},
  };
  if (implementer == 0x41) {
    auto it = kArmParts.find(part);
    return it == kArmParts.end() ? "" : it->second;
  }
  if (implementer == 0xC0 && part == 0xac3) return "ampere-one";
  return "";
}

void DetectArchitecture(ProcessorDescriptor& d) {
  const CpuInfo& cpu = HostCpu();
  d.architecture = cpu.architecture;
  d.vendor = ArmVendor(cpu.implementer);
  d.family = cpu.family;
  d.model = cpu.model;
  d.stepping = cpu.stepping;
  d.microarchitecture = ArmMicroarchitecture(cpu.implementer, d.model);
  d.isa_features = cpu.features;
  d.isa_level = Aarch64IsaLevel(d.isa_features);
}

#else

void DetectArchitecture(ProcessorDescriptor& d) { d.architecture = "unknown"; }

#endif

ProcessorDescriptor Detect() {
  ProcessorDescriptor d;
  DetectArchitecture(d);
  std::sort(d.isa_features.begin(), d.isa_features.end());
  d.caches = ReadCaches();
  d.logical_cores = static_cast<int>(AvailableCpus().size());
  d.physical_cores = PhysicalCoreCount();
  return d;
}

}  // namespace

std::string X86IsaLevel(const std::vector<std::string>& f) {
  // The psABI micro-architecture levels.
  if (!HasAll(f, {"cx16", "lahf_lm", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"})) return "x86-64";
  if (!HasAll(f, {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe"})) return "x86-64-v2";
  if (!HasAll(f, {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})) return "x86-64-v3";
  return "x86-64-v4";
}

std::string Aarch64IsaLevel(const std::vector<std::string>& f) {
  // A summary for profile matching (which kernels' code paths apply), not a claim about
  // every mandatory feature of the architecture version.
  std::string level = "armv8.0-a";
  if (HasAll(f, {"atomics", "rdm"})) level = "armv8.1-a";
  if (Has(f, "fp16") || Has(f, "dotprod")) level = "armv8.2-a";
  if (HasAll(f, {"i8mm", "bf16"})) level = "armv8.6-a";
  if (Has(f, "sve2")) return level + "+sve2";
  if (Has(f, "sve")) return level + "+sve";
  return level;
}

bool ProcessorDescriptor::HasFeature(const std::string& feature) const { return Has(isa_features, feature.c_str()); }

std::string ProcessorDescriptor::Summary() const {
  return StrCat(architecture, " ", vendor, " ", family, "/", model, "/", stepping, " (",
                microarchitecture.empty() ? "unknown microarchitecture" : microarchitecture, ") ", isa_level, ", ",
                physical_cores, " physical / ", logical_cores, " logical cores");
}

bool ProcessorDescriptor::operator==(const ProcessorDescriptor& o) const {
  return architecture == o.architecture && vendor == o.vendor && family == o.family && model == o.model &&
         stepping == o.stepping && microarchitecture == o.microarchitecture && isa_features == o.isa_features &&
         isa_level == o.isa_level && caches == o.caches && physical_cores == o.physical_cores &&
         logical_cores == o.logical_cores;
}

const ProcessorDescriptor& HostProcessor() {
  static const ProcessorDescriptor* host = new ProcessorDescriptor(Detect());
  return *host;
}

ExecutionDescriptor DescribeExecution(const CpuExecutionPolicy& policy) {
  ExecutionDescriptor e;
  e.threads = policy.EffectiveThreads();
  e.affinity = policy.affinity;
  return e;
}

}  // namespace onnx_light
