#include "native/core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <new>

namespace onnx_light {
namespace {
size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Index of a small block size (64 << index).
int SmallClassIndex(size_t block_bytes) {
  int c = 0;
  while ((Allocator::kAlignment << c) < block_bytes) ++c;
  return c;
}

// Writes every page of [p, p + bytes) now: one madvise where the kernel has
// MADV_POPULATE_WRITE (Linux 5.14), else a write per page (the block is uninitialised, so
// writing zeros changes nothing a caller may rely on).
void Prefault(void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  volatile char* bytes_p = static_cast<char*>(p);
  for (size_t i = 0; i < bytes; i += page) bytes_p[i] = 0;
}

// A fresh block from the system (nullptr when refused). A large one is advised and
// populated as the page policy `code` says (page_policy.h's PagePolicy::code(): huge pages,
// the system's choice or small pages, times two, plus one to prefault).
void* SystemAllocate(size_t block_bytes, int code) {
  const bool large = block_bytes >= Allocator::kHugePageMinimum;
  const int pages = code / 2;  // 0 huge, 1 system, 2 small
  const size_t alignment = large && pages != 1 ? kHugePageBytes : Allocator::kAlignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, block_bytes) != 0) return nullptr;
  if (!large) return p;
    // Advice only: where transparent huge pages are off, MADV_HUGEPAGE changes nothing.
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  if (pages == 0) madvise(p, block_bytes, MADV_HUGEPAGE);
  if (pages == 2) madvise(p, block_bytes, MADV_NOHUGEPAGE);
#endif
  if (code % 2 == 1) Prefault(p, block_bytes);
  return p;
}
}  // namespace

namespace internal {
// The page policy of Default()'s fresh large blocks, which hold the packed weights sessions
// keep: a PagePolicy::code() (0: huge pages, what every other allocator uses). Written only by
// //native/core:page_policy (its names, the environment, the setter), which reads it back.
std::atomic<int> default_allocator_page_policy{0};
}  // namespace internal

size_t Allocator::BlockBytes(size_t bytes) {
  if (bytes <= kMaxCachedBlock) return kAlignment << SmallClassIndex(bytes);
  size_t power = kMaxCachedBlock;
  while (power <= bytes / 2) power *= 2;  // largest power of two <= bytes
  return RoundUp(bytes, power / 4);
}

Allocator::~Allocator() { ReleaseCached(); }

void Allocator::ReleaseCached() {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  for (FreeBlock*& head : free_lists_) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
  cached_small_bytes_ = 0;
  for (const LargeBlock& block : large_blocks_) std::free(block.ptr);
  large_blocks_.clear();
  cached_large_bytes_ = 0;
}

void* Allocator::TakeCached(size_t block_bytes) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (block_bytes <= kMaxCachedBlock) {
    FreeBlock*& head = free_lists_[SmallClassIndex(block_bytes)];
    FreeBlock* block = head;
    if (block == nullptr) return nullptr;
    head = block->next;
    cached_small_bytes_ -= block_bytes;
    return block;
  }
  // Newest first: the most recently freed block is the likeliest to be in cache.
  for (auto it = large_blocks_.rbegin(); it != large_blocks_.rend(); ++it) {
    if (it->bytes != block_bytes) continue;
    void* p = it->ptr;
    large_blocks_.erase(std::next(it).base());
    cached_large_bytes_ -= block_bytes;
    return p;
  }
  return nullptr;
}

bool Allocator::PutCached(void* ptr, size_t block_bytes) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (block_bytes <= kMaxCachedBlock) {
    if (cached_small_bytes_ + block_bytes > kMaxCachedBytes) return false;
    FreeBlock*& head = free_lists_[SmallClassIndex(block_bytes)];
    auto* block = static_cast<FreeBlock*>(ptr);
    block->next = head;
    head = block;
    cached_small_bytes_ += block_bytes;
    return true;
  }
  if (block_bytes > max_cached_large_bytes_) return false;
  size_t evict = 0;  // oldest blocks that make room
  while (cached_large_bytes_ + block_bytes > max_cached_large_bytes_) {
    cached_large_bytes_ -= large_blocks_[evict].bytes;
    std::free(large_blocks_[evict].ptr);
    ++evict;
  }
  large_blocks_.erase(large_blocks_.begin(), large_blocks_.begin() + evict);
  large_blocks_.push_back(LargeBlock{ptr, block_bytes});
  cached_large_bytes_ += block_bytes;
  return true;
}

size_t Allocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return cached_small_bytes_ + cached_large_bytes_;
}

StatusOr<void*> Allocator::Allocate(size_t bytes) {
  if (bytes > static_cast<size_t>(INT64_MAX) - kAlignment) {
    return ResourceExhausted("allocation of ", bytes, " bytes is larger than can be addressed");
  }
  const int64_t n = static_cast<int64_t>(bytes);
  const int64_t now = current_bytes_.fetch_add(n, std::memory_order_relaxed) + n;
  if (now > limit_bytes_) {
    current_bytes_.fetch_sub(n, std::memory_order_relaxed);
    return ResourceExhausted("allocation of ", bytes, " bytes would exceed the memory limit of ", limit_bytes_,
                             " bytes (", now - n, " in use)");
  }
  const size_t block_bytes = BlockBytes(bytes);
  void* p = TakeCached(block_bytes);
  if (p == nullptr) {
    p = SystemAllocate(block_bytes,
                       this == Default() ? internal::default_allocator_page_policy.load(std::memory_order_relaxed) : 0);
  }
  if (p == nullptr) {
    current_bytes_.fetch_sub(n, std::memory_order_relaxed);
    return ResourceExhausted("the system refused an allocation of ", bytes, " bytes");
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  bytes_allocated_.fetch_add(n, std::memory_order_relaxed);
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void Allocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  if (!PutCached(ptr, BlockBytes(bytes))) std::free(ptr);
  current_bytes_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

AllocationStats Allocator::stats() const {
  AllocationStats s;
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.bytes_allocated = bytes_allocated_.load(std::memory_order_relaxed);
  s.current_bytes = current_bytes_.load(std::memory_order_relaxed);
  s.peak_bytes = peak_bytes_.load(std::memory_order_relaxed);
  return s;
}

void Allocator::ResetPeak() { peak_bytes_.store(current_bytes_.load(std::memory_order_relaxed)); }

Allocator* Allocator::Default() {
  static Allocator* allocator = new Allocator();  // never destroyed: outlives static tensors
  return allocator;
}

ScratchArena::ScratchArena(Allocator* allocator, size_t capacity_bytes)
    : allocator_(allocator), capacity_(RoundUp(capacity_bytes, Allocator::kAlignment)) {
  if (capacity_ == 0) return;
  auto p = allocator_->Allocate(capacity_);
  if (p.ok()) {
    base_ = *p;
  } else {
    status_ = p.status();
    capacity_ = 0;
  }
}

ScratchArena::~ScratchArena() { allocator_->Free(base_, capacity_); }

StatusOr<void*> ScratchArena::Allocate(size_t bytes) {
  const size_t size = RoundUp(bytes, Allocator::kAlignment);
  if (size > capacity_ - used_) {
    return ResourceExhausted("scratch request of ", bytes, " bytes exceeds the reserved ", capacity_, " bytes (", used_,
                             " in use)");
  }
  void* p = static_cast<char*>(base_) + used_;
  used_ += size;
  if (used_ > peak_) peak_ = used_;
  return p;
}

}  // namespace onnx_light
