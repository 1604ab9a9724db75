#include "native/loader/model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "native/core/allocator.h"
#include "native/loader/content_hash.h"
#include "native/loader/onnx-ml.pb.h"

namespace onnx_light {

// A whole file mapped read-only, unmapped with the last tensor that borrows it (each
// MappedRange below holds it). It lists the ranges borrowed from it, weakly, for
// DetachFromFiles; once detached, the ranges it replaced hold anonymous pages.
struct FileMapping {
  std::string file;  // for errors
  void* base = nullptr;
  size_t size = 0;
  std::mutex mu;  // guards what follows
  struct Borrow {
    std::weak_ptr<void> alive;
    const uint8_t* data;
    size_t bytes;
  };
  std::vector<Borrow> borrows;
  bool detached = false;
  ~FileMapping() {
    if (base != nullptr && size > 0) ::munmap(base, size);
  }
};

namespace {

// Reads a file descriptor for protobuf's CopyingInputStreamAdaptor (the lite runtime has no
// FileInputStream): the model is parsed in 1 MiB chunks, never held whole.
// Fingerprints what it reads (`hasher`, unless null).
class FdStream : public google::protobuf::io::CopyingInputStream {
 public:
  FdStream(int fd, ContentHasher* hasher) : fd_(fd), hasher_(hasher) {}
  int Read(void* buffer, int size) override {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        if (hasher_ != nullptr) hasher_->Update(buffer, static_cast<size_t>(n));
        bytes_read_ += static_cast<size_t>(n);
      }
      return n < 0 ? -1 : static_cast<int>(n);
    }
  }
  size_t bytes_read() const { return bytes_read_; }

 private:
  int fd_;
  ContentHasher* hasher_;
  size_t bytes_read_ = 0;
};

int64_t NowNanoseconds() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// What `st` says of the file at `path`; `hashed` is whether its bytes need a fingerprint
// (LoadOptions::hash_files_newer_than_ns), which the caller then sets.
SourceFile Describe(const std::string& path, const struct stat& st, const LoadOptions& options, int64_t started_ns) {
  SourceFile f;
  f.path = path;
  f.size = static_cast<uint64_t>(st.st_size);
  f.device = static_cast<uint64_t>(st.st_dev);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  f.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  const int64_t recent = started_ns - options.hash_files_newer_than_ns;
  f.hashed = options.hash_files_newer_than_ns < 0 || f.mtime_ns >= recent || f.ctime_ns >= recent;
  return f;
}

// The fingerprint of the file open at `fd`, read with pread in 1 MiB chunks rather than
// through its mapping: touching every mapped page would make the whole file resident in
// this process at once (the weights' ranges give their pages back one by one as they are
// packed) and add page-table work to each release. Nothing if a read fails.
std::optional<uint64_t> HashFile(int fd, size_t size) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[kChunk]);
  ContentHasher hasher;
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::pread(fd, buffer.get(), std::min(kChunk, size - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    hasher.Update(buffer.get(), static_cast<size_t>(n));
    at += static_cast<size_t>(n);
  }
  return hasher.Finish();
}

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Gives back the resident pages of [data, data + bytes) inside a private read-only file
// mapping: only the whole pages inside the range (the partial pages at its ends may hold a
// neighbour's bytes, which stay). The pages were never written, so whatever reads them
// again (another tensor over the same bytes) faults them back in from the file: this
// changes the process's resident memory, never what a read returns.
void ReleaseMappedPages(const uint8_t* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// What keeps one borrowed tensor's bytes alive: the mapping of its file, and the range it
// borrows. When the last tensor borrowing the range is gone (the session released the
// initializer once its kernels packed it), the range's pages are given back at once rather
// than when the whole file is unmapped: a model's weights are not resident twice (mapped
// and packed) while the session is created. Not after DetachFromFiles: the pages may then
// be anonymous copies that another range (a weight stored twice at one offset) still reads,
// and madvise would zero them; they go when the mapping does.
struct MappedRange {
  std::shared_ptr<FileMapping> mapping;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
  ~MappedRange() {
    std::lock_guard<std::mutex> lock(mapping->mu);
    if (!mapping->detached) ReleaseMappedPages(data, bytes);
  }
};

// A range of `mapping` that tensors borrow, listed in it for DetachFromFiles.
std::shared_ptr<MappedRange> BorrowRange(const std::shared_ptr<FileMapping>& mapping, const uint8_t* data,
                                         size_t bytes) {
  auto range = std::make_shared<MappedRange>(MappedRange{mapping, data, bytes});
  std::lock_guard<std::mutex> lock(mapping->mu);
  mapping->borrows.push_back(FileMapping::Borrow{range, data, bytes});
  return range;
}

// A copy of a payload whose address does not suit its element type, from
// Allocator::Default(): once a session packed it and let it go, its block returns to that
// allocator's cache, where the next packed weights of its size class (every layer of a
// transformer has the same) find it, so the model's memory is made fresh once, not twice
// (copied, then packed); its fresh blocks follow the constant page policy (page_policy.h).
StatusOr<Tensor> CopyOf(DataType type, const Shape& shape, const uint8_t* data, size_t bytes) {
  OL_ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(type, shape, Allocator::Default()));
  std::memcpy(copy.raw_data(), data, bytes);
  return copy;
}

// Element types whose raw_data (and external data) is the tensor's native little-endian
// layout, one whole number of bytes per element. Strings, and the sub-byte types (packed
// two or four to a byte, decoded on the Python path), stay in the skeleton.
bool BorrowableType(DataType type) {
  switch (type) {
    case DataType::kFloat:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kDouble:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string RealPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string result(resolved);
  std::free(resolved);
  return result;
}

// ---------------------------------------------------------------- inline weights in place
// Protobuf copies every bytes field it parses into a std::string of its own: a 340 MB model
// would be read into a buffer, copied into fresh strings (a page fault and a zeroed page
// per 4 KiB) and only then packed. Instead, the raw_data of the main graph's large
// initializers is cut out of the serialized model before protobuf sees it, and borrowed
// where it lies (the file's mapping, or the caller's bytes): protobuf parses only the
// skeleton. The walk reads the wire format (tag, length) down to ModelProto.graph
// (field 7), GraphProto.initializer (5) and TensorProto's dims (1), data_type (2), raw_data
// (9) and data_location (14); everything else is copied verbatim. A payload is cut exactly
// when the Loader below would borrow it (BorrowableType, more than min_elements elements,
// not external); the Loader still checks its size. Any wire format it cannot walk
// (a group, a length past the end) makes the caller parse the whole model as before, so
// protobuf's own verdict on malformed input stands.

// The wire format's reader: one field at a time.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;             // wire type 0
  const uint8_t* data = nullptr;   // wire type 2: the payload
  size_t length = 0;               // its length
  const uint8_t* begin = nullptr;  // the field's first byte (its tag)
  const uint8_t* end = nullptr;    // one past its last byte
};

bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t byte = *p++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

bool NextField(const uint8_t*& p, const uint8_t* end, WireField* f) {
  f->begin = p;
  uint64_t tag = 0;
  if (!ReadVarint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire_type = static_cast<int>(tag & 7);
  switch (f->wire_type) {
    case 0:
      if (!ReadVarint(p, end, &f->varint)) return false;
      break;
    case 1:
      if (end - p < 8) return false;
      p += 8;
      break;
    case 5:
      if (end - p < 4) return false;
      p += 4;
      break;
    case 2: {
      uint64_t length = 0;
      if (!ReadVarint(p, end, &length) || length > static_cast<uint64_t>(end - p)) return false;
      f->data = p;
      f->length = static_cast<size_t>(length);
      p += length;
      break;
    }
    default:  // groups (3, 4): ONNX never writes them; protobuf decides
      return false;
  }
  f->end = p;
  return true;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendMessageField(std::string* out, uint32_t number, const std::string& message) {
  AppendVarint(out, (static_cast<uint64_t>(number) << 3) | 2);
  AppendVarint(out, message.size());
  out->append(message);
}

void AppendVerbatim(std::string* out, const WireField& f) {
  out->append(reinterpret_cast<const char*>(f.begin), static_cast<size_t>(f.end - f.begin));
}

struct InlineSplit {
  std::string skeleton;  // the serialized model without the payloads below
  // Initializer index in the main graph (as the parsed skeleton numbers them) -> its raw_data.
  std::map<int, std::string_view> payloads;
};

// One TensorProto: false if its wire format does not walk. When the Loader would borrow its
// raw_data, `raw` is set and `stripped` holds the tensor without it.
bool SplitTensor(const uint8_t* p, const uint8_t* end, const LoadOptions& options, std::string* stripped,
                 std::string_view* raw) {
  std::vector<int64_t> dims;
  int64_t data_type = 0, location = 0;
  const uint8_t* raw_data = nullptr;
  size_t raw_length = 0;
  bool has_raw = false;
  const uint8_t* begin = p;
  WireField f;
  while (p < end) {
    if (!NextField(p, end, &f)) return false;
    if (f.number == 1 && f.wire_type == 0) {
      dims.push_back(static_cast<int64_t>(f.varint));
    } else if (f.number == 1 && f.wire_type == 2) {  // packed dims
      const uint8_t* q = f.data;
      for (uint64_t d = 0; q < f.data + f.length;) {
        if (!ReadVarint(q, f.data + f.length, &d)) return false;
        dims.push_back(static_cast<int64_t>(d));
      }
    } else if (f.number == 2 && f.wire_type == 0) {
      data_type = static_cast<int64_t>(f.varint);
    } else if (f.number == 14 && f.wire_type == 0) {
      location = static_cast<int64_t>(f.varint);
    } else if (f.number == 9 && f.wire_type == 2) {  // the last one wins, as when parsing
      raw_data = f.data;
      raw_length = f.length;
      has_raw = true;
    }
  }
  *raw = std::string_view();
  if (!has_raw || location == onnx::TensorProto::EXTERNAL || data_type <= 0 || data_type > INT32_MAX ||
      !IsValidDataType(static_cast<int32_t>(data_type))) {
    return true;
  }
  const DataType type = static_cast<DataType>(data_type);
  for (int64_t d : dims) {
    if (d < 0) return true;
  }
  const Shape shape(dims);
  if (!BorrowableType(type) || !shape.CheckedByteSize(type).ok() || shape.num_elements() <= options.min_elements) {
    return true;
  }
  stripped->clear();
  for (p = begin; p < end;) {
    NextField(p, end, &f);  // walked above
    if (!(f.number == 9 && f.wire_type == 2)) AppendVerbatim(stripped, f);
  }
  *raw = std::string_view(reinterpret_cast<const char*>(raw_data), raw_length);
  return true;
}

// The model with the payloads of the main graph's large raw_data initializers cut out, or
// nothing if its wire format does not walk.
std::optional<InlineSplit> SplitInlineWeights(std::string_view model, const LoadOptions& options) {
  InlineSplit split;
  split.skeleton.reserve(1 << 16);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(model.data());
  const uint8_t* end = p + model.size();
  int index = 0;  // repeated graph fields merge: their initializers are numbered on
  std::string graph, tensor;
  WireField f, g;
  while (p < end) {
    if (!NextField(p, end, &f)) return std::nullopt;
    if (!(f.number == 7 && f.wire_type == 2)) {
      AppendVerbatim(&split.skeleton, f);
      continue;
    }
    graph.clear();
    for (const uint8_t* q = f.data; q < f.data + f.length;) {
      if (!NextField(q, f.data + f.length, &g)) return std::nullopt;
      if (!(g.number == 5 && g.wire_type == 2)) {
        AppendVerbatim(&graph, g);
        continue;
      }
      std::string_view raw;
      if (!SplitTensor(g.data, g.data + g.length, options, &tensor, &raw)) return std::nullopt;
      if (raw.data() == nullptr) {
        AppendVerbatim(&graph, g);
      } else {
        AppendMessageField(&graph, 5, tensor);
        split.payloads.emplace(index, raw);
      }
      ++index;
    }
    AppendMessageField(&split.skeleton, 7, graph);
  }
  return split;
}

// What keeps borrowed bytes of the model alive: given a payload inside them, the owner a
// Tensor borrowing it holds.
using PayloadOwner = std::function<std::shared_ptr<void>(const uint8_t* data, size_t bytes)>;

class Loader {
 public:
  Loader(std::string where, std::string base_dir, const LoadOptions& options)
      : where_(std::move(where)), base_dir_(std::move(base_dir)), options_(options), started_ns_(NowNanoseconds()) {}

  const LoadOptions& options() const { return options_; }
  int64_t started_ns() const { return started_ns_; }

  // Sets source->content_hash when it is to be hashed (Describe), from `fd`.
  Status Fingerprint(int fd, SourceFile* source) const {
    if (!source->hashed) return Status::Ok();
    std::optional<uint64_t> hash = HashFile(fd, source->size);
    if (!hash.has_value()) {
      return InvalidArgument(where_, ": '", source->path, "' cannot be read: ", std::strerror(errno));
    }
    source->content_hash = *hash;
    return Status::Ok();
  }

  // Inline payloads cut out of the serialized model (SplitInlineWeights), by initializer
  // index, and what keeps them alive.
  void BorrowInline(std::map<int, std::string_view> payloads, PayloadOwner owner) {
    inline_payloads_ = std::move(payloads);
    inline_owner_ = std::move(owner);
  }

  Status Load(onnx::ModelProto& model, LoadedModel* out) {
    onnx::GraphProto* graph = model.mutable_graph();
    for (int i = 0; i < graph->initializer_size(); ++i) {
      onnx::TensorProto& t = *graph->mutable_initializer(i);
      std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
      const int32_t type_number = t.data_type();
      if (!IsValidDataType(type_number) || type_number == 0) continue;  // Python names the error
      const DataType type = static_cast<DataType>(type_number);
      bool negative = false;
      for (int64_t d : dims) negative = negative || d < 0;
      if (negative) continue;  // Python rejects it with the tensor's name
      const Shape shape(dims);
      StatusOr<size_t> checked = shape.CheckedByteSize(type);
      if (!checked.ok()) {
        return InvalidArgument(where_, ": initializer '", t.name(), "' of shape ", shape.ToString(), " and type ",
                               DataTypeName(type), " has a size that overflows");
      }
      const size_t bytes = *checked;
      const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
      const bool large = shape.num_elements() > options_.min_elements;
      auto cut = inline_payloads_.find(i);
      if (cut != inline_payloads_.end()) {
        OL_RETURN_IF_ERROR(BorrowCut(t, type, shape, bytes, cut->second, out));
        continue;
      }
      if (external && !BorrowableType(type)) {  // decoded by Python, from a file this load fingerprints
        OL_RETURN_IF_ERROR(FingerprintExternalFile(t));
        continue;
      }
      if (!BorrowableType(type) || (!large && !external)) continue;
      if (!external && !t.has_raw_data()) continue;  // typed fields: the Python path decodes them
      if (!external) {
        if (t.raw_data().size() != bytes) {
          return InvalidArgument(where_, ": initializer '", t.name(), "' (", DataTypeName(type), shape.ToString(),
                                 ") has ", t.raw_data().size(), " bytes of raw_data, expected ", bytes);
        }
        // Each payload is kept alive by the tensors that borrow it alone, so a session that
        // drops one initializer frees its bytes.
        std::shared_ptr<std::string> payload(t.release_raw_data());
        out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, payload->data(), payload));
        continue;
      }
      OL_ASSIGN_OR_RETURN(const uint8_t* data, ExternalData(t, bytes));
      if (!large || reinterpret_cast<uintptr_t>(data) % ElementSize(type) != 0) {
        if (!large) {
          t.set_raw_data(data, bytes);  // small: inlined, for shape inference
        } else {
          OL_ASSIGN_OR_RETURN(Tensor copy, CopyOf(type, shape, data, bytes));
          out->initializers.emplace(t.name(), std::move(copy));
          ReleaseMappedPages(data, bytes);  // read once, for the copy
        }
      } else {
        std::shared_ptr<MappedRange> range = BorrowRange(last_mapping_, data, bytes);
        out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, const_cast<uint8_t*>(data), range));
      }
      t.clear_external_data();
      t.clear_data_location();
    }
    for (const auto& [file, mapping] : mappings_) out->mapped_files.push_back(mapping);
    out->source_files.insert(out->source_files.end(), external_files_.begin(), external_files_.end());
    if (!model.SerializeToString(&out->skeleton)) {
      return InvalidArgument(where_, ": the model cannot be serialized again (over 2 GiB without its weights?)");
    }
    return Status::Ok();
  }

 private:
  // An initializer whose raw_data SplitInlineWeights cut out: borrowed where it lies when its
  // address suits the element type, else copied once (and the borrowed range let go).
  Status BorrowCut(const onnx::TensorProto& t, DataType type, const Shape& shape, size_t bytes,
                   std::string_view payload, LoadedModel* out) {
    if (payload.size() != bytes) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' (", DataTypeName(type), shape.ToString(), ") has ",
                             payload.size(), " bytes of raw_data, expected ", bytes);
    }
    const auto* data = reinterpret_cast<const uint8_t*>(payload.data());
    std::shared_ptr<void> owner = inline_owner_(data, bytes);
    if (reinterpret_cast<uintptr_t>(data) % ElementSize(type) == 0) {
      out->initializers.emplace(t.name(), Tensor::Borrow(type, shape, const_cast<uint8_t*>(data), std::move(owner)));
    } else {
      OL_ASSIGN_OR_RETURN(Tensor copy, CopyOf(type, shape, data, bytes));
      owner.reset();  // a mapped range gives its pages back now
      out->initializers.emplace(t.name(), std::move(copy));
    }
    return Status::Ok();
  }

  // Maps the external file of `t` (whose bytes Python decodes) only so that it is
  // fingerprinted like the files whose bytes the loader borrows.
  Status FingerprintExternalFile(const onnx::TensorProto& t) {
    for (const onnx::StringStringEntryProto& entry : t.external_data()) {
      if (entry.key() == "location") return Map(entry.value(), t.name()).status();
    }
    return Status::Ok();  // no location: Python names the error
  }

  // The bytes of an external tensor, in a mapping of its file (kept in last_mapping_).
  StatusOr<const uint8_t*> ExternalData(const onnx::TensorProto& t, size_t bytes) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto& entry : t.external_data()) {
      char* end = nullptr;
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset" || entry.key() == "length") {
        errno = 0;
        const long long value = std::strtoll(entry.value().c_str(), &end, 10);
        if (errno != 0 || end == entry.value().c_str() || *end != '\0' || value < 0) {
          return InvalidArgument(where_, ": initializer '", t.name(), "' has external data ", entry.key(), " '",
                                 entry.value(), "', not a non-negative integer");
        }
        (entry.key() == "offset" ? offset : length) = value;
      }
    }
    if (location.empty()) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' is stored externally but names no location");
    }
    if (length >= 0 && static_cast<size_t>(length) != bytes) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' has external data of length ", length,
                             ", expected ", bytes, " for its type and shape");
    }
    OL_ASSIGN_OR_RETURN(std::shared_ptr<FileMapping> mapping, Map(location, t.name()));
    if (static_cast<uint64_t>(offset) > mapping->size || bytes > mapping->size - static_cast<size_t>(offset)) {
      return InvalidArgument(where_, ": initializer '", t.name(), "' reads ", bytes, " bytes at offset ", offset,
                             " of '", location, "', which has ", mapping->size, " bytes");
    }
    last_mapping_ = mapping;
    return static_cast<const uint8_t*>(mapping->base) + offset;
  }

  // The mapping of `location`, relative to the model's folder and inside it.
  StatusOr<std::shared_ptr<FileMapping>> Map(const std::string& location, const std::string& tensor) {
    if (base_dir_.empty()) {
      return InvalidArgument(where_, ": initializer '", tensor, "' is stored in external file '", location,
                             "', but the model was given as bytes: load it from its path");
    }
    const std::string folder = RealPath(base_dir_);
    const std::string file = location.empty() || location[0] == '/' ? "" : RealPath(base_dir_ + "/" + location);
    if (folder.empty() || file.empty() || file.compare(0, folder.size() + 1, folder + "/") != 0) {
      return InvalidArgument(where_, ": initializer '", tensor, "' is stored in external file '", location,
                             "', which does not exist inside the model's folder '", base_dir_, "'");
    }
    auto found = mappings_.find(file);
    if (found != mappings_.end()) return found->second;
    FileDescriptor fd{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
    struct stat st;
    if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return InvalidArgument(where_, ": external data file '", location, "' of initializer '", tensor,
                             "' cannot be read: ", std::strerror(errno));
    }
    auto mapping = std::make_shared<FileMapping>();
    mapping->size = static_cast<size_t>(st.st_size);
    if (mapping->size > 0) {
      void* base = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
      if (base == MAP_FAILED) {
        return ResourceExhausted(where_, ": cannot map external data file '", location, "' (", mapping->size,
                                 " bytes): ", std::strerror(errno));
      }
      mapping->base = base;
    }
    mapping->file = file;
    mappings_.emplace(file, mapping);
    SourceFile source = Describe(file, st, options_, started_ns_);
    OL_RETURN_IF_ERROR(Fingerprint(fd.fd, &source));
    external_files_.push_back(std::move(source));
    return mapping;
  }

  std::string where_, base_dir_;
  LoadOptions options_;
  std::map<std::string, std::shared_ptr<FileMapping>> mappings_;
  std::vector<SourceFile> external_files_;  // in the order first mapped
  std::shared_ptr<FileMapping> last_mapping_;
  std::map<int, std::string_view> inline_payloads_;
  PayloadOwner inline_owner_;
  int64_t started_ns_;
};

// Parses `bytes` with the large inline payloads borrowed (SplitInlineWeights and
// `owner`), or whole when they cannot be cut out; `unparsable` is the error then.
StatusOr<LoadedModel> LoadSerialized(std::string_view bytes, Loader& loader, const PayloadOwner& owner,
                                     const std::string& unparsable) {
  onnx::ModelProto model;
  std::optional<InlineSplit> split = SplitInlineWeights(bytes, loader.options());
  bool parsed = false;
  if (split.has_value() && split->skeleton.size() <= static_cast<size_t>(INT_MAX)) {
    parsed = model.ParseFromString(split->skeleton);
    if (parsed) loader.BorrowInline(std::move(split->payloads), owner);
  }
  if (!parsed) {
    model.Clear();
    if (bytes.size() > static_cast<size_t>(INT_MAX) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return InvalidArgument(unparsable);
    }
  }
  split.reset();
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  return out;
}

}  // namespace

StatusOr<LoadedModel> LoadModelFile(const std::string& path, const LoadOptions& options) {
  const std::string where = "model '" + path + "'";
  FileDescriptor fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
    return InvalidArgument(where, " cannot be opened: ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(where, " is not a regular file");
  const std::string unparsable = where + " is not an ONNX model (the protobuf does not parse)";
  Loader loader(where, Dirname(path), options);
  // The file mapped read-only: its large inline weights are borrowed from the mapping (and
  // their pages given back once the session released them, as for external data).
  auto mapping = std::make_shared<FileMapping>();
  mapping->file = path;
  mapping->size = static_cast<size_t>(st.st_size);
  if (mapping->size > 0) {
    void* base = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (base != MAP_FAILED) mapping->base = base;
  }
  if (mapping->base != nullptr) {
    SourceFile source = Describe(path, st, options, loader.started_ns());
    OL_RETURN_IF_ERROR(loader.Fingerprint(fd.fd, &source));
    const PayloadOwner owner = [mapping](const uint8_t* data, size_t bytes) -> std::shared_ptr<void> {
      return BorrowRange(mapping, data, bytes);
    };
    StatusOr<LoadedModel> loaded = LoadSerialized(
        std::string_view(static_cast<const char*>(mapping->base), mapping->size), loader, owner, unparsable);
    if (loaded.ok()) {
      loaded->mapped_files.push_back(mapping);
      loaded->source_files.insert(loaded->source_files.begin(), source);
    }
    return loaded;
  }
  // Empty, or not mappable (a special file system): parsed from the descriptor in chunks.
  onnx::ModelProto model;
  SourceFile source = Describe(path, st, options, loader.started_ns());
  ContentHasher hasher;
  size_t read = 0;
  {
    FdStream stream(fd.fd, source.hashed ? &hasher : nullptr);
    google::protobuf::io::CopyingInputStreamAdaptor input(&stream, 1 << 20);
    if (!model.ParseFromZeroCopyStream(&input)) return InvalidArgument(unparsable);
    read = stream.bytes_read();
  }
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  source.size = read;
  if (source.hashed) source.content_hash = hasher.Finish();
  out.source_files.insert(out.source_files.begin(), std::move(source));
  return out;
}

// ---------------------------------------------------------------- detaching from the files
// The ranges that tensors still borrow are copied into anonymous memory that takes the file
// pages' place at the same addresses (mremap), a page span at a time: every pointer into
// them (kernels, numpy views, Tensor copies) stays valid and reads the same bytes, which no
// longer come from the file. Spans are whole pages (a range's partial end pages hold a
// neighbour's bytes, copied along unchanged); overlapping or touching spans merge, so the
// mapping splits into few pieces. Copied kChunk bytes at a time, each chunk's file pages
// leave the process as its copy arrives: resident memory grows by one chunk at most.
Status DetachMapping(FileMapping& mapping) {
  constexpr uintptr_t kChunk = uintptr_t{16} << 20;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::shared_ptr<void>> alive;  // kept alive while copied; dropped unlocked
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
  {
    std::lock_guard<std::mutex> lock(mapping.mu);
    if (mapping.detached) return Status::Ok();
    for (const FileMapping::Borrow& borrow : mapping.borrows) {
      std::shared_ptr<void> held = borrow.alive.lock();
      if (held == nullptr || borrow.bytes == 0) continue;
      const uintptr_t begin = reinterpret_cast<uintptr_t>(borrow.data) / page * page;
      const uintptr_t end = (reinterpret_cast<uintptr_t>(borrow.data) + borrow.bytes + page - 1) / page * page;
      spans.emplace_back(begin, end);
      alive.push_back(std::move(held));
    }
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<uintptr_t, uintptr_t>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  Status status = Status::Ok();
  {
    std::lock_guard<std::mutex> lock(mapping.mu);
    mapping.detached = true;  // from now on no range gives pages back (MappedRange)
    for (const auto& [begin, end] : merged) {
      for (uintptr_t at = begin; at < end && status.ok(); at += kChunk) {
        const size_t length = static_cast<size_t>(std::min(kChunk, end - at));
        void* copy = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (copy == MAP_FAILED) {
          status = ResourceExhausted("cannot copy ", length, " bytes of weights out of '", mapping.file,
                                     "': ", std::strerror(errno));
          break;
        }
        std::memcpy(copy, reinterpret_cast<const void*>(at), length);
        ::mprotect(copy, length, PROT_READ);
        if (::mremap(copy, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(at)) == MAP_FAILED) {
          status = ResourceExhausted("cannot put ", length, " bytes of weights copied out of '", mapping.file,
                                     "' in place: ", std::strerror(errno));
          ::munmap(copy, length);
        }
      }
    }
  }
  alive.clear();
  return status;
}

Status DetachFromFiles(const LoadedModel& model) {
  for (const std::weak_ptr<FileMapping>& file : model.mapped_files) {
    std::shared_ptr<FileMapping> mapping = file.lock();
    if (mapping != nullptr) OL_RETURN_IF_ERROR(DetachMapping(*mapping));
  }
  return Status::Ok();
}

StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, const std::string& base_dir, const LoadOptions& options,
                                     std::shared_ptr<const void> owner) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("the bytes (", bytes.size(), ") exceed protobuf's 2 GiB limit: store weights externally");
  }
  const std::string unparsable = "the bytes are not a serialized ONNX model (the protobuf does not parse)";
  Loader loader("the model bytes", base_dir, options);
  if (owner != nullptr) {
    const PayloadOwner borrow = [owner](const uint8_t*, size_t) { return std::const_pointer_cast<void>(owner); };
    return LoadSerialized(bytes, loader, borrow, unparsable);
  }
  // Nobody keeps the bytes alive: the parse copies each payload once, and the tensors that
  // borrow it alone keep it (a session that drops one initializer frees its bytes).
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return InvalidArgument(unparsable);
  LoadedModel out;
  OL_RETURN_IF_ERROR(loader.Load(model, &out));
  return out;
}

}  // namespace onnx_light
