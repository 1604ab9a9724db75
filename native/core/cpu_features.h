// The one CPU-feature probe of the process, and the ISA cap that kernels obey.
//
// Contract:
//   - HostCpu() reads CPUID/XGETBV (x86-64) or HWCAP/MIDR (aarch64) once and caches it. It
//     says what the hardware and the OS support, uncapped. The tuning processor descriptor
//     (native/tuning/processor.cc) is built from it, so profiles and kernel dispatch see
//     the same features. Nothing else in native/ may execute CPUID or
//     __builtin_cpu_supports: a kernel asks IsaEnabled(), a test asks IsaEnabled() and
//     IsaCapNote() (native/kernels/common/isa_variants.h wraps both).
//   - Isa names the SIMD levels the kernels have code for. A level includes everything
//     below it on its architecture (kAvx512 implies kAvx2); kNeon is aarch64's only level.
//   - The cap (MaxIsa) comes from the environment variable ONNX_LIGHT_MAX_ISA
//     ("portable", "avx2", "avx512", "neon"; unset, empty or "native": no cap), or from
//     SetMaxIsa() called before the first kernel dispatch. It is process-wide and fixed
//     at its first use, because kernels choose their variant once (function-pointer
//     tables in statics): a later SetMaxIsa with a different cap fails instead of
//     half-applying. It is not a CpuExecutionPolicy field for the same reason: policies
//     are per session (and key shared executors), dispatch is per process.
//   - IsaEnabled(isa) = the CPU supports isa and isa is not above the cap. Kernels choose
//     the best enabled variant; the portable variant is always enabled.
//
// Example:
//   if (IsaEnabled(Isa::kAvx512)) return &RowAvx512;
//   if (IsaEnabled(Isa::kAvx2)) return &RowAvx2;
//   return &RowPortable;
#pragma once

#include <string>
#include <vector>

namespace onnx_light {

// What the hardware (and the OS, for register state) supports.
struct CpuInfo {
  std::string architecture;  // "x86_64", "aarch64", "unknown"
  // x86: CPUID vendor string; aarch64: MIDR implementer (see processor.cc for names).
  std::string vendor;
  int implementer = 0;                // aarch64 MIDR implementer; 0 on x86
  int family = 0;                     // x86: display family; aarch64: MIDR architecture field
  int model = 0;                      // x86: display model; aarch64: MIDR part number
  int stepping = 0;                   // x86: stepping; aarch64: MIDR variant << 4 | revision
  std::string model_name;             // x86 brand string; empty elsewhere
  std::vector<std::string> features;  // sorted: "avx2", "fma", "asimd", "sve", ...

  // Named bits the kernels need (each also in `features`).
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512vnni = false;  // selects the integer GEMM engine's VNNI microkernel (quantized/igemm)
  bool avxvnni = false;     // probed; no kernel uses the VEX-encoded AVX-VNNI yet
  bool neon = false;        // aarch64 "asimd"

  bool Has(const std::string& feature) const;
};

// The host, probed once.
const CpuInfo& HostCpu();

// SIMD levels with kernel code. Order within an architecture: portable < avx2 < avx512;
// portable < neon.
enum class Isa { kPortable, kAvx2, kAvx512, kNeon };

// "portable", "avx2", "avx512", "neon".
const char* IsaName(Isa isa);
// Parses IsaName's output; false for anything else.
bool ParseIsa(const std::string& text, Isa* isa);
// What the hardware can run, ignoring the cap. kAvx2 needs AVX2, FMA and F16C; kAvx512
// needs kAvx2 and AVX-512 F, BW, DQ and VL; kNeon needs Advanced SIMD.
bool CpuSupportsIsa(Isa isa);
// The best level the CPU supports (ignoring the cap).
Isa HostIsa();

// The cap: the highest level kernels may use (HostIsa() when uncapped). Fixed at first use.
Isa MaxIsa();
// Caps the ISA for the rest of the process. True if it took effect (or equals the cap
// already fixed); false once kernels have chosen under a different cap. A cap above the
// CPU's level is the CPU's level.
bool SetMaxIsa(Isa cap);
// CpuSupportsIsa(isa) and not above MaxIsa(). Always true for kPortable.
bool IsaEnabled(Isa isa);
// Why IsaEnabled(isa) is false, for skip messages: "the CPU has no avx512" or
// "capped at avx2 by ONNX_LIGHT_MAX_ISA"; empty when enabled.
std::string IsaDisabledReason(Isa isa);

}  // namespace onnx_light
