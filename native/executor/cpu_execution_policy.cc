#include "native/executor/cpu_execution_policy.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <utility>

namespace onnx_light {

std::vector<int> AvailableCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

int PhysicalCoreCount() {
  static const int count = [] {
    std::set<std::pair<int, int>> cores;
    const std::vector<int> cpus = AvailableCpus();
    for (int cpu : cpus) {
      const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      std::ifstream package(base + "physical_package_id"), core(base + "core_id");
      int p = -1, c = -1;
      if (!(package >> p) || !(core >> c)) return static_cast<int>(cpus.size());
      cores.emplace(p, c);
    }
    return cores.empty() ? static_cast<int>(cpus.size()) : static_cast<int>(cores.size());
  }();
  return count;
}

Status CpuExecutionPolicy::Validate() const {
  if (num_threads < 0 || num_threads > kMaxThreads) {
    return InvalidArgument("CpuExecutionPolicy: num_threads must be in [0, ", kMaxThreads,
                           "] (0 = one per physical core), got ", num_threads);
  }
  if (spin_microseconds < 0 || spin_microseconds > kMaxSpinMicroseconds) {
    return InvalidArgument("CpuExecutionPolicy: spin_microseconds must be in [0, ", kMaxSpinMicroseconds, "], got ",
                           spin_microseconds);
  }
  if (join_wait_microseconds < 0 || join_wait_microseconds > kMaxSpinMicroseconds) {
    return InvalidArgument("CpuExecutionPolicy: join_wait_microseconds must be in [0, ", kMaxSpinMicroseconds,
                           "], got ", join_wait_microseconds);
  }
  if (!affinity.empty()) {
    const std::vector<int> available = AvailableCpus();
    const std::set<int> allowed(available.begin(), available.end());
    for (int cpu : affinity) {
      if (!allowed.count(cpu)) {
        std::string list;
        for (int c : available) list += (list.empty() ? "" : ",") + std::to_string(c);
        return InvalidArgument("CpuExecutionPolicy: affinity names CPU ", cpu,
                               ", which does not exist or is not available to this process (available: ", list, ")");
      }
    }
  }
  return Status::Ok();
}

int CpuExecutionPolicy::EffectiveThreads() const { return num_threads == 0 ? PhysicalCoreCount() : num_threads; }

std::string CpuExecutionPolicy::Key() const {
  std::string key = StrCat("threads=", EffectiveThreads(), ";spin_us=", spin_microseconds, ";affinity=");
  if (join_wait_microseconds > 0) key = StrCat("join_wait_us=", join_wait_microseconds, ";", key);
  if (affinity.empty()) return key + "none";
  for (size_t i = 0; i < affinity.size(); ++i) key += (i ? "," : "") + std::to_string(affinity[i]);
  return key;
}

}  // namespace onnx_light
