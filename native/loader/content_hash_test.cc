// ContentHasher: what a fingerprint must tell apart (any one changed bit, a changed length,
// words moved between lanes or blocks), and that how the bytes arrive does not matter.
#include "native/loader/content_hash.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace onnx_light {
namespace {

std::string Pseudorandom(size_t bytes, uint32_t seed) {
  std::string s(bytes, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

uint64_t Hash(const std::string& s) { return ContentHash(s.data(), s.size()); }

class ContentHashSplitTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ContentHashSplitTest, AnySplitOfTheBytesGivesTheOneShotFingerprint) {
  const std::string data = Pseudorandom(1000, 3);
  const size_t chunk = GetParam();
  ContentHasher h;
  for (size_t at = 0; at < data.size(); at += chunk) h.Update(data.data() + at, std::min(chunk, data.size() - at));
  EXPECT_EQ(h.Finish(), Hash(data));
}

INSTANTIATE_TEST_SUITE_P(Chunks, ContentHashSplitTest, ::testing::Values(1, 7, 63, 64, 65, 128, 333, 1000, 4096));

TEST(ContentHashTest, FinishCanBeCalledBeforeMoreBytesArrive) {
  const std::string data = Pseudorandom(200, 5);
  ContentHasher h;
  h.Update(data.data(), 100);
  EXPECT_EQ(h.Finish(), Hash(data.substr(0, 100)));
  h.Update(data.data() + 100, 100);
  EXPECT_EQ(h.Finish(), Hash(data));
}

TEST(ContentHashTest, EveryOneBitChangeGivesADistinctFingerprint) {
  for (size_t size : {1, 8, 63, 64, 65, 300}) {
    const std::string data = Pseudorandom(size, 11);
    std::set<uint64_t> seen = {Hash(data)};
    for (size_t byte = 0; byte < size; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string changed = data;
        changed[byte] = static_cast<char>(changed[byte] ^ (1 << bit));
        EXPECT_TRUE(seen.insert(Hash(changed)).second) << "size " << size << ", byte " << byte << ", bit " << bit;
      }
    }
  }
}

TEST(ContentHashTest, TrailingZerosAndTruncationChangeTheFingerprint) {
  // The tail is zero-padded inside the hasher: the length must still tell these apart.
  std::set<uint64_t> seen;
  std::string zeros;
  for (size_t size = 0; size <= 200; ++size, zeros.push_back('\0')) {
    EXPECT_TRUE(seen.insert(Hash(zeros)).second) << size << " zero bytes";
  }
  const std::string data = Pseudorandom(4096, 17);
  EXPECT_NE(Hash(data), Hash(data.substr(0, 4095)));
  EXPECT_NE(Hash(data), Hash(data.substr(0, 2048)));
}

TEST(ContentHashTest, MovingWordsBetweenLanesOrBlocksChangesTheFingerprint) {
  const std::string data = Pseudorandom(256, 23);
  auto swapped = [&](size_t a, size_t b) {  // two 8-byte words exchanged
    std::string s = data;
    for (size_t i = 0; i < 8; ++i) std::swap(s[a + i], s[b + i]);
    return s;
  };
  EXPECT_NE(Hash(data), Hash(swapped(0, 8)));                         // neighbouring lanes of one block
  EXPECT_NE(Hash(data), Hash(swapped(0, 64)));                        // the same lane of two blocks
  EXPECT_NE(Hash(data), Hash(swapped(8, 136)));                       // other lanes, other blocks
  EXPECT_NE(Hash(data), Hash(data.substr(64) + data.substr(0, 64)));  // blocks reordered
}

TEST(ContentHashTest, EqualBytesAtDifferentAddressesGiveEqualFingerprints) {
  const std::string data = Pseudorandom(777, 29);
  std::vector<char> shifted(data.size() + 3);
  std::copy(data.begin(), data.end(), shifted.begin() + 3);  // unaligned
  EXPECT_EQ(ContentHash(shifted.data() + 3, data.size()), Hash(data));
}

}  // namespace
}  // namespace onnx_light
