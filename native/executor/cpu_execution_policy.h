// CpuExecutionPolicy: how a session's kernels may use the CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native/core/status.h"

namespace onnx_light {

struct CpuExecutionPolicy {
  // Participants in a parallel region, the calling thread included: 0 = one per physical
  // core available to this process, 1 = serial (no worker threads at all).
  int num_threads = 0;
  // How long an idle worker spins waiting for the next region before it parks. Bounded so
  // that an idle pool burns no CPU; 0 parks at once.
  int64_t spin_microseconds = 200;
  // Empty: no pinning. Otherwise worker i is pinned to affinity[i % size()].
  std::vector<int> affinity;
  // How long the caller of a region waits, before running its own share, for the workers
  // it asked for to join (yielding its core meanwhile). 0, the default, never waits: a
  // late worker's blocks are run by whoever is free. The forced-parallel test mode sets it
  // so that every admitted participant really runs blocks even in a region of a few
  // microseconds (what ThreadSanitizer needs to see); never worth it for serving.
  int64_t join_wait_microseconds = 0;

  static constexpr int kMaxThreads = 1024;
  static constexpr int64_t kMaxSpinMicroseconds = 1000000;

  static CpuExecutionPolicy Serial() { return CpuExecutionPolicy{1, 0, {}, 0}; }

  // InvalidArgument for negative or absurd thread counts, negative or huge spin and join
  // windows
  // and CPUs that do not exist or are not available to this process.
  Status Validate() const;
  // num_threads with 0 resolved to the physical core count.
  int EffectiveThreads() const;
  // Canonical text, used as the executor registry key and in execution descriptors.
  std::string Key() const;

  bool operator==(const CpuExecutionPolicy& o) const {
    return num_threads == o.num_threads && spin_microseconds == o.spin_microseconds && affinity == o.affinity &&
           join_wait_microseconds == o.join_wait_microseconds;
  }
};

// Physical cores (distinct package/core pairs) among the CPUs this process may run on;
// falls back to the logical count when sysfs says nothing.
int PhysicalCoreCount();
// Logical CPUs this process may run on (sched_getaffinity).
std::vector<int> AvailableCpus();

}  // namespace onnx_light
