#include "native/loader/content_hash.h"

#include <cstring>

namespace onnx_light {
namespace {

// Odd: multiplying by either is a bijection.
constexpr uint64_t kWordMultiplier = 0x9fb21c651e98df25ULL;
constexpr uint64_t kLaneMultiplier = 0xc2b2ae3d27d4eb4fULL;

uint64_t RotateLeft(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// A bijective finaliser (xor-shift, multiply, xor-shift): every input bit reaches every
// output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 32;
  return x;
}

}  // namespace

ContentHasher::ContentHasher() {
  // Distinct starting states, so that lanes fed the same words (zeros) stay distinct.
  for (size_t i = 0; i < kLanes; ++i) lanes_[i] = Mix(0x6a09e667f3bcc909ULL + i);
}

static uint64_t Step(uint64_t lane, const unsigned char* word_bytes) {
  uint64_t word;
  std::memcpy(&word, word_bytes, sizeof(word));
  return RotateLeft(lane + word * kWordMultiplier, 31) * kLaneMultiplier;
}

void ContentHasher::Absorb(const unsigned char* blocks, size_t count) {
  // The lanes in locals: stored through `this`, every step would reload them (the bytes
  // read may alias them as far as the compiler knows).
  uint64_t l0 = lanes_[0], l1 = lanes_[1], l2 = lanes_[2], l3 = lanes_[3];
  uint64_t l4 = lanes_[4], l5 = lanes_[5], l6 = lanes_[6], l7 = lanes_[7];
  for (const unsigned char* p = blocks; count > 0; --count, p += kBlock) {
    l0 = Step(l0, p);
    l1 = Step(l1, p + 8);
    l2 = Step(l2, p + 16);
    l3 = Step(l3, p + 24);
    l4 = Step(l4, p + 32);
    l5 = Step(l5, p + 40);
    l6 = Step(l6, p + 48);
    l7 = Step(l7, p + 56);
  }
  lanes_[0] = l0, lanes_[1] = l1, lanes_[2] = l2, lanes_[3] = l3;
  lanes_[4] = l4, lanes_[5] = l5, lanes_[6] = l6, lanes_[7] = l7;
}

void ContentHasher::Update(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_bytes_ += bytes;
  if (pending_bytes_ > 0) {
    const size_t take = bytes < kBlock - pending_bytes_ ? bytes : kBlock - pending_bytes_;
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += take;
    p += take;
    bytes -= take;
    if (pending_bytes_ < kBlock) return;
    Absorb(pending_, 1);
    pending_bytes_ = 0;
  }
  const size_t blocks = bytes / kBlock;
  Absorb(p, blocks);
  p += blocks * kBlock;
  bytes -= blocks * kBlock;
  std::memcpy(pending_, p, bytes);
  pending_bytes_ = bytes;
}

uint64_t ContentHasher::Finish() const {
  ContentHasher last = *this;
  if (last.pending_bytes_ > 0) {  // the tail, zero-padded (the length below tells the padding apart)
    std::memset(last.pending_ + last.pending_bytes_, 0, kBlock - last.pending_bytes_);
    last.Absorb(last.pending_, 1);
  }
  uint64_t h = Mix(total_bytes_);
  for (size_t i = 0; i < kLanes; ++i) h = Mix(h ^ RotateLeft(last.lanes_[i], static_cast<int>(7 * i + 1)));
  return h;
}

uint64_t ContentHash(const void* data, size_t bytes) {
  ContentHasher h;
  h.Update(data, bytes);
  return h.Finish();
}

}  // namespace onnx_light
