// ConstantConsumer (kernel.h, "Consuming a constant input"): what KernelInfo hands out,
// and which bytes ReleaseThrough returns to the system.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// `pages` anonymous pages filled with 1.0f, unmapped at the end.
class Pages {
 public:
  explicit Pages(size_t pages) : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))), bytes_(pages * page_) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<char*>(p);
    auto* f = reinterpret_cast<float*>(base_);
    for (size_t i = 0; i < bytes_ / sizeof(float); ++i) f[i] = 1.0f;
  }
  ~Pages() { munmap(base_, bytes_); }
  char* base() const { return base_; }
  size_t page() const { return page_; }
  size_t bytes() const { return bytes_; }
  float at(size_t byte_offset) const {
    float f;
    std::memcpy(&f, base_ + byte_offset, sizeof(f));
    return f;
  }

 private:
  size_t page_, bytes_;
  char* base_ = nullptr;
};

KernelInfo InfoWithConstant(const Tensor* constant) {
  KernelInfo info("", "TestOp", "n", 1, nullptr, {DataType::kFloat, DataType::kFloat}, 1, ResolvedTuning{});
  info.SetConstantInputs({nullptr, constant});
  return info;
}

TEST(ConstantConsumerTest, ReleasesWholePagesOfTheReadPrefixOnlyOnceAndNeverPastTheEnd) {
  Pages pages(8);
  const size_t page = pages.page(), offset = 128;  // the tensor starts inside page 0
  const int64_t elements = static_cast<int64_t>((pages.bytes() - offset - page / 2) / sizeof(float));
  const Tensor w = Tensor::Borrow(DataType::kFloat, Shape({elements}), pages.base() + offset);
  KernelInfo info = InfoWithConstant(&w);
  info.SetConsumableInputs({false, true});
  ConstantConsumer consumer = info.ConsumeConstantInput(1);
  ASSERT_TRUE(consumer.active());
  EXPECT_TRUE(info.absorbed_input(1));
  EXPECT_TRUE(info.consumed_input(1));

  consumer.ReleaseThrough(3 * page);  // tensor bytes [0, 3 pages): pages 1 and 2 are whole inside
  EXPECT_EQ(consumer.released_bytes(), 2 * page);
  EXPECT_EQ(pages.at(offset), 1.0f);  // page 0: partly before the tensor, kept
  EXPECT_EQ(pages.at(page), 0.0f);    // released: reads back as zeros
  EXPECT_EQ(pages.at(3 * page - 4), 0.0f);
  EXPECT_EQ(pages.at(3 * page + 4), 1.0f);  // page 3 holds bytes past the prefix
  consumer.ReleaseThrough(page);            // a shorter prefix: nothing more
  EXPECT_EQ(consumer.released_bytes(), 2 * page);
  consumer.ReleaseThrough(100 * page);  // clamped to the tensor's end, inside page 7
  EXPECT_EQ(consumer.released_bytes(), 6 * page);
  EXPECT_EQ(pages.at(6 * page + 8), 0.0f);
  EXPECT_EQ(pages.at(7 * page + 8), 1.0f);  // the tensor ends inside page 7
}

TEST(ConstantConsumerTest, IsInactiveUnlessTheCreatorAllowsItAndStillAbsorbs) {
  Pages pages(4);
  const Tensor w = Tensor::Borrow(DataType::kFloat, Shape({static_cast<int64_t>(pages.bytes() / 4)}), pages.base());
  for (const std::vector<bool>& consumable : {std::vector<bool>{}, std::vector<bool>{true, false}}) {
    KernelInfo info = InfoWithConstant(&w);
    info.SetConsumableInputs(consumable);
    ConstantConsumer consumer = info.ConsumeConstantInput(1);
    EXPECT_FALSE(consumer.active());
    consumer.ReleaseThrough(pages.bytes());
    EXPECT_EQ(consumer.released_bytes(), 0u);
    EXPECT_EQ(pages.at(pages.page() * 2), 1.0f);
    EXPECT_TRUE(info.absorbed_input(1));
    EXPECT_FALSE(info.consumed_input(1));
  }
  KernelInfo info = InfoWithConstant(&w);
  info.SetConsumableInputs({true, true});
  EXPECT_FALSE(info.ConsumeConstantInput(0).active());  // input 0 is not constant
  EXPECT_FALSE(info.absorbed_input(0));
}

}  // namespace
}  // namespace onnx_light
