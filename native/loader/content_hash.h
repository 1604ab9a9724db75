// A 64-bit fingerprint of a file's bytes, for telling whether a file still holds what a
// session was created from (InferenceSession's pickling reads the model again and compares;
// model_loader.h, LoadedModel::source_files). It detects accidental change (a re-export, a
// rewrite at the same size, a truncation), not an adversary: it is not cryptographic.
//
// Eight independent 64-bit lanes each absorb one word of every 64-byte block through a step
// that is a bijection of the lane for a fixed word (x -> rotl(x + word * odd1, 31) * odd2),
// so two inputs that differ in one block always leave different lane states, and later
// blocks equal in both cannot make them equal again; the word's multiply spreads each bit
// over the higher ones, and the rotation brings the top bits down before the lane's
// multiply (a plain (x ^ word) * odd step lets a flip of bit 63 in one block cancel a flip
// one block later: content_hash_test caught it). The lanes and the length are mixed at the
// end. Eight lanes keep eight independent multiply chains in flight (in locals: see
// Absorb). Words are read in the host's byte order: a fingerprint is compared in the
// process (or at least on the machine) that made it, never stored.
//
//   ContentHasher h;
//   h.Update(chunk1, n1);
//   h.Update(chunk2, n2);            // any split of the same bytes gives the same result
//   uint64_t fingerprint = h.Finish();  // == ContentHash(all_bytes, n1 + n2)
#pragma once

#include <cstddef>
#include <cstdint>

namespace onnx_light {

class ContentHasher {
 public:
  ContentHasher();
  void Update(const void* data, size_t bytes);
  // The fingerprint of everything given to Update so far (the hasher may go on after it).
  uint64_t Finish() const;

 private:
  static constexpr size_t kLanes = 8;
  static constexpr size_t kBlock = kLanes * sizeof(uint64_t);
  void Absorb(const unsigned char* blocks, size_t count);  // `count` whole blocks

  uint64_t lanes_[kLanes];
  unsigned char pending_[kBlock];
  size_t pending_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

uint64_t ContentHash(const void* data, size_t bytes);

}  // namespace onnx_light
