// Allocators that account what they hand out, and the bounded scratch arena kernels use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

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
// session thread (workers never allocate: scratch is reserved before a region starts),
// but Default() is shared, so the block cache is guarded by a mutex (uncontended in a
// session, so it costs a few nanoseconds).
//
// Small blocks (up to kMaxCachedBlock bytes) are rounded up to a power-of-two size class
// and, when freed, kept on a per-class free list for the next request of that class:
// glibc's aligned_alloc takes a slow path for small blocks, and a session run frees and
// reallocates the same sizes node after node. The stats count what callers asked for
// (cached blocks are not "current"), and the limit applies to those requested bytes.
class Allocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr int64_t kNoLimit = INT64_MAX;
  // Largest block size served from the cache; larger blocks go straight to the system.
  static constexpr size_t kMaxCachedBlock = size_t{64} << 10;
  // Bytes the free lists may hold in total; frees beyond it return blocks to the system.
  static constexpr size_t kMaxCachedBytes = size_t{16} << 20;

  explicit Allocator(int64_t limit_bytes = kNoLimit) : limit_bytes_(limit_bytes) {}
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // ResourceExhausted when over the limit or when the system refuses. Zero bytes gives a
  // valid unique pointer.
  StatusOr<void*> Allocate(size_t bytes);
  void Free(void* ptr, size_t bytes);

  AllocationStats stats() const;
  void ResetPeak();
  int64_t limit_bytes() const { return limit_bytes_; }

  // Bytes currently held on the free lists (not counted in stats().current_bytes).
  size_t cached_bytes() const;

  // Process-wide allocator for tensors made outside any session (tests, Python helpers).
  static Allocator* Default();

 private:
  // Size classes 64, 128, ..., kMaxCachedBlock bytes.
  static constexpr int kNumClasses = 11;
  static_assert((kAlignment << (kNumClasses - 1)) == kMaxCachedBlock, "size classes");
  struct FreeBlock {
    FreeBlock* next;
  };

  void* TakeCached(int size_class);
  bool PutCached(void* ptr, int size_class);

  const int64_t limit_bytes_;
  mutable std::mutex cache_mutex_;
  FreeBlock* free_lists_[kNumClasses] = {};
  size_t cached_bytes_ = 0;
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
