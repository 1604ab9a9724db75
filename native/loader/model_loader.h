// Loading an ONNX model in C++: the protobuf is parsed here (protobuf's lite runtime), and each
// weight is read once into memory of its own, never through a mapping of a file. Every
// initializer of the main graph with more than `LoadOptions::min_elements` elements, stored
// as raw_data or as external data, is taken out of the model and returned as a Tensor:
//   - raw_data of a file: a walk of the file's field headers (pread) finds the large raw_data
//     bodies; the rest of the file is read into anonymous memory, the skeleton cut from it
//     (model_loader.cc, SplitInlineWeights), and each payload read with pread straight into
//     an aligned block of LoadedWeightsAllocator(), which returns it to the system as soon
//     as a session released it (packed it);
//   - raw_data of bytes: borrowed from the bytes when the caller gives an owner that keeps
//     them alive (and unchanged) and the offset suits the element type (else copied once),
//     or without an owner the parsed string itself (released from the message, not copied);
//   - external data: read with pread from its file into an aligned block of
//     LoadedWeightsAllocator() (tied weights, one range of one file named by several
//     initializers of one type, are read once and share the block). Locations
//     resolve only inside the model's folder (no absolute paths, no "..", no symlink out of
//     it); a file whose tensors Python decodes (sub-byte types) is only fingerprinted.
// Files that change: every file must keep its size and times while the load reads it (else
// InvalidArgument naming it: it changed while it was read); once the load returns, nothing
// reads the files again, so a model file or external data file truncated, rewritten or
// deleted while a session is created from the load, or afterwards (a re-export to the same
// path), changes nothing: the session computes with the weights as they were read (no
// SIGBUS past a new end of file, no new model's bytes read as old weights; ONNX Runtime
// copies them too).
//
// What remains (`skeleton`) is the model with those initializers' payloads removed (name,
// type and dims kept) and small external tensors inlined: small enough to hand to Python's
// onnx package for validation, shape inference and graph rewrites.
//
//   OL_ASSIGN_OR_RETURN(LoadedModel m, LoadModelFile("model.onnx", {}));
//   // m.skeleton: serialized ModelProto without the big weights
//   // m.initializers["conv1.weight"]: a Tensor holding the weight's bytes
//
// So a 250 MB model takes the weights' size of memory while it loads (plus the rest of the
// file), not the file buffer plus the parsed message plus numpy copies. Errors are
// InvalidArgument naming the file (or "the bytes") and the tensor: malformed protobuf, a
// payload whose size does not match its type and dims, external data outside the folder or
// past the end of its file, a file changed while it was read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "native/core/allocator.h"
#include "native/core/status.h"
#include "native/core/tensor.h"

namespace onnx_light {

struct LoadOptions {
  // Initializers with more elements than this leave the skeleton (Python's shape inference
  // sees them as typed inputs above the same bound: _model._INFERENCE_DATA_LIMIT_ELEMENTS).
  int64_t min_elements = int64_t{1} << 14;
  // Which files' bytes are fingerprinted (SourceFile::content_hash), git's "racy" rule: a
  // file whose modification or status-change time is less than this long before the load
  // began may be written again within the same timestamp tick (file times advance by the
  // kernel's coarse clock) or under another machine's clock (network file systems), unseen
  // by its times: its bytes are hashed. An older file is told apart from a later version by
  // its identity and times alone (any write sets both times to a later tick; no call sets the
  // status-change time back), without reading its bytes once more. -1: hash every file.
  // The margin is 50 ms, not git's 2 s: local Linux file systems stamp times with the
  // kernel's coarse clock (a tick of 1-10 ms), and hashing costs a second read of the
  // file (about 40 ms of a 49 ms creation for a 48 MiB model, h96's A/B), which every
  // export-then-load script would pay under a 2 s margin. File systems with coarser times
  // (FAT, some network mounts) are not covered by it; pass -1 there.
  int64_t hash_files_newer_than_ns = int64_t{50'000'000};
};

// A file a load read: the model file (its path as given) or an external data file (its
// resolved path), with its size, identity and times, and for a recently written file the
// fingerprint of its bytes (content_hash.h) as the load read them. The Python
// InferenceSession keeps them: pickling reads the model again (the session holds most
// weights packed only) and refuses, naming the file, when a file no longer holds what the
// session was created from, rather than carry other weights.
struct SourceFile {
  std::string path;
  uint64_t size = 0;
  uint64_t device = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;  // modification and status-change times
  bool hashed = false;                 // LoadOptions::hash_files_newer_than_ns
  uint64_t content_hash = 0;           // when hashed
};

struct LoadedModel {
  std::string skeleton;                        // serialized ModelProto
  std::map<std::string, Tensor> initializers;  // taken out of the skeleton, by name
  // Every file this load read, in the order it read them first: the model file (a path's
  // load), then each external data file that a main-graph initializer names (the ones the
  // loader leaves to Python, sub-byte element types, included). Hashing a file costs one
  // more read of its bytes (about 7 ms of CPU for a 48 MiB model: perf samples, 15% of a
  // creation): only recent files are hashed (LoadOptions::hash_files_newer_than_ns).
  std::vector<SourceFile> source_files;
};

// From a path; external data is looked up in the path's folder.
StatusOr<LoadedModel> LoadModelFile(const std::string& path, const LoadOptions& options);

// From serialized bytes; external data, if any, in `base_dir` (empty: a model with external
// data is rejected). With an `owner` that keeps `bytes` alive and unchanged for as long as
// it lives, large inline payloads are borrowed from `bytes` (each tensor holds `owner`);
// without one, the parse copies them.
StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, const std::string& base_dir, const LoadOptions& options,
                                     std::shared_ptr<const void> owner = nullptr);

// The allocator of the weights LoadModelFile reads (model file payloads, external data): it
// keeps no large blocks cached, so that a weight a session packed and released leaves the
// process's memory at once instead of waiting in a cache for a block of its size (packed
// forms have other sizes: resnet50's peak grew by 11 MiB with Allocator::Default()'s cache).
Allocator* LoadedWeightsAllocator();

}  // namespace onnx_light
