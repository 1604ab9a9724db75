#include "native/core/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace onnx_light {
namespace {

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

void Probe(CpuInfo& d) {
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
    bool usable;  // the OS saves the register state it needs
  };
  const bool always = true;  // features that need no OS-saved register state
  const Bit bits[] = {
      {"sse2", leaf1.edx, 26, always},
      {"sse3", leaf1.ecx, 0, always},
      {"ssse3", leaf1.ecx, 9, always},
      {"fma", leaf1.ecx, 12, avx_state},
      {"cx16", leaf1.ecx, 13, always},
      {"sse4.1", leaf1.ecx, 19, always},
      {"sse4.2", leaf1.ecx, 20, always},
      {"movbe", leaf1.ecx, 22, always},
      {"popcnt", leaf1.ecx, 23, always},
      {"avx", leaf1.ecx, 28, avx_state},
      {"f16c", leaf1.ecx, 29, avx_state},
      {"lahf_lm", ext1.ecx, 0, always},
      {"lzcnt", ext1.ecx, 5, always},
      {"bmi1", leaf7.ebx, 3, always},
      {"avx2", leaf7.ebx, 5, avx_state},
      {"bmi2", leaf7.ebx, 8, always},
      {"avx512f", leaf7.ebx, 16, avx512_state},
      {"avx512dq", leaf7.ebx, 17, avx512_state},
      {"avx512ifma", leaf7.ebx, 21, avx512_state},
      {"avx512cd", leaf7.ebx, 28, avx512_state},
      {"avx512bw", leaf7.ebx, 30, avx512_state},
      {"avx512vl", leaf7.ebx, 31, avx512_state},
      {"avx512vbmi", leaf7.ecx, 1, avx512_state},
      {"avx512vnni", leaf7.ecx, 11, avx512_state},
      {"avx512bf16", leaf7_1.eax, 5, avx512_state},
      {"avxvnni", leaf7_1.eax, 4, avx_state},
      {"avx512fp16", leaf7.edx, 23, avx512_state},
      {"amx-bf16", leaf7.edx, 22, amx_state},
      {"amx-tile", leaf7.edx, 24, amx_state},
      {"amx-int8", leaf7.edx, 25, amx_state},
  };
  for (const Bit& b : bits) {
    if (b.usable && (b.reg & (1u << b.bit))) d.features.push_back(b.name);
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
}

#elif defined(__aarch64__)

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

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

void Probe(CpuInfo& d) {
  d.architecture = "aarch64";
  const uint64_t midr = ReadMidr();
  d.implementer = static_cast<int>((midr >> 24) & 0xFF);
  d.family = static_cast<int>((midr >> 16) & 0xF);
  d.model = static_cast<int>((midr >> 4) & 0xFFF);
  d.stepping = static_cast<int>(((midr >> 20) & 0xF) << 4 | (midr & 0xF));

  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  // Bit positions of the Linux arm64 ABI (asm/hwcap.h), stable across kernels.
  struct Bit {
    const char* name;
    unsigned long word;
    int bit;
  };
  const Bit bits[] = {
      {"fp", hwcap, 0},      {"asimd", hwcap, 1},    {"aes", hwcap, 3},   {"sha2", hwcap, 6},  {"crc32", hwcap, 7},
      {"atomics", hwcap, 8}, {"fphp", hwcap, 9},     {"fp16", hwcap, 10}, {"rdm", hwcap, 12},  {"fcma", hwcap, 14},
      {"lrcpc", hwcap, 15},  {"dotprod", hwcap, 20}, {"sve", hwcap, 22},  {"sve2", hwcap2, 1}, {"i8mm", hwcap2, 13},
      {"bf16", hwcap2, 14},  {"sme", hwcap2, 23},
  };
  for (const Bit& b : bits) {
    if (b.word & (1ul << b.bit)) d.features.push_back(b.name);
  }
}

#else

void Probe(CpuInfo& d) { d.architecture = "unknown"; }

#endif

CpuInfo Detect() {
  CpuInfo d;
  Probe(d);
  std::sort(d.features.begin(), d.features.end());
  d.avx2 = d.Has("avx2");
  d.fma = d.Has("fma");
  d.f16c = d.Has("f16c");
  d.avx512f = d.Has("avx512f");
  d.avx512bw = d.Has("avx512bw");
  d.avx512dq = d.Has("avx512dq");
  d.avx512vl = d.Has("avx512vl");
  d.avx512vnni = d.Has("avx512vnni");
  d.avxvnni = d.Has("avxvnni");
  d.neon = d.Has("asimd");
  return d;
}

// 0 portable, 1 the first SIMD level (avx2, neon), 2 avx512.
int Rank(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return 0;
    case Isa::kAvx2:
      return 1;
    case Isa::kNeon:
      return 1;
    case Isa::kAvx512:
      return 2;
  }
  return 0;
}

// The cap: requested (env or SetMaxIsa) until first use, then fixed.
struct Cap {
  std::mutex mutex;
  bool fixed = false;
  bool set_by_call = false;
  bool from_env = false;
  Isa requested = Isa::kAvx512;  // meaningful only when set_by_call or from_env
  Isa value = Isa::kPortable;
};

Cap& TheCap() {
  static Cap* cap = new Cap;
  return *cap;
}

// The best host level whose rank is at most `rank`.
Isa HostIsaAtMost(int rank) {
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon}) {
    if (Rank(isa) <= rank && CpuSupportsIsa(isa)) return isa;
  }
  return Isa::kPortable;
}

std::atomic<int> cap_rank{-1};  // Rank(MaxIsa()) once fixed

int CapRank() {
  int rank = cap_rank.load(std::memory_order_acquire);
  if (rank < 0) rank = Rank(MaxIsa());
  return rank;
}

}  // namespace

bool CpuInfo::Has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

const CpuInfo& HostCpu() {
  static const CpuInfo* host = new CpuInfo(Detect());
  return *host;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return "portable";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "?";
}

bool ParseIsa(const std::string& text, Isa* isa) {
  for (Isa candidate : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (text == IsaName(candidate)) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

bool CpuSupportsIsa(Isa isa) {
  const CpuInfo& c = HostCpu();
  switch (isa) {
    case Isa::kPortable:
      return true;
    case Isa::kAvx2:
      return c.avx2 && c.fma && c.f16c;
    case Isa::kAvx512:
      return c.avx2 && c.fma && c.f16c && c.avx512f && c.avx512bw && c.avx512dq && c.avx512vl;
    case Isa::kNeon:
      return c.neon;
  }
  return false;
}

Isa HostIsa() { return HostIsaAtMost(2); }

Isa MaxIsa() {
  Cap& cap = TheCap();
  std::lock_guard<std::mutex> lock(cap.mutex);
  if (!cap.fixed) {
    if (!cap.set_by_call) {
      const char* env = std::getenv("ONNX_LIGHT_MAX_ISA");
      const std::string text = env ? env : "";
      if (!text.empty() && text != "native") {
        cap.from_env = true;
        if (!ParseIsa(text, &cap.requested)) {
          // A typo must not silently run uncapped: cap at the baseline and say so.
          std::fprintf(stderr,
                       "onnx_light: ONNX_LIGHT_MAX_ISA=%s is not one of portable, avx2, avx512, neon, native; "
                       "capping at portable\n",
                       text.c_str());
          cap.requested = Isa::kPortable;
        }
      }
    }
    cap.value = (cap.set_by_call || cap.from_env) ? HostIsaAtMost(Rank(cap.requested)) : HostIsa();
    cap.fixed = true;
    cap_rank.store(Rank(cap.value), std::memory_order_release);
  }
  return cap.value;
}

bool SetMaxIsa(Isa requested) {
  Cap& cap = TheCap();
  {
    std::lock_guard<std::mutex> lock(cap.mutex);
    if (!cap.fixed) {
      cap.set_by_call = true;
      cap.requested = requested;
      return true;
    }
  }
  return MaxIsa() == HostIsaAtMost(Rank(requested));
}

bool IsaEnabled(Isa isa) { return isa == Isa::kPortable || (Rank(isa) <= CapRank() && CpuSupportsIsa(isa)); }

std::string IsaDisabledReason(Isa isa) {
  if (IsaEnabled(isa)) return "";
  if (!CpuSupportsIsa(isa)) {
    return std::string("the CPU (or this architecture) has no ") + IsaName(isa);
  }
  const Cap& cap = TheCap();
  return std::string("capped at ") + IsaName(MaxIsa()) + (cap.set_by_call ? " by SetMaxIsa" : " by ONNX_LIGHT_MAX_ISA");
}

}  // namespace onnx_light
