#include "native/tuning/processor.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

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

struct Regs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs Cpuid(unsigned leaf, unsigned subleaf = 0) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return Regs{};
  return r;
}

// XCR0: which register states the OS saves (AVX needs YMM, AVX-512 needs ZMM/opmask).
uint64_t Xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

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
    const bool zen4 = (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
                      (model >= 0xA0 && model <= 0xAF);
    return zen4 ? "zen4" : "zen3";
  }
  if (family == 0x1A) return "zen5";
  return "";
}

void DetectArchitecture(ProcessorDescriptor& d) {
  d.architecture = "x86_64";
  const Regs leaf0 = Cpuid(0);
  char vendor[13] = {};
  std::copy_n(reinterpret_cast<const char*>(&leaf0.ebx), 4, vendor);
  std::copy_n(reinterpret_cast<const char*>(&leaf0.edx), 4, vendor + 4);
  std::copy_n(reinterpret_cast<const char*>(&leaf0.ecx), 4, vendor + 8);
  d.vendor = vendor;

  const Regs leaf1 = Cpuid(1);
  const int base_family = (leaf1.eax >> 8) & 0xF;
  const int base_model = (leaf1.eax >> 4) & 0xF;
  d.family = base_family == 0xF ? base_family + ((leaf1.eax >> 20) & 0xFF) : base_family;
  d.model = (base_family == 0x6 || base_family == 0xF) ? (((leaf1.eax >> 16) & 0xF) << 4) | base_model : base_model;
  d.stepping = leaf1.eax & 0xF;

  const bool osxsave = leaf1.ecx & (1u << 27);
  const uint64_t xcr0 = osxsave ? Xcr0() : 0;
  const bool avx_state = (xcr0 & 0x6) == 0x6;
  const bool avx512_state = (xcr0 & 0xE6) == 0xE6;
  const bool amx_state = (xcr0 & (3u << 17)) == (3u << 17);
  const Regs leaf7 = leaf0.eax >= 7 ? Cpuid(7, 0) : Regs{};
  const Regs leaf7_1 = leaf0.eax >= 7 ? Cpuid(7, 1) : Regs{};
  const Regs ext1 = Cpuid(0x80000001);

  struct Bit {
    const char* name;
    unsigned reg;
    int bit;
    bool needs_state;
  };
  const bool always = true;  // features that need no OS-saved register state
  const Bit bits[] = {
      {"sse2", leaf1.edx, 26, always},       {"sse3", leaf1.ecx, 0, always},
      {"ssse3", leaf1.ecx, 9, always},       {"fma", leaf1.ecx, 12, avx_state},
      {"cx16", leaf1.ecx, 13, always},       {"sse4.1", leaf1.ecx, 19, always},
      {"sse4.2", leaf1.ecx, 20, always},     {"movbe", leaf1.ecx, 22, always},
      {"popcnt", leaf1.ecx, 23, always},     {"avx", leaf1.ecx, 28, avx_state},
      {"f16c", leaf1.ecx, 29, avx_state},  {"lahf_lm", ext1.ecx, 0, always},
      {"lzcnt", ext1.ecx, 5, always},        {"bmi1", leaf7.ebx, 3, always},
      {"avx2", leaf7.ebx, 5, avx_state},   {"bmi2", leaf7.ebx, 8, always},
      {"avx512f", leaf7.ebx, 16, avx512_state},   {"avx512dq", leaf7.ebx, 17, avx512_state},
      {"avx512ifma", leaf7.ebx, 21, avx512_state}, {"avx512cd", leaf7.ebx, 28, avx512_state},
      {"avx512bw", leaf7.ebx, 30, avx512_state},  {"avx512vl", leaf7.ebx, 31, avx512_state},
      {"avx512vbmi", leaf7.ecx, 1, avx512_state}, {"avx512vnni", leaf7.ecx, 11, avx512_state},
      {"avx512bf16", leaf7_1.eax, 5, avx512_state}, {"avxvnni", leaf7_1.eax, 4, avx_state},
      {"avx512fp16", leaf7.edx, 23, avx512_state}, {"amx-bf16", leaf7.edx, 22, amx_state},
      {"amx-tile", leaf7.edx, 24, amx_state},      {"amx-int8", leaf7.edx, 25, amx_state},
  };
  for (const Bit& b : bits) {
    if (b.needs_state && (b.reg & (1u << b.bit))) d.isa_features.push_back(b.name);
  }

  if (Cpuid(0x80000000).eax >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      const Regs r = Cpuid(0x80000002 + i);
      const unsigned words[4] = {r.eax, r.ebx, r.ecx, r.edx};
      std::copy_n(reinterpret_cast<const char*>(words), 16, brand + 16 * i);
    }
    d.model_name = brand;
    d.model_name.erase(0, d.model_name.find_first_not_of(' '));
  }
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

// MIDR_EL1: from sysfs; else read directly where the kernel emulates ID register reads
// from user space (HWCAP_CPUID); else from /proc/cpuinfo; 0 when nothing says.
uint64_t ReadMidr() {
  const std::string text = ReadFirstLine("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  if (!text.empty()) return std::stoull(text, nullptr, 16);
  constexpr unsigned long kHwcapCpuid = 1ul << 11;
  if (getauxval(AT_HWCAP) & kHwcapCpuid) {
    uint64_t midr = 0;
    __asm__ volatile("mrs %0, MIDR_EL1" : "=r"(midr));
    return midr;
  }
  std::ifstream in("/proc/cpuinfo");
  std::map<std::string, uint64_t> fields;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key.rfind("CPU ", 0) == 0 && !fields.count(key)) {
      fields[key] = std::strtoull(line.c_str() + colon + 1, nullptr, 0);
    }
  }
  if (!fields.count("CPU implementer")) return 0;
  return fields["CPU implementer"] << 24 | fields["CPU variant"] << 20 | fields["CPU architecture"] << 16 |
         fields["CPU part"] << 4 | fields["CPU revision"];
}

std::string ArmVendor(int implementer) {
  static const std::map<int, const char*> kImplementers = {
      {0x41, "ARM"},   {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"}, {0x48, "HiSilicon"},
      {0x4E, "NVIDIA"}, {0x51, "Qualcomm"}, {0x61, "Apple"}, {0xC0, "Ampere"},
  };
  auto it = kImplementers.find(implementer);
  return it == kImplementers.end() ? (implementer ? StrCat("implementer-0x", std::hex, implementer) : "unknown")
                                   : it->second;
}

std::string ArmMicroarchitecture(int implementer, int part) {
  static const std::map<int, const char*> kArmParts = {
      {0xd03, "cortex-a53"},  {0xd05, "cortex-a55"},  {0xd07, "cortex-a57"},  {0xd08, "cortex-a72"},
      {0xd0b, "cortex-a76"},  {0xd0c, "neoverse-n1"}, {0xd0d, "cortex-a77"},  {0xd40, "neoverse-v1"},
      {0xd41, "cortex-a78"},  {0xd49, "neoverse-n2"}, {0xd4f, "neoverse-v2"}, {0xd8e, "neoverse-n3"},
  };
  if (implementer == 0x41) {
    auto it = kArmParts.find(part);
    return it == kArmParts.end() ? "" : it->second;
  }
  if (implementer == 0xC0 && part == 0xac3) return "ampere-one";
  return "";
}

void DetectArchitecture(ProcessorDescriptor& d) {
  d.architecture = "aarch64";
  const uint64_t midr = ReadMidr();
  const int implementer = static_cast<int>((midr >> 24) & 0xFF);
  d.vendor = ArmVendor(implementer);
  d.family = static_cast<int>((midr >> 16) & 0xF);
  d.model = static_cast<int>((midr >> 4) & 0xFFF);
  d.stepping = static_cast<int>(((midr >> 20) & 0xF) << 4 | (midr & 0xF));
  d.microarchitecture = ArmMicroarchitecture(implementer, d.model);

  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  // Bit positions of the Linux arm64 ABI (asm/hwcap.h), stable across kernels.
  struct Bit {
    const char* name;
    unsigned long word;
    int bit;
  };
  const Bit bits[] = {
      {"fp", hwcap, 0},       {"asimd", hwcap, 1},     {"aes", hwcap, 3},     {"sha2", hwcap, 6},
      {"crc32", hwcap, 7},    {"atomics", hwcap, 8},   {"fphp", hwcap, 9},    {"fp16", hwcap, 10},
      {"rdm", hwcap, 12},     {"fcma", hwcap, 14},     {"lrcpc", hwcap, 15},  {"dotprod", hwcap, 20},
      {"sve", hwcap, 22},     {"sve2", hwcap2, 1},     {"i8mm", hwcap2, 13},  {"bf16", hwcap2, 14},
      {"sme", hwcap2, 23},
  };
  for (const Bit& b : bits) {
    if (b.word & (1ul << b.bit)) d.isa_features.push_back(b.name);
  }
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
