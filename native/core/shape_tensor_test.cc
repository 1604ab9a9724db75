#include <vector>

#include <gtest/gtest.h>

#include "native/core/allocator.h"
#include "native/core/shape.h"
#include "native/core/tensor.h"
#include "native/core/value.h"

namespace onnx_light {
namespace {

TEST(Shape, CountsElements) {
  EXPECT_EQ(Shape({}).num_elements(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(Shape({2, 0, 4}).num_elements(), 0);
  EXPECT_EQ(Shape({2, 3, 4}).SizeFrom(1), 12);
  EXPECT_EQ(Shape({2, 3, 4}).SizeTo(2), 6);
  EXPECT_EQ(Shape({2, 3}).ToString(), "[2,3]");
}

TEST(Shape, RejectsNegativeAndOverflow) {
  auto neg = Shape::Create({2, -1});
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(neg.status().message().find("[2,-1]"), std::string::npos);
  auto huge = Shape::Create({int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("int64"), std::string::npos);
  auto bytes = Shape({int64_t{1} << 62}).CheckedByteSize(DataType::kDouble);
  EXPECT_FALSE(bytes.ok());
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(*NormalizeAxis(-1, 3), 2);
  EXPECT_EQ(*NormalizeAxis(0, 3), 0);
  EXPECT_FALSE(NormalizeAxis(3, 3).ok());
  EXPECT_FALSE(NormalizeAxis(-4, 3).ok());
}

TEST(Allocator, AccountsAllocationsAndPeak) {
  Allocator a;
  auto p = a.Allocate(1000);
  auto q = a.Allocate(24);
  ASSERT_TRUE(p.ok() && q.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % Allocator::kAlignment, 0u);
  a.Free(*p, 1000);
  a.Free(*q, 24);
  const AllocationStats s = a.stats();
  EXPECT_EQ(s.allocations, 2);
  EXPECT_EQ(s.bytes_allocated, 1024);
  EXPECT_EQ(s.current_bytes, 0);
  EXPECT_EQ(s.peak_bytes, 1024);
}

TEST(Allocator, ReusesFreedSmallBlocksOfTheSameSizeClass) {
  Allocator a;
  auto p = a.Allocate(100);  // size class 128
  ASSERT_TRUE(p.ok());
  a.Free(*p, 100);
  EXPECT_EQ(a.cached_bytes(), 128u);
  auto q = a.Allocate(120);  // same class: the cached block comes back
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, *p);
  EXPECT_EQ(a.cached_bytes(), 0u);
  auto r = a.Allocate(0);  // another class: a fresh aligned block
  ASSERT_TRUE(r.ok());
  EXPECT_NE(*r, *q);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*r) % Allocator::kAlignment, 0u);
  a.Free(*q, 120);
  a.Free(*r, 0);
  const AllocationStats s = a.stats();  // stats count requests, not cached blocks
  EXPECT_EQ(s.allocations, 3);
  EXPECT_EQ(s.bytes_allocated, 220);
  EXPECT_EQ(s.current_bytes, 0);
  EXPECT_EQ(s.peak_bytes, 120);  // q alone: p was freed before it, r is empty
  EXPECT_EQ(a.cached_bytes(), 128u + 64u);
}

TEST(Allocator, LargeSizeClassesAreQuarterPowersOfTwo) {
  EXPECT_EQ(Allocator::BlockBytes(0), 64u);
  EXPECT_EQ(Allocator::BlockBytes(Allocator::kMaxCachedBlock), Allocator::kMaxCachedBlock);
  // Just above the small classes: 64 KiB + 16 KiB steps.
  EXPECT_EQ(Allocator::BlockBytes(Allocator::kMaxCachedBlock + 1), size_t{80} << 10);
  EXPECT_EQ(Allocator::BlockBytes(size_t{64} << 20), size_t{64} << 20);
  EXPECT_EQ(Allocator::BlockBytes((size_t{64} << 20) + 1), size_t{80} << 20);
  for (size_t bytes : {size_t{100000}, size_t{3} << 20, (size_t{7} << 20) + 12345, size_t{1} << 33}) {
    const size_t block = Allocator::BlockBytes(bytes);
    EXPECT_GE(block, bytes);
    EXPECT_LE(block, bytes + bytes / 4) << bytes;
    EXPECT_EQ(block % Allocator::kAlignment, 0u);
  }
}

TEST(Allocator, ReusesFreedLargeBlocksOfTheSameSizeClass) {
  Allocator a;
  const size_t bytes = size_t{3} << 20;
  auto p = a.Allocate(bytes);
  ASSERT_TRUE(p.ok());
  static_cast<char*>(*p)[bytes - 1] = 1;
  a.Free(*p, bytes);
  EXPECT_EQ(a.cached_bytes(), Allocator::BlockBytes(bytes));
  EXPECT_EQ(a.stats().current_bytes, 0);
  auto q = a.Allocate(bytes - 1000);  // same class
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, *p);
  EXPECT_EQ(a.cached_bytes(), 0u);
  auto r = a.Allocate(bytes * 2);  // another class: nothing cached fits
  ASSERT_TRUE(r.ok());
  EXPECT_NE(*r, *q);
  a.Free(*q, bytes - 1000);
  a.Free(*r, bytes * 2);
  EXPECT_EQ(a.cached_bytes(), Allocator::BlockBytes(bytes) + Allocator::BlockBytes(bytes * 2));
  a.ReleaseCached();
  EXPECT_EQ(a.cached_bytes(), 0u);
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(Allocator, LargeBlockCacheKeepsToItsBudget) {
  const size_t block = size_t{256} << 10;
  Allocator a(Allocator::kNoLimit, /*max_cached_large_bytes=*/3 * block);
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) {
    auto p = a.Allocate(block);
    ASSERT_TRUE(p.ok());
    blocks.push_back(*p);
  }
  for (void* p : blocks) a.Free(p, block);
  EXPECT_EQ(a.cached_bytes(), 3 * block);  // the two oldest went back to the system
  auto too_big = a.Allocate(4 * block);    // larger than the whole budget: never cached
  ASSERT_TRUE(too_big.ok());
  a.Free(*too_big, 4 * block);
  EXPECT_EQ(a.cached_bytes(), 3 * block);
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(Allocator, HugeBlocksAreAlignedForHugePages) {
  Allocator a(Allocator::kNoLimit, /*max_cached_large_bytes=*/0);
  auto p = a.Allocate(Allocator::kHugePageMinimum);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % (size_t{2} << 20), 0u);
  a.Free(*p, Allocator::kHugePageMinimum);
  EXPECT_EQ(a.cached_bytes(), 0u);  // a zero budget caches nothing
}

TEST(Allocator, LimitCountsRequestedBytesNotCachedBlocks) {
  Allocator a(/*limit_bytes=*/100);
  auto p = a.Allocate(100);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(a.Allocate(1).status().code(), StatusCode::kResourceExhausted);
  a.Free(*p, 100);  // cached, but no longer in use: the limit frees up
  auto again = a.Allocate(100);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *p);
  a.Free(*again, 100);
}

TEST(Allocator, LimitGivesResourceExhausted) {
  Allocator a(/*limit_bytes=*/4096);
  auto big = a.Allocate(8192);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(a.stats().current_bytes, 0);
  auto absurd = Allocator().Allocate(SIZE_MAX - 3);
  EXPECT_EQ(absurd.status().code(), StatusCode::kResourceExhausted);
}

TEST(ScratchArena, BoundedSlices) {
  Allocator a;
  {
    ScratchArena arena(&a, 256);
    ASSERT_TRUE(arena.status().ok());
    EXPECT_TRUE(arena.Allocate(100).ok());
    EXPECT_TRUE(arena.Allocate(100).ok());
    auto over = arena.Allocate(100);
    EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(arena.peak(), 256u);
  }
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(Tensor, AllocateCloneReshape) {
  auto t = Tensor::Allocate(DataType::kFloat, Shape({2, 3}), Allocator::Default(), /*zero=*/true);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->byte_size(), 24u);
  EXPECT_EQ(t->data<float>()[5], 0.0f);
  t->data<float>()[5] = 7;
  auto c = t->Clone(Allocator::Default());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data<float>()[5], 7.0f);
  EXPECT_FALSE(c->Overlaps(*t));
  auto r = t->Reshaped(Shape({3, 2}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Overlaps(*t));
  EXPECT_FALSE(t->Reshaped(Shape({4})).ok());
  EXPECT_EQ(t->TypeAndShape(), "float[2,3]");
}

TEST(Tensor, StringsAreConstructedAndFreed) {
  Allocator a;
  {
    auto t = Tensor::Allocate(DataType::kString, Shape({3}), &a);
    ASSERT_TRUE(t.ok());
    t->data<std::string>()[1] = std::string(1000, 'x');
    auto c = t->Clone(&a);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->data<std::string>()[1].size(), 1000u);
  }
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(Tensor, OverflowingShapeIsAnError) {
  auto t = Tensor::Allocate(DataType::kFloat, Shape({int64_t{1} << 40, int64_t{1} << 30}), Allocator::Default());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

TEST(Value, Describe) {
  auto t = Tensor::Allocate(DataType::kInt64, Shape({2}), Allocator::Default());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Value(*t).Describe(), "int64[2]");
  EXPECT_EQ(Value::Sequence({Value(*t), Value(*t)}).Describe(), "sequence<int64>[2]");
  EXPECT_TRUE(Value::None().is_none());
}

}  // namespace
}  // namespace onnx_light
