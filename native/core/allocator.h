// Allocators that account what they hand out, and the bounded scratch arena kernels use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "native/core/status.h"

namespace onnx_light {

struct AllocationStats {
  int64_t allocations = 0;      // number of successful Allocate calls
  int64_t bytes_allocated = 0;  // sum of their sizes
  int64_t current_bytes = 0;    // live bytes now
  int64_t peak_bytes = 0;       // highest current_bytes seen
};

// 64-byte aligned allocations with accounting and an optional limit. Stats are atomic so
// that reading them from another thread is safe; the allocator itself is meant for the
// session thread (workers never allocate: scratch is reserved before a region starts),
// but Default() is shared, so the block caches are guarded by a mutex (uncontended in a
// session, so it costs a few nanoseconds).
//
// Freed blocks are kept for the next request of the same size class instead of going back
// to the system, because a session run frees and reallocates the same sizes node after
// node and run after run:
// - small blocks (up to kMaxCachedBlock) are rounded up to a power of two: glibc's
//   aligned_alloc takes a slow path for them;
// - large blocks are rounded up to a quarter power of two (at most 25% slack, and pages
//   never touched cost no memory): a fresh large block comes from mmap and pays a page
//   fault per page on first touch (a 64 MiB output: ~20 ms, more than the Add that fills
//   it), while a cached one is already mapped. Fresh blocks of kHugePageMinimum bytes or
//   more are aligned to 2 MiB and advised as transparent huge pages, which cuts the
//   first-touch cost by about 3x where the kernel allows it.
// Each cache has a byte budget; a free beyond it returns the block (for large blocks, the
// least recently cached ones first). The stats count what callers asked for (cached blocks
// are not "current"), and the limit applies to those requested bytes.
class Allocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr int64_t kNoLimit = INT64_MAX;
  // Largest block size served from the small-block cache.
  static constexpr size_t kMaxCachedBlock = size_t{64} << 10;
  // Bytes the small-block free lists may hold in total.
  static constexpr size_t kMaxCachedBytes = size_t{16} << 20;
  // Default budget of the large-block cache: a few outputs of a 16M-element op.
  static constexpr size_t kDefaultMaxCachedLargeBytes = size_t{512} << 20;
  // Fresh blocks this large are 2 MiB aligned and advised as huge pages.
  static constexpr size_t kHugePageMinimum = size_t{4} << 20;

  explicit Allocator(int64_t limit_bytes = kNoLimit, size_t max_cached_large_bytes = kDefaultMaxCachedLargeBytes)
      : limit_bytes_(limit_bytes), max_cached_large_bytes_(max_cached_large_bytes) {}
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

  // Bytes currently held by the caches (not counted in stats().current_bytes).
  size_t cached_bytes() const;
  // Returns every cached block to the system.
  void ReleaseCached();

  // The block size a request of `bytes` occupies (its size class).
  static size_t BlockBytes(size_t bytes);

  // Process-wide allocator for tensors made outside any session (tests, Python helpers).
  static Allocator* Default();

 private:
  // Small size classes 64, 128, ..., kMaxCachedBlock bytes.
  static constexpr int kNumClasses = 11;
  static_assert((kAlignment << (kNumClasses - 1)) == kMaxCachedBlock, "size classes");
  struct FreeBlock {
    FreeBlock* next;
  };
  struct LargeBlock {
    void* ptr;
    size_t bytes;  // its size class
  };

  void* TakeCached(size_t block_bytes);
  bool PutCached(void* ptr, size_t block_bytes);

  const int64_t limit_bytes_;
  const size_t max_cached_large_bytes_;
  mutable std::mutex cache_mutex_;
  FreeBlock* free_lists_[kNumClasses] = {};
  size_t cached_small_bytes_ = 0;
  std::vector<LargeBlock> large_blocks_;  // oldest first
  size_t cached_large_bytes_ = 0;
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
