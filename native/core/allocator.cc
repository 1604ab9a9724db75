#include "native/core/allocator.h"

#include <cstdlib>
#include <new>

namespace onnx_light {
namespace {
size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// The size class of a request (-1 when too large to cache) and the class's block size.
int SizeClass(size_t bytes) {
  if (bytes > Allocator::kMaxCachedBlock) return -1;
  int c = 0;
  while ((Allocator::kAlignment << c) < bytes) ++c;
  return c;
}
size_t ClassBytes(int size_class) { return Allocator::kAlignment << size_class; }
}  // namespace

Allocator::~Allocator() {
  for (FreeBlock*& head : free_lists_) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
}

void* Allocator::TakeCached(int size_class) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  FreeBlock* block = free_lists_[size_class];
  if (block == nullptr) return nullptr;
  free_lists_[size_class] = block->next;
  cached_bytes_ -= ClassBytes(size_class);
  return block;
}

bool Allocator::PutCached(void* ptr, int size_class) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cached_bytes_ + ClassBytes(size_class) > kMaxCachedBytes) return false;
  auto* block = static_cast<FreeBlock*>(ptr);
  block->next = free_lists_[size_class];
  free_lists_[size_class] = block;
  cached_bytes_ += ClassBytes(size_class);
  return true;
}

size_t Allocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return cached_bytes_;
}

StatusOr<void*> Allocator::Allocate(size_t bytes) {
  if (bytes > static_cast<size_t>(INT64_MAX) - kAlignment) {
    return ResourceExhausted("allocation of ", bytes, " bytes is larger than can be addressed");
  }
  const int64_t n = static_cast<int64_t>(bytes);
  const int64_t now = current_bytes_.fetch_add(n, std::memory_order_relaxed) + n;
  if (now > limit_bytes_) {
    current_bytes_.fetch_sub(n, std::memory_order_relaxed);
    return ResourceExhausted("allocation of ", bytes, " bytes would exceed the memory limit of ",
                             limit_bytes_, " bytes (", now - n, " in use)");
  }
  const int size_class = SizeClass(bytes);
  void* p = size_class >= 0 ? TakeCached(size_class) : nullptr;
  if (p == nullptr) {
    const size_t block = size_class >= 0 ? ClassBytes(size_class) : RoundUp(bytes, kAlignment);
    p = std::aligned_alloc(kAlignment, block);
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
  const int size_class = SizeClass(bytes);
  if (size_class < 0 || !PutCached(ptr, size_class)) std::free(ptr);
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
    return ResourceExhausted("scratch request of ", bytes, " bytes exceeds the reserved ",
                             capacity_, " bytes (", used_, " in use)");
  }
  void* p = static_cast<char*>(base_) + used_;
  used_ += size;
  if (used_ > peak_) peak_ = used_;
  return p;
}

}  // namespace onnx_light
