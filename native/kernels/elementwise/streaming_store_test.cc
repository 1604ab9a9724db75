// Every StreamingCopy variant copies exactly what memcpy copies, for every length up to a
// few lines and every destination misalignment within a line; variants this CPU cannot run
// (or the ISA cap excludes) are skipped by name.
#include "native/kernels/elementwise/streaming_store.h"

#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

namespace onnx_light {
namespace elementwise {
namespace {

class StreamingCopyVariantTest : public ::testing::TestWithParam<IsaVariant<StreamingCopyFn>> {};

TEST_P(StreamingCopyVariantTest, CopiesWhatMemcpyCopies) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const StreamingCopyFn copy = GetParam().impl;
  std::vector<uint8_t> src(300 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  alignas(64) uint8_t expected[512], actual[512];
  for (size_t offset = 0; offset < 64; offset += 1) {
    for (size_t bytes = 0; bytes <= 300; bytes += (bytes < 140 ? 1 : 37)) {
      std::memset(expected, 0xAB, sizeof(expected));
      std::memset(actual, 0xAB, sizeof(actual));
      std::memcpy(expected + offset, src.data() + offset % 7, bytes);
      copy(actual + offset, src.data() + offset % 7, bytes);
      StreamingFence();
      ASSERT_EQ(0, std::memcmp(expected, actual, sizeof(actual)))
          << GetParam().name << " offset " << offset << " bytes " << bytes;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, StreamingCopyVariantTest, ::testing::ValuesIn(StreamingCopyVariants()),
                         IsaVariantTestName<StreamingCopyFn>);

TEST(StreamingCopyTest, DispatchedCopyIsTheBestEnabledVariant) {
  std::cout << "StreamingCopy uses '" << BestVariant(StreamingCopyVariants()).name << "'\n";
  std::vector<float> src(5000), dst(5000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f;
  WriteStreaming(dst.data() + 1, 4999, [&](float* buffer, int64_t offset, int64_t count) {
    std::memcpy(buffer, src.data() + 1 + offset, count * sizeof(float));
  });
  StreamingFence();
  EXPECT_EQ(0, std::memcmp(src.data() + 1, dst.data() + 1, 4999 * sizeof(float)));
  EXPECT_EQ(dst[0], 0.0f);
}

}  // namespace
}  // namespace elementwise
}  // namespace onnx_light
