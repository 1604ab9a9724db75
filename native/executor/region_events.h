// Region and node events: what the benchmarks and the ONNX Runtime attribution read.
// A collector has fixed capacity, counts what it drops, and costs nothing when absent
// (kernels receive a null collector when events are off).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace onnx_light {

struct RegionEvent {
  const char* label = "";          // region label from the call site's ParallelPlan (static storage)
  const char* kernel = "";         // op type of the kernel that opened it (static storage)
  int64_t total = 0;               // work units in the region
  int64_t grain = 0;               // smallest block
  int requested_participants = 0;  // what the plan and executor allowed
  int admitted_participants = 0;   // after capping by the number of blocks
  int observed_participants = 0;   // participants that ran at least one block
  int joined_participants = 0;     // the caller and the workers that joined (ran the task at all)
  bool nested = false;             // opened from inside another region: ran inline
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;  // summed thread CPU time of the participants
  // Where a region's wall time went (0 for a region run serially): from its start to the
  // caller's task (dispatch: waking parked workers, during which the caller may be
  // preempted; under a join wait, also that wait), to the first worker's task (-1: no
  // worker joined), and from the caller's task returning to the region's end (waiting for
  // workers that joined, e.g. one the OS descheduled after it joined; under a join wait,
  // also the caller's catch-up of late workers' blocks; in a region Run ran inline, the
  // other participants' tasks).
  int64_t dispatch_ns = 0;
  int64_t first_join_ns = -1;
  int64_t end_wait_ns = 0;
};

struct NodeEvent {
  std::string op;
  std::string node;
  int64_t duration_ns = 0;
  int64_t allocations = 0;
  int64_t bytes_allocated = 0;
  int64_t copies = 0;  // tensors copied rather than aliased
  int64_t peak_scratch_bytes = 0;
};

class EventCollector {
 public:
  explicit EventCollector(size_t region_capacity = 1 << 16, size_t node_capacity = 1 << 16);

  // Thread-safe; drops (and counts) events past capacity.
  void RecordRegion(const RegionEvent& event);
  // Session thread only.
  void RecordNode(NodeEvent event);

  std::vector<RegionEvent> regions() const;
  const std::vector<NodeEvent>& nodes() const { return nodes_; }
  int64_t dropped_regions() const { return dropped_regions_.load(); }
  int64_t dropped_nodes() const { return dropped_nodes_; }
  void Clear();

 private:
  std::vector<RegionEvent> regions_;
  std::atomic<size_t> next_region_{0};
  std::atomic<int64_t> dropped_regions_{0};
  size_t node_capacity_;
  std::vector<NodeEvent> nodes_;
  int64_t dropped_nodes_ = 0;
};

}  // namespace onnx_light
