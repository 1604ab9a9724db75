#include "native/executor/region_events.h"

#include <algorithm>

namespace onnx_light {

EventCollector::EventCollector(size_t region_capacity, size_t node_capacity)
    : regions_(region_capacity), node_capacity_(node_capacity) {
  nodes_.reserve(std::min<size_t>(node_capacity, 4096));
}

void EventCollector::RecordRegion(const RegionEvent& event) {
  const size_t slot = next_region_.fetch_add(1, std::memory_order_relaxed);
  if (slot >= regions_.size()) {
    dropped_regions_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  regions_[slot] = event;
}

void EventCollector::RecordNode(NodeEvent event) {
  if (nodes_.size() >= node_capacity_) {
    ++dropped_nodes_;
    return;
  }
  nodes_.push_back(std::move(event));
}

std::vector<RegionEvent> EventCollector::regions() const {
  const size_t n = std::min(next_region_.load(), regions_.size());
  return std::vector<RegionEvent>(regions_.begin(), regions_.begin() + n);
}

void EventCollector::Clear() {
  next_region_ = 0;
  dropped_regions_ = 0;
  nodes_.clear();
  dropped_nodes_ = 0;
}

}  // namespace onnx_light
