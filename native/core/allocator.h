// Allocators that account what they hand out, and the bounded scratch arena kernels use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "native/core/status.h"

namespace onnx_light {

struct AllocationStats {
  int64_t allocations = 0;     // number of successful Allocate calls
  int64_t bytes_allocated = 0; // sum of their sizes
  int64_t current_bytes = 0;   // live bytes now
  int64_t peak_bytes = 0;      // highest current_bytes seen
};

// 64-byte aligned allocations with accounting and an optional limit. Stats are atomic so
// that reading them from another thread is safe; the allocator itself is meant for the
// session thread (workers never allocate: scratch is reserved before a region starts).
class Allocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr int64_t kNoLimit = INT64_MAX;

  explicit Allocator(int64_t limit_bytes = kNoLimit) : limit_bytes_(limit_bytes) {}
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // ResourceExhausted when over the limit or when the system refuses. Zero bytes gives a
  // valid unique pointer.
  StatusOr<void*> Allocate(size_t bytes);
  void Free(void* ptr, size_t bytes);

  AllocationStats stats() const;
  void ResetPeak();
  int64_t limit_bytes() const { return limit_bytes_; }

  // Process-wide allocator for tensors made outside any session (tests, Python helpers).
  static Allocator* Default();

 private:
  const int64_t limit_bytes_;
  std::atomic<int64_t> allocations_{0};
  std::atomic<int64_t> bytes_allocated_{0};
  std::atomic<int64_t> current_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
};

// A bump arena of fixed capacity reserved up front. Kernels reserve what a region needs
// before launching it and give each block its slice, so workers never call an allocator.
class ScratchArena {
 public:
  ScratchArena(Allocator* allocator, size_t capacity_bytes);
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  // The reservation's status (ResourceExhausted if the allocator refused).
  const Status& status() const { return status_; }

  // 64-byte aligned slice; ResourceExhausted when the arena's capacity would be exceeded.
  StatusOr<void*> Allocate(size_t bytes);
  template <typename T>
  StatusOr<T*> AllocateArray(size_t count) {
    OL_ASSIGN_OR_RETURN(void* p, Allocate(count * sizeof(T)));
    return static_cast<T*>(p);
  }
  void Reset() { used_ = 0; }

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  size_t peak() const { return peak_; }

 private:
  Allocator* allocator_;
  size_t capacity_;
  void* base_ = nullptr;
  size_t used_ = 0;
  size_t peak_ = 0;
  Status status_;
};

}  // namespace onnx_light
